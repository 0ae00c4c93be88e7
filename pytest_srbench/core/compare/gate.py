"""The CI gate: a verdict on a run against a baseline from a paired interval (pure).

Each target of the run is paired with the baseline target of the same id, or, when the
baseline has no such target, with the baseline's strongest single model (§8.3). The embedded
comparison holds those same rows (``pairing`` names the rule), so a target has one delta.

- ``regression`` fails when the interval's upper bound is below 0 (a significant drop);
- ``noninferiority`` fails unless the lower bound is above ``-margin``.

The interval is the weighted stratified Newcombe interval by default (calibrated in
docs/gate-calibration.md) or sr-bench's paired Hoeffding bound (valid, conservative).
"""

from __future__ import annotations

from typing import Any

from pytest_srbench.core.compare.runs import (
    SAME_TARGET,
    STRONGEST_SINGLE,
    Comparison,
    ComparisonError,
    RunSide,
)
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.plan.choices import DEFAULT_MARGIN, GATE_INTERVALS, GATE_MODES

INTERVAL_LABELS = {"newcombe": "stratified Newcombe", "hoeffding": "paired Hoeffding"}
GATE_PAIRING = f"{SAME_TARGET}, else {STRONGEST_SINGLE}"


def _bounds(row: dict[str, Any], interval: str) -> list[float]:
    if interval == "hoeffding":
        return list(row["quality_delta_ci95"])
    return list(row["paired_statistics"]["stratified_newcombe_ci95"])


def holds(mode: str, bounds: list[float], margin: float) -> bool:
    """Whether the gate holds for one target's interval."""
    if mode == "regression":
        return bounds[1] >= 0
    return bounds[0] > -margin


def parse_margin(text: str) -> float:
    """A margin as the user typed it (``--margin``, ``--srbench-margin``, the service's field):
    a number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise InputError(f"needs a number, got {text!r}") from None
    if not 0 < value < 1:
        raise InputError(f"must be in (0, 1), got {text}")
    return value


def _signed(value: float) -> str:
    return f"{value:+.3f}"


def evaluate_gate(
    baseline: RunSide,
    candidate: RunSide,
    *,
    mode: str = "regression",
    margin: float = DEFAULT_MARGIN,
    interval: str = "newcombe",
) -> dict[str, Any]:
    """The gate object of the JSON report (``passed``, one line, per-target intervals)."""
    if mode not in GATE_MODES:
        raise ValueError(f"gate mode must be one of {GATE_MODES}, got {mode!r}")
    if interval not in GATE_INTERVALS:
        raise ValueError(f"gate interval must be one of {GATE_INTERVALS}, got {interval!r}")
    label = INTERVAL_LABELS[interval]
    head = f"{mode}, {label} 95 %" + (f", margin {margin:g}" if mode == "noninferiority" else "")
    verdict: dict[str, Any] = {
        "mode": mode,
        "margin": margin,
        "interval": interval,
        "interval_method": "weighted-stratified-newcombe-mover"
        if interval == "newcombe"
        else "weighted-paired-hoeffding",
        "baseline_run_id": baseline.run_id,
        "baseline_source": baseline.source,
        "targets": [],
        "comparison": None,
    }
    try:
        comparison = Comparison(baseline, candidate)
    except ComparisonError as error:
        return {
            **verdict,
            "passed": False,
            "reason": f"baseline not comparable: {error}",
            "line": f"srbench gate FAILED ({head}): baseline {baseline.run_id} is not "
            f"comparable: {error}",
        }
    baseline_ids = set(baseline.target_ids())
    parts = []
    rows = []
    for target_id in candidate.target_ids():
        same = target_id in baseline_ids
        base_id = target_id if same else comparison.selected
        pairing = SAME_TARGET if same else STRONGEST_SINGLE
        row = comparison.row(target_id, base_id, margin, pairing=pairing)
        rows.append(row)
        bounds = _bounds(row, interval)
        ok = holds(mode, bounds, margin)
        verdict["targets"].append(
            {
                "target_id": target_id,
                "baseline_target_id": base_id,
                "pairing": pairing,
                "quality_delta": row["quality_delta"],
                "interval": bounds,
                "passed": ok,
            }
        )
        versus = "" if same else f" vs {base_id}"
        parts.append(
            f"{target_id}{versus} Δ {_signed(row['quality_delta'])} "
            f"[{_signed(bounds[0])}, {_signed(bounds[1])}] {'ok' if ok else 'FAIL'}"
        )
    passed = all(t["passed"] for t in verdict["targets"])
    failing = [t["target_id"] for t in verdict["targets"] if not t["passed"]]
    if passed:
        reason = None
    elif mode == "regression":
        reason = f"significant quality drop for {', '.join(failing)} (upper bound below 0)"
    else:
        reason = (
            f"non-inferiority within {margin:g} not shown for {', '.join(failing)} "
            f"(lower bound not above -{margin:g})"
        )
    verdict.update(
        passed=passed,
        reason=reason,
        # the rows the verdict read, so each target has one delta (not also sr-bench's
        # strongest-single pairing beside the gate's same-target one)
        comparison=comparison.result(margin, rows, GATE_PAIRING),
        line=f"srbench gate {'PASSED' if passed else 'FAILED'} ({head}) against "
        f"{baseline.run_id}: " + "; ".join(parts),
    )
    return verdict
