"""Option values are options: a path-valued ``--srbench-*`` option works written
``--opt=VALUE``; written ``--opt VALUE`` it works where pytest's early parsing leaves the rootdir
alone, and is refused in one line naming ``--opt=VALUE`` where it would have moved it (the
project's configuration would silently go unread). Every command the product prints for a
person to run is run here exactly as printed."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_srbench.core.commands import pytest_recover_command, srbench_command

pytestmark = pytest.mark.slow

SMALL_ONLY = '[tool.srbench]\ndefault_targets = ["sim-small"]\n'


def runs(store: Path) -> list[str]:
    folder = store / "runs"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


@pytest.mark.parametrize("workers", [(), ("-n", "2")])
def test_a_spaced_store_path_outside_the_project_is_refused_naming_the_equals_form(
    pytester, tmp_path, workers
):
    pytester.makefile(".toml", pyproject=SMALL_ONLY)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", *workers, "--srbench-profile=smoke",
        "--srbench-benchmark=gpqa-diamond", "--srbench-store", str(outside),
    )  # fmt: skip
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output[-3000:]
    assert f"write it --srbench-store={outside}" in output
    assert "Traceback" not in output and runs(outside) == []  # nothing ran, nothing stored
    fixed = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", *workers, "--srbench-profile=smoke",
        "--srbench-benchmark=gpqa-diamond", f"--srbench-store={outside}",
        "--srbench-json=report.json",
    )  # fmt: skip
    assert fixed.ret == 0, fixed.stdout.str()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    assert [t["id"] for t in report["summary"]["targets"]] == ["sim-small"]  # config read
    assert len(runs(outside)) == 1


def test_a_spaced_path_that_leaves_the_rootdir_alone_is_the_options_value(pytester):
    pytester.makefile(".toml", pyproject=SMALL_ONLY)
    (pytester.path / "mystore").mkdir()
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=gpqa-diamond",
        "--srbench-store", "mystore", "--srbench-json", "report.json",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert len(runs(pytester.path / "mystore")) == 1
    report = json.loads((pytester.path / "report.json").read_text())
    assert [t["id"] for t in report["summary"]["targets"]] == ["sim-small"]


def test_a_spaced_baseline_outside_the_project_is_refused_too(pytester, tmp_path):
    pytester.makefile(".toml", pyproject=SMALL_ONLY)
    baseline = tmp_path / "main.json"
    baseline.write_text("{}")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-baseline", str(baseline)
    )
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"write it --srbench-baseline={baseline}" in output


def test_printed_commands_are_spelled_for_a_shell():
    assert pytest_recover_command("my plan.json", "k1") == (
        "pytest '--srbench-recover=my plan.json' --srbench-run-key=k1"
    )
    assert pytest_recover_command("p.json", "k", store="/s", acknowledge_new_attempt=True) == (
        "pytest --srbench-recover=p.json --srbench-run-key=k --srbench-store=/s "
        "--srbench-acknowledge-new-attempt"
    )
    assert srbench_command(None, "finalize", "run-1") == "srbench finalize run-1"
    assert srbench_command("/a b", "finalize", "run-1") == "srbench '--store=/a b' finalize run-1"


def run_printed(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """A printed command run as a shell would split it (``srbench`` and ``pytest`` from this
    interpreter)."""
    words = shlex.split(command)
    program = {"srbench": "pytest_srbench", "pytest": "pytest"}[words[0]]
    return subprocess.run(
        [sys.executable, "-m", program, *words[1:]], cwd=cwd, capture_output=True, text=True
    )


FAILS_AFTER_ITS_CALL = """
import pytest


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target):
    await srbench_target.ask(srbench_case.messages)  # a call that completed, with its cost
    raise RuntimeError("the app broke after the model answered")
"""


def test_a_failed_mode_recovery_prints_the_acknowledgement_and_runs_as_printed(pytester):
    """``--mode failed`` re-attempts cells that already spent money: the printed pytest
    command carries the acknowledgement ``srbench recover`` was given, and the store named."""
    pytester.makepyfile(test_app=FAILS_AFTER_ITS_CALL)
    root = pytester.path
    first = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-target=sim-large",
        "--srbench-store=elsewhere",
    )  # fmt: skip
    assert first.ret == 1  # failed cells
    (run_id,) = runs(root / "elsewhere")
    srbench = [sys.executable, "-m", "pytest_srbench", "--store=elsewhere"]
    planned = subprocess.run([*srbench, "recover-plan", run_id, "--mode", "failed",
                              "--output", "plan.json"], cwd=root, capture_output=True, text=True)  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    then = planned.stdout.strip().splitlines()[-1].split("then: ", 1)[1]
    assert (
        then == f"srbench --store=elsewhere recover {run_id} --plan=plan.json --idempotency-key=KEY"
    )
    created = run_printed(then.replace("KEY", "again") + " --acknowledge-new-attempt", root)
    assert created.returncode == 0, created.stderr
    printed = created.stdout.strip().splitlines()[-1].removeprefix("run it with: ")
    assert printed == (
        "pytest --srbench-recover=plan.json --srbench-run-key=again --srbench-store=elsewhere "
        "--srbench-acknowledge-new-attempt"
    )
    child = run_printed(printed, root)
    output = child.stdout + child.stderr
    assert child.returncode == 1, output[-3000:]  # the cells failed again: counted, not refused
    assert "srbench report" in output and "INTERNALERROR" not in output


def test_the_shard_note_names_the_store_and_runs_as_printed(pytester):
    root = pytester.path
    first = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=gpqa-diamond",
        "--srbench-run-key=ci-1", "--srbench-shard=1/2", "--srbench-store=shared",
    )  # fmt: skip
    assert first.ret == 0, first.stdout.str()[-3000:]
    note = next(
        line for line in first.stdout.lines if "the report is written by the last shard" in line
    )
    printed = note.split("`")[1]
    (run_id,) = runs(root / "shared")
    assert printed == f"srbench --store={root / 'shared'} finalize {run_id}"
    finalized = run_printed(printed, root)
    assert finalized.returncode == 0, finalized.stderr
    assert f"run {run_id} · interrupted" in finalized.stdout  # shard 2/2 never started


def test_the_report_write_hint_runs_as_printed(pytester):
    (pytester.path / "afile").write_text("not a folder")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=gpqa-diamond",
        "--srbench-json=afile/r.json",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    line = next(line for line in result.stdout.lines if "was not written" in line)
    printed = line.split("saved in the store (", 1)[1].removesuffix(" writes it)")
    written = run_printed(printed.replace("PATH", "again.json"), pytester.path)
    assert written.returncode == 0, written.stderr
    assert json.loads((pytester.path / "again.json").read_text())["status"] == "completed"
