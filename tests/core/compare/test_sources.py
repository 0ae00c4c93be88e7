"""Comparisons across data sources: refused with both sources named, or flagged loudly when
allowed; reports from before data origins still load and compare; the gate says it too."""

from __future__ import annotations

import pytest

from pytest_srbench.core.compare.gate import evaluate_gate
from pytest_srbench.core.compare.runs import ComparisonError, RunSide, compare, compare_many
from pytest_srbench.core.report.model import ReportModel
from tests.core.compare.helpers import ORIGINAL, RELEASED, report_on, strip_origins

SYNTHETIC = {"kind": "synthetic", "generator": "pytest-srbench 0.1.0 datasets synth", "seed": 1}


def run_on(run_id: str, gpqa: dict | None, mmlu: dict | None = ORIGINAL) -> RunSide:
    return RunSide.from_report(report_on(run_id, gpqa, mmlu))


@pytest.mark.parametrize(
    ("candidate", "says"),
    [
        (ORIGINAL, "original: original smoke items written for pytest-srbench in the candidate "
                   "cand (different kinds of data)"),
        ({**RELEASED, "revision": "f" * 40}, f"released: {RELEASED['source']} @ {'f' * 40} (1 "
                                             "file pinned by sha256) in the candidate cand "
                                             "(different released revisions)"),
        ({**RELEASED, "files": {"gpqa_diamond.csv": "0" * 64}}, "(different released file hashes)"),
    ],
)  # fmt: skip
def test_a_benchmark_from_other_data_is_refused_naming_both_sources(candidate, says):
    with pytest.raises(ComparisonError) as caught:
        compare(run_on("base", RELEASED), run_on("cand", candidate))
    message = str(caught.value)
    assert message.startswith(
        "Cannot compare runs whose cases come from different data sources: gpqa-diamond is "
        f"released: {RELEASED['source']} @ {RELEASED['revision']} (1 file pinned by sha256) in "
        "the baseline base but "
    )
    assert says in message
    assert "srbench compare --allow-mixed-sources" in message


def test_synthetic_seeds_and_several_benchmarks_are_named():
    other = {**SYNTHETIC, "seed": 2}
    with pytest.raises(ComparisonError, match="different synthetic seeds"):
        compare(run_on("base", SYNTHETIC), run_on("cand", other))
    with pytest.raises(ComparisonError, match="; mmlu-pro differ too; "):
        compare(run_on("base", SYNTHETIC, SYNTHETIC), run_on("cand", other, ORIGINAL))


def test_allowed_mixed_sources_are_flagged_in_the_result():
    base, cand = run_on("base", RELEASED), run_on("cand", ORIGINAL)
    result = compare_many(base, [cand], allow_mixed_sources=True)
    assert result["mixed_sources"] is True
    sources = result["candidates"][0]["data_sources"]
    assert (sources["baseline_kind"], sources["candidate_kind"]) == ("mixed", "original")
    assert sources["mixed"] and sources["allowed"]
    (difference,) = sources["differences"]
    assert difference == {
        "benchmark": "gpqa-diamond",
        "reason": "different kinds of data",
        "baseline": RELEASED,
        "candidate": ORIGINAL,
    }
    assert sources["warning"].startswith("MIXED DATA SOURCES — this comparison pairs different")
    same = compare_many(base, [run_on("cand2", RELEASED)])
    assert same["mixed_sources"] is False
    assert same["candidates"][0]["data_sources"]["warning"] is None


def test_a_report_from_before_data_origins_loads_and_compares():
    old = ReportModel.model_validate(strip_origins(report_on("base", RELEASED)))
    loaded = old.model_dump(mode="json")  # as a report file is read (defaults filled in)
    assert loaded["data_sources"] is None and loaded["plan"]["data_sources"] is None
    assert loaded["summary"]["targets"][0]["score_comparable"] is None
    assert all(row["data_source"] is None for row in loaded["benchmarks"])
    side = RunSide.from_report(loaded)
    assert side.data_sources == {}
    result = compare(side, run_on("cand", ORIGINAL))  # one side unknown: nothing to refuse
    assert result["data_sources"]["baseline_kind"] == "unknown"
    assert result["data_sources"]["mixed"] is False
    assert compare(run_on("new", SYNTHETIC), side)["data_sources"]["candidate_kind"] == "unknown"


def test_the_gate_fails_as_not_comparable_or_says_mixed_sources():
    base, cand = run_on("base", RELEASED), run_on("cand", ORIGINAL)
    refused = evaluate_gate(base, cand)
    assert refused["passed"] is False
    assert refused["reason"].startswith(
        "baseline not comparable: Cannot compare runs whose cases come from different data"
    )
    allowed = evaluate_gate(base, cand, allow_mixed_sources=True)
    assert "MIXED DATA SOURCES" in allowed["line"]
    assert allowed["comparison"]["data_sources"]["mixed"] is True
