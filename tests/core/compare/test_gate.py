"""The gate's verdicts: regression, non-inferiority, pairing, intervals, incomparable baselines."""

from __future__ import annotations

import pytest

from pytest_srbench.core.compare.gate import evaluate_gate, holds
from pytest_srbench.core.compare.runs import compare
from pytest_srbench.core.models import Limits
from tests.core.compare.test_runs import side
from tests.core.helpers import case

MANY = [case("mmlu-pro", str(i)) for i in range(200)]
ALL = {c.id for c in MANY}
HALF = {c.id for c in MANY[:100]}
MOST = {c.id for c in MANY[:190]}


def test_holds() -> None:
    assert holds("regression", [-0.3, 0.0], 0.05)
    assert not holds("regression", [-0.3, -0.01], 0.05)
    assert holds("noninferiority", [-0.04, 0.1], 0.05)
    assert not holds("noninferiority", [-0.05, 0.1], 0.05)


def test_a_large_drop_fails_the_regression_gate() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    cand = side("cand", {"t": HALF}, cases=MANY)
    gate = evaluate_gate(base, cand)
    assert gate["passed"] is False
    assert gate["reason"] == "significant quality drop for t (upper bound below 0)"
    (target,) = gate["targets"]
    assert target["pairing"] == "same-target" and target["quality_delta"] == -0.5
    assert target["interval"][1] < 0
    assert gate["line"].startswith("srbench gate FAILED (regression, stratified Newcombe 95 %)")
    assert gate["comparison"]["comparisons"][0]["losses"] == 100


def test_no_change_passes_and_a_small_drop_is_not_a_regression() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    assert evaluate_gate(base, side("same", {"t": ALL}, cases=MANY))["passed"] is True
    slight = side("slight", {"t": {c.id for c in MANY[:199]}}, cases=MANY)
    gate = evaluate_gate(base, slight)
    assert gate["passed"] is True and gate["reason"] is None
    assert "t Δ -0.005" in gate["line"] and gate["line"].startswith("srbench gate PASSED")


def test_hoeffding_is_more_conservative_than_newcombe() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    cand = side("cand", {"t": MOST}, cases=MANY)  # 10 losses in 200
    newcombe = evaluate_gate(base, cand)
    hoeffding = evaluate_gate(base, cand, interval="hoeffding")
    assert newcombe["passed"] is False  # a significant drop of 5 points
    assert hoeffding["passed"] is True  # Hoeffding's ±0.19 radius cannot see it
    assert hoeffding["interval_method"] == "weighted-paired-hoeffding"


def test_noninferiority_needs_the_lower_bound_above_minus_margin() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    same = side("same", {"t": ALL}, cases=MANY)
    assert evaluate_gate(base, same, mode="noninferiority", margin=0.05)["passed"] is True
    gate = evaluate_gate(base, same, mode="noninferiority", margin=0.005)
    assert gate["passed"] is False
    assert "non-inferiority within 0.005 not shown for t" in gate["reason"]


def test_a_target_missing_from_the_baseline_is_paired_with_the_strongest_single() -> None:
    base = side("base", {"strong": ALL, "weak": HALF}, cases=MANY)
    cand = side("cand", {"strong": ALL, "new": ALL}, cases=MANY)
    gate = evaluate_gate(base, cand)
    pairing = {t["target_id"]: (t["baseline_target_id"], t["pairing"]) for t in gate["targets"]}
    assert pairing == {
        "strong": ("strong", "same-target"),
        "new": ("strong", "strongest-single-baseline"),
    }
    assert "new vs strong" in gate["line"]


def test_the_gate_json_holds_one_delta_per_target_and_names_its_pairing() -> None:
    """Baseline: strong right on all 200 cases, weak on the first 100. The candidate's weak
    is unchanged (100 right) and new is right on all 200.
    The gate pairs weak with weak: Δ = 0.5 − 0.5 = 0. sr-bench's pairing (strongest single)
    would put weak at 0.5 − 1.0 = −0.5 beside it; the embedded comparison now holds the gate's
    rows only, each naming its pairing."""
    base = side("base", {"strong": ALL, "weak": HALF}, cases=MANY)
    cand = side("cand", {"weak": HALF, "new": ALL}, cases=MANY)
    gate = evaluate_gate(base, cand)
    comparison = gate["comparison"]
    assert comparison["pairing"] == "same-target, else strongest-single-baseline"
    rows = {row["candidate_target_id"]: row for row in comparison["comparisons"]}
    for target in gate["targets"]:
        row = rows[target["target_id"]]
        assert row["baseline_target_id"] == target["baseline_target_id"]
        assert row["pairing"] == target["pairing"]
        assert row["quality_delta"] == target["quality_delta"]
    assert rows["weak"]["quality_delta"] == 0 and rows["weak"]["pairing"] == "same-target"
    assert rows["new"]["baseline_target_id"] == "strong"
    assert rows["new"]["pairing"] == "strongest-single-baseline"
    # srbench compare keeps sr-bench's pairing and says so
    plain = compare(base, cand)
    assert plain["pairing"] == "strongest-single-baseline"
    weak = next(r for r in plain["comparisons"] if r["candidate_target_id"] == "weak")
    assert (weak["baseline_target_id"], weak["quality_delta"]) == ("strong", -0.5)


def test_an_incomparable_baseline_fails_with_the_reason() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    other = side("cand", {"t": ALL}, cases=MANY, limits=Limits(max_output_chars=16))
    gate = evaluate_gate(base, other)
    assert gate["passed"] is False and gate["targets"] == []
    assert gate["reason"] == "baseline not comparable: Cannot compare runs with different limits"
    assert "is not comparable" in gate["line"]


def test_bad_gate_settings_are_rejected() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    with pytest.raises(ValueError, match="gate mode"):
        evaluate_gate(base, base, mode="strict")
    with pytest.raises(ValueError, match="gate interval"):
        evaluate_gate(base, base, interval="bootstrap")
