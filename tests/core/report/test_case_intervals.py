"""Every accuracy interval of the report counts cases, not cells: a case's repeats are one
unit (target, benchmark rows, macro, frontier, decision breakdown)."""

import pytest

from pytest_srbench.core.plan.build import expand_repeats
from pytest_srbench.core.report.build import build_report
from pytest_srbench.core.report.frontier import frontier_point, macro_interval
from pytest_srbench.core.report.model import ReportModel
from pytest_srbench.core.stats import (
    accuracy_interval,
    case_interval,
    coverage_caveat,
    stratified_case_interval,
    wilson_interval,
)
from tests.core.helpers import call, case, manifest, result, run, target
from tests.core.report.feed import fed

CASES = [case("mmlu-pro", str(i)) for i in range(6)] + [
    case("gpqa-diamond", str(i)) for i in range(6, 10)
]
RIGHT = {"mmlu-pro/0", "mmlu-pro/1", "mmlu-pro/3", "gpqa-diamond/6"}
FAILED = "mmlu-pro/4"  # a failed cell counts wrong
PENDING = "gpqa-diamond/9"  # never dispatched: no row, no call
DECISION = {"mmlu-pro": "math", "gpqa-diamond": "science"}


def plan(repeats):
    targets = [target("t"), target("router", kind="mom", max_inference_calls=2, config_hash="cfg")]
    return manifest(expand_repeats(CASES, repeats), targets, repeats=repeats)


def rows(manifest_, outcome):
    """Result rows and subject calls of every planned cell but the pending case's, each cell
    right when ``outcome(original id, cell id)`` says so."""
    results, calls = [], []
    for c in manifest_.cases:
        original = c.metadata.get("repeat_of") or c.id
        if original == PENDING:
            continue
        for tgt in ("t", "router"):
            if original == FAILED:
                results.append(result(c.id, tgt, status="failed", correct=None, error="boom"))
            else:
                results.append(result(c.id, tgt, correct=outcome(original, c.id)))
            decision = DECISION[c.benchmark] if tgt == "router" else None
            calls.append(call(c.id, tgt, decision=decision, id=f"{c.id}-{tgt}"))
    return results, calls


def report_of(repeats, outcome=lambda original, _cell: original in RIGHT):
    manifest_ = plan(repeats)
    results, calls = rows(manifest_, outcome)
    report = build_report(manifest_, run(), results, calls)
    ReportModel.model_validate(report)
    return report


def intervals(report):
    """Every interval the report shows, by where it is shown."""
    out = {}
    for t in report["summary"]["targets"]:
        out[("target", t["id"])] = t["accuracy_ci95"]
        out[("macro", t["id"])] = t["macro_accuracy_ci95"]
        for d in t["decision_breakdown"]:
            out[("decision", t["id"], d["label"])] = d["accuracy_ci95"]
    for row in report["benchmarks"]:
        out[("benchmark", row["target_id"], row["benchmark"])] = row["accuracy_ci95"]
    for point in report["frontier"]["points"] + report["frontier"]["unplaced"]:
        out[("frontier", point["target_id"])] = point["quality_ci95"]
    return out


def test_identical_repeats_report_exactly_the_intervals_of_one_repeat():
    once = report_of(1)
    thrice = report_of(3)
    assert intervals(thrice) == intervals(once)
    assert len(intervals(once)) == 2 + 2 + 2 + 4 + 2 + 1  # targets, macros, decisions (+unknown)
    by_target = {t["id"]: t for t in thrice["summary"]["targets"]}
    t = by_target["t"]
    assert t["total"] == 30 and t["cases"] == 10 and t["accuracy_effective_cases"] == 10
    assert t["accuracy_interval_unit"] == "case"
    # 4 of 10 cases right, as 12 of 30 cells: Wilson over the 10 cases, not the 30 cells
    assert t["accuracy_ci95"] == accuracy_interval(4, 10) != accuracy_interval(12, 30)
    assert t["accuracy_ci95_worst_coverage"] == coverage_caveat(10)
    router = by_target["router"]
    labels = {d["label"]: d for d in router["decision_breakdown"]}
    assert labels["math"]["accuracy_ci95"] == accuracy_interval(3, 6)  # mmlu 0, 1, 3 of 6
    # science holds gpqa 6, 7, 8 (9 never ran): 1 of 3; the pending case is unknown, 0 of 1
    assert labels["science"]["accuracy_ci95"] == accuracy_interval(1, 3)
    assert labels["unknown"]["cases"] == 3 and labels["unknown"][
        "accuracy_ci95"
    ] == accuracy_interval(0, 1)


def test_disagreeing_repeats_are_clustered_by_case():
    # repeat 1 of every case is wrong, the others as RIGHT: a right case has 2 of 3 cells
    report = report_of(3, lambda original, cell: original in RIGHT and not cell.endswith("#r1"))
    t = next(t for t in report["summary"]["targets"] if t["id"] == "t")
    clusters = [(2, 3)] * 4 + [(0, 3)] * 6
    assert t["correct"] == 8 and t["total"] == 30
    assert t["accuracy_ci95"] == case_interval(clusters)
    assert 10 <= t["accuracy_effective_cases"] <= 30
    cells = wilson_interval(8, 30)
    assert cells is not None
    assert t["accuracy_ci95"][0] < cells[0] and t["accuracy_ci95"][1] > cells[1]


def test_macro_interval_is_the_frontier_interval_and_stratified_over_cases():
    report = report_of(3)
    t = next(t for t in report["summary"]["targets"] if t["id"] == "t")
    rows = [r for r in report["benchmarks"] if r["target_id"] == "t"]
    weights = report["plan"]["benchmark_weights"]
    # gpqa-diamond 1 of 4 cases (ω 0.15), mmlu-pro 3 of 6 (ω 0.10), each at its cases
    expected = stratified_case_interval([(0.15, 3, 12, 4.0), (0.10, 9, 18, 6.0)])
    assert macro_interval(rows, weights) == t["macro_accuracy_ci95"] == expected
    frontier = report["frontier"]
    point = next(p for p in frontier["points"] + frontier["unplaced"] if p["target_id"] == "t")
    assert point["quality_ci95"] == expected
    assert point["quality_ci95_worst_coverage"] is None  # two benchmarks: measured, no caveat
    assert report["frontier"]["quality_interval_method"] == "stratified-case-wilson"


def test_one_benchmark_macro_carries_that_benchmarks_caveat():
    rows = [{"benchmark": "scicode", "target_id": "t", "total": 3, "correct": 2, "cases": 3}]
    point = frontier_point("r", {"id": "t", "macro_accuracy": 2 / 3}, rows, {"scicode": 0.1})
    assert point["quality_ci95"] == accuracy_interval(2, 3)
    # Wilson over 3 cases covered ≥ 88.8 % (in 0.3–0.9); the printed interval ≥ 93 % anywhere
    assert point["quality_ci95_worst_coverage"] is None
    assert coverage_caveat(3) is None


def test_rows_from_an_older_report_fall_back_to_their_cells():
    # a report from before intervals over cases has no effective size: its cells stand in
    rows = [{"benchmark": "mmlu-pro", "target_id": "t", "total": 14, "correct": 9}]
    assert macro_interval(rows, {"mmlu-pro": 0.1}) == accuracy_interval(9, 14)
    assert macro_interval([{**rows[0], "correct": None}], {"mmlu-pro": 0.1}) is None


@pytest.mark.parametrize("repeats", [1, 3])
def test_preview_nulls_every_interval_field(repeats):
    manifest_ = plan(repeats).model_copy(update={"mode": "preview"})
    results = [result(c.id, "router", correct=None) for c in manifest_.cases]
    report = build_report(manifest_, run(), results, [])
    router = next(t for t in report["summary"]["targets"] if t["id"] == "router")
    for key in (
        "accuracy_ci95",
        "accuracy_effective_cases",
        "accuracy_ci95_worst_coverage",
        "macro_accuracy_ci95",
        "macro_accuracy_ci95_worst_coverage",
    ):
        assert router[key] is None, key
    ReportModel.model_validate(report)


def test_pending_cells_count_as_wrong_cells_of_their_cases():
    # case a: 2 rows (one right, one of its repeats wrong); case p: both cells pending (no row,
    # no call); case q: its one cell pending → cases {a: 1 of 2, p: 0 of 2, q: 0 of 1}
    rows_ = [result("b/a#r1", "t"), result("b/a#r2", "t", correct=False)]
    planned = ["b/a#r1", "b/a#r2", "b/p#r1", "b/p#r2", "b/q#r1"]
    case_of = {i: i.split("#")[0] for i in planned}
    metric = fed(planned, rows_, [], case_of=case_of)[0].metric("t")
    assert metric["cases"] == 3 and metric["pending"] == 3
    assert metric["accuracy_ci95"] == case_interval([(1, 2), (0, 2), (0, 1)])


def test_decision_rows_cluster_repeats_and_name_unobserved_cells():
    # case x: both repeats routed to math, one right; case y never ran (its 2 cells unknown)
    results_ = [result("b/x#r1", "r"), result("b/x#r2", "r", correct=False)]
    calls_ = [call(i, "r", decision="math", id=i) for i in ("b/x#r1", "b/x#r2")]
    planned = ["b/x#r1", "b/x#r2", "b/y#r1", "b/y#r2"]
    case_of = {i: i.split("#")[0] for i in planned}
    rows_ = fed(planned, results_, calls_, "r", case_of=case_of)[1].rows()
    by_label = {r["label"]: r for r in rows_}
    assert by_label["math"]["accuracy_ci95"] == case_interval([(1, 2)])
    # the unknown decision holds y's two cells: one case, 0 of 2 → Wilson over 1 case
    assert by_label["unknown"]["cases"] == 2
    assert by_label["unknown"]["accuracy_ci95"] == accuracy_interval(0, 1)
    assert by_label["unknown"]["accuracy_ci95"] != accuracy_interval(0, 2)  # not 2 cases
