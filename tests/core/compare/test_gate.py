"""The gate's verdicts: regression, non-inferiority, pairing, intervals, incomparable baselines."""

from __future__ import annotations

import pytest

from pytest_srbench.core.compare.gate import evaluate_gate, holds
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
