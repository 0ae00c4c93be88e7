"""What a report says about its data and its score, for each data source and the mixed case:
only all nine benchmarks of released data at the profile's sr-bench counts make an sr-bench 1.0
score; every other macro over all nine keeps its number under a not-comparable label."""

import pytest

from pytest_srbench.core.report.model import ReportModel
from tests.core.report.helpers import ORIGINS, every, report_of, smoke_plan


def test_released_data_at_the_profile_counts_is_an_sr_bench_score():
    report, summary = report_of(smoke_plan(every("released")))
    assert summary["sr_bench_score"] == summary["macro_accuracy"] is not None
    assert summary["score_comparable"] is True
    assert summary["score_scope"] == "sr-bench 1.0; profile=smoke"
    assert report["data_sources"]["comparable"] is True
    assert report["data_sources"]["kind"] == "released"
    assert report["data_sources"]["label"].startswith("sr-bench 1.0 data: all nine benchmarks")
    assert all(row["data_source"] == ORIGINS["released"] for row in report["benchmarks"])
    assert report["plan"]["data_sources"]["hle"] == ORIGINS["released"]
    assert not any("Where the cases came from" in line for line in report["limitations"])


def test_a_release_short_of_sr_benchs_data_is_not_sr_bench():
    """tau3 fetched with one of sr-bench's three domains: released, pinned, and not sr-bench."""
    plan = smoke_plan(every("released"))
    gap = "airline only; sr-bench 1.0's tau3 spans the airline, retail and telecom-base domains"
    for suite in plan.dataset.suites:
        if suite["benchmark"] == "tau3":
            suite["origin"] = {**ORIGINS["released"], "srbench_gap": gap}
    report, summary = report_of(plan)
    assert summary["score_comparable"] is False
    assert summary["sr_bench_score"] == summary["macro_accuracy"] is not None
    assert "not comparable with sr-bench 1.0" in summary["score_scope"]
    assert report["data_sources"]["kind"] == "released"
    assert report["data_sources"]["comparable"] is False
    assert report["data_sources"]["label"].endswith(f"(tau3: {gap})")


@pytest.mark.parametrize("kind", ["original", "synthetic", "user"])
def test_other_data_keeps_the_number_under_a_not_comparable_label(kind):
    report, summary = report_of(smoke_plan(every(kind)))
    assert summary["sr_bench_score"] == summary["macro_accuracy"] is not None
    assert summary["score_comparable"] is False
    assert summary["score_scope"] == (
        f"macro score over {kind} data — not comparable with sr-bench 1.0; profile=smoke"
    )
    assert not summary["score_scope"].startswith("sr-bench 1.0")
    sources = report["data_sources"]
    assert (sources["kind"], sources["kinds"], sources["comparable"]) == (kind, [kind], False)
    assert sources["label"] == f"{kind} data — scores are not comparable with sr-bench 1.0"
    assert set(sources["benchmarks"].values()) == {kind}
    assert {row["data_source"]["kind"] for row in report["benchmarks"]} == {kind}
    assert any(sources["label"] in line for line in report["limitations"])


def test_mixed_data_names_every_kind():
    kinds = every("released") | {"tau3": "synthetic", "hle": "original"}
    report, summary = report_of(smoke_plan(kinds))
    assert summary["score_comparable"] is False
    assert summary["score_scope"] == (
        "macro score over mixed data (original, released, synthetic) — not comparable with "
        "sr-bench 1.0; profile=smoke"
    )
    assert report["data_sources"]["kind"] == "mixed"
    assert report["data_sources"]["benchmarks"]["tau3"] == "synthetic"


def test_released_data_off_the_profile_counts_or_recovered_is_not_sr_bench():
    _, fewer = report_of(smoke_plan(every("released"), drop=1))  # 13 of mmlu-pro's 14
    assert fewer["score_comparable"] is False
    assert fewer["score_scope"].startswith("macro score over released data — not comparable")
    custom = smoke_plan(every("released"))
    custom = custom.model_copy(
        update={"dataset": custom.dataset.model_copy(update={"custom_subset": True})}
    )
    report, subset = report_of(custom)
    assert subset["score_comparable"] is False
    assert subset["score_scope"].endswith("; profile=smoke; custom task subset")
    assert report["data_sources"]["comparable"] is False
    report, child = report_of(smoke_plan(every("released"), recovery={"parent_run_id": "run-p"}))
    assert child["sr_bench_score"] is None and child["score_comparable"] is False
    assert report["data_sources"]["comparable"] is False


def test_a_subset_and_a_plan_without_origins_say_their_data():
    _, subset = report_of(smoke_plan(every("released"), benchmarks=["gpqa-diamond", "hle"]))
    assert subset["sr_bench_score"] is None and subset["score_comparable"] is False
    assert subset["score_scope"] == (
        "selected benchmark subset; renormalized fixed weights; released data; profile=smoke"
    )
    report, old = report_of(smoke_plan(every(None)))
    assert old["score_comparable"] is False
    assert old["score_scope"].startswith("macro score over data of unknown origin")
    assert report["data_sources"]["kind"] == "unknown"
    assert all(row["data_source"] is None for row in report["benchmarks"])


def test_a_preview_has_no_comparable_score():
    plan = smoke_plan(every("released")).model_copy(update={"mode": "preview"})
    report, summary = report_of(plan)
    assert summary["sr_bench_score"] is None and summary["score_comparable"] is False
    assert report["data_sources"]["comparable"] is False


def test_the_json_form_records_only_each_kinds_fields():
    report, _ = report_of(smoke_plan(every("original")))
    dumped = ReportModel.model_validate(report).model_dump(mode="json")
    assert dumped["benchmarks"][0]["data_source"] == ORIGINS["original"]
