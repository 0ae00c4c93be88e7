"""Paired comparison: worked examples 14-22 of reference/report-and-accounting.md §10."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_srbench.core.compare.runs import ComparisonError, RunSide, compare
from pytest_srbench.core.models import Limits, Prices, Run
from pytest_srbench.core.plan.build import expand_repeats
from pytest_srbench.core.report.build import build_report
from tests.core.compare.helpers import CASES, ids, side
from tests.core.helpers import call, manifest, result, target


def test_example_14_tie_break_by_cost() -> None:
    for order in (["expensive", "cheap"], ["cheap", "expensive"]):
        correct = {"expensive": ids(3), "cheap": ids(0)}
        base = side(
            "base",
            {k: correct[k] for k in order},
            {"expensive": 8.0, "cheap": 2.0},
        )
        cand = side("cand", {"cand": ids(0)}, {"cand": 1.0})
        out = compare(base, cand)
        assert out["baseline_tied_best_target_ids"] == ["cheap", "expensive"]
        assert out["baseline_selected_target_id"] == "cheap"
        assert out["baseline_cost_comparison_eligible"] is True
        assert out["baseline_cost_comparison_reason"] is None
        row = out["comparisons"][0]
        assert row["quality_delta"] == 0
        assert row["subject_cost_saving_percent"] == 50
        assert row["total_cost_saving_percent"] == 50


@pytest.mark.parametrize(
    ("totals", "selected", "eligible"),
    [
        ({"a": None, "z": 2.0}, "z", False),
        ({"a": None, "z": None}, "a", False),
        ({"a": 2.0, "z": 2.0}, "a", True),
    ],
)
def test_example_15_tie_with_unknown_totals(
    totals: dict[str, float | None], selected: str, eligible: bool
) -> None:
    base = side("base", {"a": ids(0), "z": ids(0)}, totals)
    cand = side("cand", {"cand": ids(0)}, {"cand": 1.0})
    out = compare(base, cand)
    assert out["baseline_selected_target_id"] == selected
    assert out["baseline_cost_comparison_eligible"] is eligible
    row = out["comparisons"][0]
    if not eligible:
        assert out["baseline_cost_comparison_reason"].startswith("At least one strongest")
        assert row["subject_cost_saving_percent"] is None
        assert row["total_cost_saving_percent"] is None
        assert row["cache_neutral_cost_saving_percent"] is None
        assert row["total_cost_comparison_reason"] == out["baseline_cost_comparison_reason"]


def test_tie_break_prefers_the_lowest_subject_cost_not_total_spend() -> None:
    """The results guide's rule (a seed divergence from sr-bench's total-spend key).

    Both baseline singles answer case 0 only, so their exact quality ties.
      judge-heavy: subject 2.0 + judge 2.0 = total 4.0
      judge-light: subject 3.0 + judge 0.0 = total 3.0
    By total spend judge-light (3.0 < 4.0) would win; by subject cost judge-heavy does
    (2.0 < 3.0). Savings stay eligible: both totals are known.
    A candidate with subject 1.0 and no judge (total 1.0) saves
      subject: (1 - 1.0 / 2.0) * 100 = 50 %;  total: (1 - 1.0 / 4.0) * 100 = 75 %."""
    base = side(
        "base",
        {"judge-heavy": ids(0), "judge-light": ids(0)},
        {"judge-heavy": 2.0, "judge-light": 3.0},
        evaluation={"judge-heavy": 2.0, "judge-light": 0.0},
    )
    assert [t["total_spend_usd"] for t in base.targets] == [4.0, 3.0]
    out = compare(base, side("cand", {"cand": ids(0)}, {"cand": 1.0}))
    assert out["baseline_tied_best_target_ids"] == ["judge-heavy", "judge-light"]
    assert out["baseline_selected_target_id"] == "judge-heavy"
    assert out["baseline_tie_policy"].startswith("complete subject cost first")
    assert out["baseline_cost_comparison_eligible"] is True
    row = out["comparisons"][0]
    assert row["subject_cost_saving_percent"] == 50
    assert row["total_cost_saving_percent"] == 75


def test_tie_break_by_subject_cost_keeps_savings_eligibility_on_total_spend() -> None:
    """cheap-subject has the lowest complete subject cost (1.0 < 3.0) and is selected, but its
    judge's spend is unknown, so its total spend is null: savings stay unknown."""
    base = side(
        "base",
        {"cheap-subject": ids(0), "dear-subject": ids(0)},
        {"cheap-subject": 1.0, "dear-subject": 3.0},
        evaluation={"cheap-subject": None},
    )
    out = compare(base, side("cand", {"cand": ids(0)}, {"cand": 0.5}))
    assert out["baseline_selected_target_id"] == "cheap-subject"
    assert out["baseline_cost_comparison_eligible"] is False
    assert out["baseline_cost_comparison_reason"].startswith("At least one strongest")
    assert out["comparisons"][0]["subject_cost_saving_percent"] is None


def priced_side(run_id: str, model: str, repeats: int, cases: list[Any] | None = None) -> RunSide:
    """One target answering every cell right, each subject call costing 0.002."""
    cases = cases or expand_repeats(CASES, repeats)
    plan = manifest(cases, [target(model)], repeats=repeats)
    results = [result(c.id, model) for c in cases]
    calls = [call(c.id, model, cost=0.002) for c in cases]
    at = "2026-11-30T00:00:00+00:00"
    run = Run(id=run_id, status="completed", created_at=at, updated_at=at, plan_sha256="x")
    return RunSide.from_report(build_report(plan, run, results, calls))


def test_savings_across_different_repeats_compare_spend_per_case() -> None:
    """The same model on the same 5 cases, 0.002 per call.

    Baseline K=3: 15 cells, subject spend 0.030, per case 0.030 / 3 = 0.010.
    Candidate K=1: 5 cells, subject spend 0.010, per case 0.010 / 1 = 0.010.
    Per case: (1 − (0.010 / 0.030) · (3 / 1)) · 100 = 0 %; the raw spends would claim
    (1 − 0.010 / 0.030) · 100 = 66.7 %. The other way round (K=1 baseline, K=3 candidate)
    the raw spends would claim −200 %; per case it is 0 % as well."""
    k3 = priced_side("k3", "m", 3)
    k1 = priced_side("k1", "m", 1)
    row = compare(k3, k1)["comparisons"][0]
    assert row["baseline_subject_cost_usd"] == pytest.approx(0.030)  # each run's own spend
    assert row["candidate_subject_cost_usd"] == pytest.approx(0.010)
    assert (row["baseline_cells_per_case"], row["candidate_cells_per_case"]) == (3, 1)
    assert row["cost_basis"] == "per_case" and row["cost_basis_reason"] is None
    for key in ("subject", "total", "cache_neutral"):
        assert row[f"{key}_cost_saving_percent"] == pytest.approx(0, abs=1e-9)
    row = compare(k1, priced_side("k3b", "m", 3))["comparisons"][0]
    assert row["subject_cost_saving_percent"] == pytest.approx(0, abs=1e-9)
    assert row["quality_delta"] == 0 and row["ties"] == 5


def test_equal_repeats_keep_sr_benchs_saving_exactly() -> None:
    """With K equal on both sides the scale is 1.0 and the saving is (1 − c/b)·100 bit for bit
    (example 14: (1 − 1/2)·100 = 50)."""
    base = side("base", {"cheap": ids(0)}, {"cheap": 2.0})
    row = compare(base, side("cand", {"cand": ids(0)}, {"cand": 1.0}))["comparisons"][0]
    assert row["subject_cost_saving_percent"] == 50
    assert (row["baseline_cells_per_case"], row["candidate_cells_per_case"]) == (1, 1)


def test_savings_are_refused_when_cost_cannot_be_put_per_case() -> None:
    """A hand-made plan repeating one case twice and the others once has no single number of
    cells per case: the savings stay unknown and the row says why."""
    first = CASES[0]
    uneven = [
        first.model_copy(
            update={"id": f"{first.id}#r{k}", "metadata": {**first.metadata, "repeat_of": first.id}}
        )
        for k in (1, 2)
    ] + CASES[1:]
    row = compare(priced_side("k1", "m", 1), priced_side("odd", "m", 2, uneven))["comparisons"][0]
    assert row["candidate_cells_per_case"] is None and row["cost_basis"] is None
    assert row["cost_basis_reason"] == (
        "Costs cannot be normalised per case: the candidate target m does not plan the same "
        "number of cells for every case."
    )
    assert row["total_cost_comparison_reason"] == row["cost_basis_reason"]
    for key in ("subject", "total", "cache_neutral"):
        assert row[f"{key}_cost_saving_percent"] is None
    assert row["quality_delta"] == 0  # quality still compares (per-case means)


def test_the_cache_neutral_basis_reads_the_same_in_the_report_and_the_comparison() -> None:
    base = side("base", {"b": ids(0)})
    row = compare(base, side("cand", {"c": ids(0)}))["comparisons"][0]
    assert row["cache_neutral_cost_basis"] == base.targets[0]["cache_neutral_cost_basis"]
    assert row["cache_neutral_cost_basis"].startswith("Counterfactual token-equivalent subject")


def test_example_16_quality_beats_cost() -> None:
    base = side("base", {"cheap": ids(0), "best": ids(0, 1)}, {"cheap": 1.0, "best": 8.0})
    cand = side("cand", {"cand": ids(0)})
    out = compare(base, cand)
    assert out["baseline_selected_target_id"] == "best"
    assert out["baseline_tied_best_target_ids"] == ["best"]


def test_example_18_full_comparison_row() -> None:
    base = side("base", {"b": ids(0, 2)})
    cand = side("cand", {"c": ids(0, 1, 2, 3)})
    row = compare(base, cand)["comparisons"][0]
    assert row["quality_delta"] == pytest.approx(0.4, abs=1e-15)
    assert row["micro_quality_delta"] == pytest.approx(0.4)
    assert (row["wins"], row["losses"], row["ties"]) == (2, 0, 3)
    assert row["paired_cases"] == 5
    assert row["quality_delta_ci95"] == [-0.8147229238166104, 1]
    assert row["quality_delta_ci95_method"] == "weighted-paired-hoeffding"
    assert row["quality_delta_bootstrap_ci95"] == [0.0, 0.8]
    weights = {b["benchmark"]: b["weight"] for b in row["paired_statistics"]["per_benchmark"]}
    assert weights == pytest.approx({"gpqa-diamond": 0.6, "mmlu-pro": 0.4})


@pytest.mark.parametrize("answers", [set(), {c.id for c in CASES}])
def test_example_19_identical_answers(answers: set[str]) -> None:
    row = compare(side("base", {"b": answers}), side("cand", {"c": answers}))["comparisons"][0]
    assert row["quality_delta"] == 0
    assert row["quality_delta_bootstrap_ci95"] == [0, 0]
    low, high = row["quality_delta_ci95"]
    assert low < 0 < high
    assert row["quality_delta_ci95_method"] == "weighted-paired-hoeffding"
    stats = row["paired_statistics"]
    assert stats["mcnemar_exact_p"] == 1.0
    # no discordant pair: the estimate uses the floor (never null; see test_paired)
    assert isinstance(stats["cases_needed_for_margin"], int)
    n_low, n_high = stats["stratified_newcombe_ci95"]
    assert n_low < 0 < n_high
    w_low, w_high = stats["stratified_wald_ci95"]
    assert w_low == -w_high and w_low < 0


def test_example_20_total_versus_subject_savings() -> None:
    base = side("base", {"b": ids(0)}, {"b": 1.0}, evaluation={"b": 0.2})
    cand = side("cand", {"c": ids(0)}, {"c": 0.4}, evaluation={"c": 1.0})
    row = compare(base, cand)["comparisons"][0]
    assert row["subject_cost_saving_percent"] == pytest.approx(60)
    assert row["total_cost_saving_percent"] == -16.666666666666675
    assert row["baseline_total_cost_usd"] == pytest.approx(1.2)
    assert row["candidate_evaluation_cost_usd"] == 1.0
    assert row["total_cost_comparison_reason"] is None
    unknown = side("cand2", {"c": ids(0)}, {"c": 0.4}, evaluation={"c": None})
    row = compare(base, unknown)["comparisons"][0]
    assert row["total_cost_saving_percent"] is None
    assert row["total_cost_comparison_reason"].startswith("Candidate total spend is incomplete")
    assert row["subject_cost_saving_percent"] == pytest.approx(60)


def test_example_21_failed_candidate_outcome_counts_incorrect() -> None:
    one = [CASES[0]]
    base = side("base", {"b": ids(0)}, cases=one)
    failed = result(CASES[0].id, "c", status="failed", correct=True, error="Target HTTP 503")
    cand = side("cand", {"c": ids(0)}, cases=one, results_override={(CASES[0].id, "c"): failed})
    out = compare(base, cand)
    row = out["comparisons"][0]
    assert row["quality_delta"] == -1
    assert row["losses"] == 1
    assert out["candidate_quality_complete"] is False


def test_example_21_planned_cases_must_match() -> None:
    base = side("base", {"b": ids(0)})
    cand = side("cand", {"c": ids(0)}, cases=CASES[:4])
    with pytest.raises(ComparisonError, match="planned cases"):
        compare(base, cand)


@pytest.mark.parametrize(
    "row",
    [
        None,  # missing
        {"status": "running", "correct": None},
        {"status": "completed", "correct": None},  # ungraded
        {"status": "cancelled", "correct": None},
    ],
)
@pytest.mark.parametrize("which", ["base", "cand"])
def test_example_21_unusable_rows_block_comparison(row: dict[str, Any] | None, which: str) -> None:
    key_target = "b" if which == "base" else "c"
    override = {
        (CASES[1].id, key_target): None if row is None else result(CASES[1].id, key_target, **row)
    }
    base = side("base", {"b": ids(0)}, results_override=override if which == "base" else None)
    cand = side("cand", {"c": ids(0)}, results_override=override if which == "cand" else None)
    with pytest.raises(ComparisonError, match="quality results"):
        compare(base, cand)


def test_duplicate_and_extra_rows_block_comparison() -> None:
    base = side("base", {"b": ids(0)})
    cand = side("cand", {"c": ids(0)})
    for bad in (
        [*cand.cells, dict(cand.cells[0])],
        [*cand.cells, {**cand.cells[0], "case_id": "mmlu-pro/99"}],
    ):
        broken = RunSide(**{**cand.__dict__, "cells": bad})
        with pytest.raises(ComparisonError, match="quality results lack unique terminal"):
            compare(base, broken)


def test_a_hand_edited_report_whose_cells_disagree_with_its_summary_is_refused() -> None:
    """Baseline b and candidate c both answer cases 0 and 2 right. Someone flips the
    candidate's cell for case 2 to wrong in the JSON but leaves its rows: the rows still say
    gpqa-diamond 1 of 3 (Δ +0.000) while the cells now hold a loss. Refused, naming the target
    and both numbers, on either side."""
    base = side("base", {"b": ids(0, 2)})
    cand = side("cand", {"c": ids(0, 2)}, created="2026-12-01T00:00:00+00:00")
    assert compare(base, cand)["comparisons"][0]["quality_delta"] == 0

    def flipped(run: RunSide) -> RunSide:
        cells = [
            {**cell, "correct": False} if cell["case_id"] == "gpqa-diamond/2" else cell
            for cell in run.cells
        ]
        return RunSide(**{**run.__dict__, "cells": cells, "source": f"{run.run_id}.json"})

    with pytest.raises(ComparisonError) as error:
        compare(base, flipped(cand))
    assert str(error.value) == (
        "Candidate report cand.json is inconsistent: target c on gpqa-diamond says 1 of 3 "
        "correct but its cells hold 0 correct; refusing to compare it"
    )
    with pytest.raises(
        ComparisonError, match=r"^Baseline report base\.json is inconsistent: target b"
    ):
        compare(flipped(base), cand)
    # the summary target's own count is checked too (mmlu-pro and gpqa rows left intact)
    targets = [{**cand.targets[0], "correct": 5}]
    edited = RunSide(**{**cand.__dict__, "targets": targets})
    with pytest.raises(ComparisonError, match="target c says 5 correct but its cells hold 2"):
        compare(base, edited)


def test_example_22_protocol_rejections() -> None:
    base = side("base", {"b": ids(0)})
    cheap_price = Prices(input=0.01, cached_input=0.1, cache_write=2, output=3)
    variants = {
        "prices": side(
            "cand",
            {"b": ids(0)},
            targets=[target("b").model_copy(update={"prices": {"b": cheap_price}})],
        ),
        "limits": side("cand", {"c": ids(0)}, limits=Limits(max_output_chars=16)),
        "request parameters": side(
            "cand",
            {"b": ids(0)},
            targets=[target("b", request_params={"reasoning_effort": "high"})],
        ),
    }
    for reason, cand in variants.items():
        with pytest.raises(ComparisonError, match=f"^Cannot compare.*{reason}"):
            compare(base, cand)


def test_example_22_judge_bound_to_another_model() -> None:
    judge = target("judge-a", model="judge-model-a")
    other = target("judge-a", model="judge-model-b")
    options = {"mmlu-pro": {"judge": "judge-a"}}
    base = side(
        "base", {"b": ids(0)}, auxiliary_targets={"judge-a": judge}, benchmark_options=options
    )
    same = side(
        "cand", {"c": ids(0)}, auxiliary_targets={"judge-a": judge}, benchmark_options=options
    )
    compare(base, same)
    moved = side(
        "cand2",
        {"c": ids(0)},
        auxiliary_targets={"judge-x": judge.model_copy(update={"id": "judge-x"})},
        benchmark_options={"mmlu-pro": {"judge": "judge-x"}},
    )
    compare(base, moved)  # the same judge under another id resolves identically
    changed = side(
        "cand3", {"c": ids(0)}, auxiliary_targets={"judge-a": other}, benchmark_options=options
    )
    with pytest.raises(ComparisonError, match=r"^Cannot compare.*judge"):
        compare(base, changed)


def test_baseline_and_candidate_status_rules() -> None:
    base = side("base", {"b": ids(0)})
    with pytest.raises(ComparisonError, match="distinct runs"):
        compare(base, side("base", {"c": ids(0)}))
    with pytest.raises(ComparisonError, match="Baseline must be a completed or failed live run"):
        compare(side("b2", {"b": ids(0)}, status="cancelled"), base)
    with pytest.raises(ComparisonError, match="Candidate must be a completed or failed"):
        compare(base, side("cand", {"c": ids(0)}, status="interrupted"))


def test_baseline_needs_a_single_model_target() -> None:
    router = target("router", kind="mom", config_hash="h", max_inference_calls=2)
    base = side("base", {"router": ids(0)}, targets=[router])
    with pytest.raises(ComparisonError, match="single-model target"):
        compare(base, side("cand", {"c": ids(0)}))


def test_paired_statistics_side_by_side() -> None:
    base = side("base", {"b": ids(0, 1, 2)})
    cand = side("cand", {"c": ids(0)})
    stats = compare(base, cand, margin=0.1)["comparisons"][0]["paired_statistics"]
    assert stats["binary_outcomes"] is True
    assert stats["mcnemar_exact_p"] == 0.5  # two losses, no wins: 2 * 1/4
    low, high = stats["stratified_newcombe_ci95"]
    hoeffding = compare(base, cand)["comparisons"][0]["quality_delta_ci95"]
    assert hoeffding[0] < low < high < hoeffding[1]
    assert stats["cases_needed_for_margin"] > 5
    assert set(stats["assumptions"]) >= {"hoeffding", "mcnemar", "newcombe", "stratified_newcombe"}


def test_plans_equal_under_the_plan_hash_are_comparable_whatever_the_number_spelling() -> None:
    """A service request that says 0.0 and a command line that says 0 freeze the same plan
    hash; comparison reads plan fields the same way, so the two runs compare."""
    base = side("base", {"b": ids(0)}, sampling={"temperature": 0.0},
                limits=Limits(max_cost_usd=2.0))  # fmt: skip
    cand = side("cand", {"b": ids(0)}, sampling={"temperature": 0}, limits=Limits(max_cost_usd=2))
    compare(base, cand)
    warmer = side("warm", {"b": ids(0)}, sampling={"temperature": 0.5})
    with pytest.raises(ComparisonError, match="different sampling"):
        compare(base, warmer)
