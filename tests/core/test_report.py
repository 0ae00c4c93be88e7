"""The whole report: macro accuracy and score scope (example 4), report model validation."""

import pytest

from pytest_srbench.core.models import DatasetInfo
from pytest_srbench.core.report import build_report
from pytest_srbench.core.report_model import ReportModel
from tests.core.helpers import call, case, manifest, result, run, target


def small_plan(**extra):
    cases = [
        case("mmlu-pro", "0"),
        case("mmlu-pro", "1"),
        case("gpqa-diamond", "2"),
        case("gpqa-diamond", "3"),
        case("gpqa-diamond", "4"),
    ]
    return manifest(cases, [target("t")], **extra)


def test_example_4_macro_over_a_subset():
    plan = small_plan(dataset=DatasetInfo(profile="quick", seed=1, custom_subset=True))
    correct = {"mmlu-pro/0", "gpqa-diamond/2"}
    results = [result(c.id, "t", correct=c.id in correct) for c in plan.cases]
    calls = [call(c.id, "t") for c in plan.cases]
    report = build_report(plan, run(), results, calls)
    summary = report["summary"]["targets"][0]
    assert summary["macro_accuracy"] == pytest.approx(0.4)
    assert summary["sr_bench_score"] is None
    assert (
        summary["score_scope"]
        == "selected benchmark subset; renormalized fixed weights; profile=quick; custom task subset"
    )
    ReportModel.model_validate(report)


def test_report_rows_and_cells():
    plan = small_plan()
    results = [result(c.id, "t", correct=True) for c in plan.cases[:4]]
    report = build_report(plan, run("failed"), results, [call(c.id, "t") for c in plan.cases[:4]])
    assert [row["benchmark"] for row in report["benchmarks"]] == ["gpqa-diamond", "mmlu-pro"]
    assert report["summary"]["targets"][0]["pending"] == 1
    assert report["summary"]["total_spend_usd"] is None
    assert report["cells"][-1]["status"] == "pending"
    assert report["summary"]["wall_time_s"] == pytest.approx(10.5)
    assert any("Run is incomplete" in line for line in report["limitations"])
    ReportModel.model_validate(report)


def test_failure_is_inferred_from_saved_results_when_no_event():
    plan = small_plan()
    results = [result(c.id, "t") for c in plan.cases]
    results[2] = result(
        plan.cases[2].id,
        "t",
        status="failed",
        correct=None,
        error="Target HTTP 503",
        finished_at="2026-11-30T00:00:05+00:00",
    )
    report = build_report(plan, run("failed"), results, [call(c.id, "t") for c in plan.cases])
    assert report["failure"] == {
        "case_id": plan.cases[2].id,
        "target_id": "t",
        "reason": "Target HTTP 503",
        "inferred_from_saved_results": True,
    }


def test_full_suite_complete_target_gets_a_score_and_a_recovery_child_never_does():
    from pytest_srbench.core.protocol import BENCHMARK_WEIGHTS

    cases = [case(benchmark, "1") for benchmark in BENCHMARK_WEIGHTS]
    plan = manifest(cases, [target("t")])
    results = [result(c.id, "t", correct=c.benchmark != "hle") for c in cases]
    calls = [call(c.id, "t") for c in cases]
    summary = build_report(plan, run(), results, calls)["summary"]["targets"][0]
    assert summary["sr_bench_score"] == pytest.approx(0.85)
    assert summary["score_scope"] == "full sr-bench 1.0; profile=quick"
    child = manifest(cases, [target("t")], recovery={"parent_run_id": "run-x"})
    assert (
        build_report(child, run(), results, calls)["summary"]["targets"][0]["sr_bench_score"]
        is None
    )


def test_extension_benchmark_scope_label():
    plan = manifest(
        [case("mmlu-pro", "1"), case("my-ext", "1")],
        [target("t")],
        extension_weights={"my-ext": 1.0},
    )
    report = build_report(plan, run(), [], [])
    assert report["summary"]["targets"][0]["score_scope"].startswith(
        "extension diagnostic; normalized adapter weights"
    )
