"""The plugin end to end with pytester: smoke run, inertness, xdist parity, failures, errors."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.plugin.helpers import failing_target

pytestmark = pytest.mark.slow

FAULTY_CONFIG = """
[tool.srbench]
default_targets = ["sim-large", "broken"]
""" + failing_target("broken")


def run_json(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-json=report.json", *args
    )
    report = json.loads((pytester.path / "report.json").read_text())
    return result, report


def test_smoke_profile_runs_every_cell_against_two_simulated_targets(
    pytester, tmp_path_factory, monkeypatch
):
    scratch = tmp_path_factory.mktemp("tmpdir")  # the run's TMPDIR: it must leave it empty
    monkeypatch.setenv("TMPDIR", str(scratch))
    result, report = run_json(pytester, "--srbench-profile=smoke")
    assert result.ret == 0
    assert sorted(path.name for path in scratch.iterdir()) == []  # no simulator scratch left
    result.stdout.fnmatch_lines(
        ["*srbench report*", "*sim-large (sim)*", "*sim-small (sim)*", "* correct, * wrong in *"]
    )
    assert report["version"] == "pytest-srbench-report-1"
    assert report["status"] == "completed"
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    assert set(targets) == {"sim-large", "sim-small"}
    for metric in targets.values():
        assert metric["total"] == 36 and metric["complete"] is True and metric["simulated"] is True
        assert metric["tokens"] is not None and metric["cost_usd"] is not None
        assert metric["ttft_p50_s"] is not None and metric["latency_p95_s"] is not None
        assert metric["latency_p50_s"] <= metric["latency_p90_s"] <= metric["latency_p95_s"]
    assert targets["sim-large"]["accuracy"] > targets["sim-small"]["accuracy"]
    assert targets["sim-large"]["cost_usd"] > targets["sim-small"]["cost_usd"]
    assert len(report["cells"]) == 72
    assert {row["benchmark"] for row in report["benchmarks"]} == {
        "mmlu-pro",
        "gpqa-diamond",
        "hle",
        "livecodebench",
        "scicode",
        "terminal-bench-2.1",
        "simpleqa-verified",
        "arc-agi-2",
        "tau3",
    }
    # all nine, complete, not a recovery: a full-set score, but over the shipped original
    # items, so never labelled sr-bench 1.0
    for metric in targets.values():
        assert metric["sr_bench_score"] == metric["macro_accuracy"] is not None
        assert metric["score_scope"] == (
            "macro score over original data — not comparable with sr-bench 1.0; profile=smoke"
        )
        assert metric["score_comparable"] is False
    assert report["data_sources"]["kind"] == "original"
    assert report["data_sources"]["comparable"] is False
    result.stdout.fnmatch_lines(
        ["data: original data — scores are not comparable with sr-bench 1.0",
         "sim-large (sim): macro accuracy 0.* · score 0.* · macro score over original data — "
         "not comparable with sr-bench 1.0; profile=smoke"]
    )  # fmt: skip
    assert "sr_bench_score 0." not in result.stdout.str()
    for metric in targets.values():
        assert metric["evaluation_cost_usd"] > 0  # judge and user-simulator spend, apart
    assert (pytester.path / ".srbench" / "journal.sqlite3").exists()
    assert (pytester.path / ".srbench" / "runs" / report["run_id"] / "report.json").exists()


def test_installed_but_unused_changes_nothing(pytester):
    pytester.makepyfile(test_plain="def test_one():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["collected 1 item"])
    assert "srbench report" not in result.stdout.str()
    assert not (pytester.path / ".srbench").exists()
    without = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:srbench")
    assert without.ret == result.ret


# Ownership and determinism under xdist, over a sandboxed benchmark (livecodebench), a judged
# one (simpleqa-verified) and a multi-turn agent loop with a user simulator (tau3): 20 cells.
PARITY = (
    "--srbench-profile=smoke",
    "--srbench-benchmark=livecodebench",
    "--srbench-benchmark=simpleqa-verified",
    "--srbench-benchmark=tau3",
)


def test_xdist_and_single_process_give_identical_reports(pytester):
    _, single = run_json(pytester, *PARITY, "-p", "no:xdist")
    (pytester.path / "report.json").unlink()
    result, double = run_json(pytester, *PARITY, "-n", "2")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*2 workers*"])
    assert double["plan_sha256"] == single["plan_sha256"]
    keys = (
        "total",
        "completed",
        "failed",
        "correct",
        "accuracy",
        "accuracy_ci95",
        "tokens",
        "cost_usd",
        "request_count",
    )
    for a, b in zip(single["summary"]["targets"], double["summary"]["targets"], strict=True):
        assert {k: a[k] for k in keys} == {k: b[k] for k in keys}
    timing = ("latency_s", "ttft_s")

    def outcomes(report: dict) -> list[dict]:
        return [{k: v for k, v in cell.items() if k not in timing} for cell in report["cells"]]

    assert len(single["cells"]) == 20
    assert outcomes(single) == outcomes(double)
    assert double["provenance"]["runner"]["processes"] == 2


def test_wrong_answers_do_not_fail_but_show_in_verbose_output(pytester):
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",  # sim-small gets some of its 14 cases right, some wrong
        "-v",
        "--srbench-target=sim-small",
    )
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["srbench::suite[[]mmlu-pro/smoke-*-sim-small[]] CORRECT*", "*WRONG*"]
    )


def test_a_failing_target_fails_its_cells_with_one_line_reasons(pytester):
    pytester.makefile(".toml", pyproject=FAULTY_CONFIG)
    result, report = run_json(
        pytester, "--srbench-profile=smoke", "--srbench-benchmark=gpqa-diamond"
    )
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*srbench::suite[[]gpqa-diamond/smoke-001-broken[]] could not be graded — failed: Target HTTP 500*"
        ]
    )
    assert report["status"] == "failed"
    metrics = {t["id"]: t for t in report["summary"]["targets"]}
    assert metrics["broken"]["failed"] == 4 and metrics["broken"]["accuracy"] == 0
    assert metrics["broken"]["cost_usd"] is None and metrics["broken"]["known_cost_usd"] == 0
    assert metrics["sim-large"]["cost_usd"] is not None
    assert report["failure"]["reason"] == "Target HTTP 500: simulated internal error"
    failed_cells = [c for c in report["cells"] if c["target_id"] == "broken"]
    assert failed_cells and all(c["latency_s"] is None for c in failed_cells)  # unknown, not 0
    answered = [c for c in report["cells"] if c["target_id"] == "sim-large"]
    assert all(c["latency_s"] > 0 for c in answered)
    from pytest_srbench.store import open_store

    store = open_store(pytester.path / ".srbench")
    calls = store.calls(report["run_id"])
    assert len(calls) == 8
    broken = [c for c in calls if c["target_id"] == "broken"]
    assert all(c["status"] == "failed" and store.read_evidence(c["evidence"]) for c in broken)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--srbench-profile=smoke", "--srbench-target=nope"], "*unknown target(s) nope*"),
        (
            ["--srbench-profile=quick"],
            [
                "*9 benchmarks have too few cases for this profile:",
                "*mmlu-pro: profile 'quick' needs 500 cases, but the suite has 14 in all",
                "*`srbench datasets fetch --profile quick`*",
                "*srbench datasets synth --profile quick*",
            ],
        ),
        (["--srbench-benchmark=no-such-bench"], "*no adapter for benchmark 'no-such-bench'*"),
    ],
)
def test_usage_errors_are_specific(pytester, args, message):
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(message if isinstance(message, list) else [message])


def test_the_shortfalls_advice_to_pass_a_limit_works(pytester):
    """The shipped suites are short of the quick profile (the error above says "or use
    --srbench-limit"): with a limit they reach, the quick profile's first cases run, labelled
    a custom subset."""
    result, report = run_json(
        pytester, "--srbench-profile", "quick", "--srbench-limit", "2",
        "--srbench-benchmark", "mmlu-pro", "--srbench-benchmark", "hle",
    )  # fmt: skip
    assert result.ret == 0, (result.stdout.str() + result.stderr.str())[-3000:]
    planned = report["plan"]["cases"]
    assert sorted({case["benchmark"] for case in planned}) == ["hle", "mmlu-pro"]
    assert len(planned) == 4 and report["profile"] == "quick"
    assert report["provenance"]["custom_subset"] is True


def test_malformed_config_is_a_usage_error(pytester):
    pytester.makefile(".toml", srbench="concurrency = 'many'\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-profile=smoke")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*srbench.toml: invalid [[]tool.srbench[]] configuration: concurrency*"]
    )


def test_keyword_selection_freezes_a_labelled_subset(pytester):
    result, report = run_json(pytester, "--srbench-profile=smoke", "-k", "gpqa and sim-large")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["collected 72 items / 68 deselected / 4 selected"])
    assert [t["id"] for t in report["summary"]["targets"]] == ["sim-large"]
    assert report["summary"]["planned_cells"] == 4
    assert "custom task subset" in report["summary"]["targets"][0]["score_scope"]


def test_limit_and_seed_are_frozen_in_the_plan(pytester):
    # mmlu-pro has 14 smoke cases, scicode 1: the limit takes min(2, count) per benchmark
    args = ("--srbench-benchmark=mmlu-pro", "--srbench-benchmark=scicode")
    _, first = run_json(pytester, *args, "--srbench-limit=2", "--srbench-seed=7")
    assert first["seed"] == 7 and first["summary"]["planned_cells"] == 2 * (2 + 1)
    (pytester.path / "report.json").unlink()
    _, second = run_json(pytester, *args, "--srbench-limit=2", "--srbench-seed=7")
    assert second["plan_sha256"] == first["plan_sha256"] and second["run_id"] != first["run_id"]


def test_a_project_suite_adds_an_extension_benchmark(pytester):
    suite = pytester.path / "suites" / "my-quiz"
    suite.mkdir(parents=True)
    rows = [
        {
            "question_id": f"q{i}",
            "question": f"Q{i}?",
            "options": ["x", "y", "z", "w"],
            "answer": "B",
            "category": "c",
        }
        for i in range(3)
    ]
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    (suite / "cases.jsonl").write_bytes(body)
    import hashlib

    meta = {
        "benchmark": "my-quiz",
        "version": "1",
        "source": "test",
        "revision": "r1",
        "sha256": hashlib.sha256(body).hexdigest(),
        "count": 3,
    }
    (suite / "suite.json").write_text(json.dumps(meta))
    pytester.makeconftest(
        textwrap.dedent(
            """
        from pytest_srbench.benchmarks.mcq import MmluProAdapter

        class MyQuiz(MmluProAdapter):
            benchmark = "my-quiz"

        def pytest_srbench_adapters(registry, config):
            registry.register(MyQuiz())
        """
        )
    )
    result, report = run_json(pytester, "--srbench-benchmark=my-quiz")
    assert result.ret == 0
    assert report["summary"]["planned_cells"] == 6
    assert report["summary"]["targets"][0]["score_scope"].startswith("extension diagnostic")
