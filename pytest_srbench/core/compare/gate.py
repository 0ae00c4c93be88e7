"""The CI gate: a verdict on a run against a baseline from a paired interval (pure).

Each target of the run is paired with the baseline target of the same id, or, when the
baseline has no such target, with the baseline's strongest single model (§8.3). The embedded
comparison holds those same rows (``pairing`` names the rule), so a target has one delta.

- ``regression`` fails when the interval's upper bound is below 0 (a significant drop);
- ``noninferiority`` fails unless the lower bound is above ``-margin``.

The interval is the stratified Wald interval with a per-benchmark variance floor by default
(calibrated in docs/gate-calibration.md), the stratified Newcombe interval, or sr-bench's
paired Hoeffding bound (valid, conservative). The scope is the macro delta (default) or every
benchmark on its own (``benchmark``: Bonferroni-adjusted for a regression, each at 95 % for
non-inferiority; see ``design.py``). Every verdict carries the design: what a gate of this
size can show (``design.gate_design``).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

from pytest_srbench.core.compare import paired
from pytest_srbench.core.compare.design import design_summary, gate_design, gate_z
from pytest_srbench.core.compare.runs import (
    SAME_TARGET,
    STRONGEST_SINGLE,
    Comparison,
    ComparisonError,
    RunSide,
)
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.plan.choices import (
    DEFAULT_MARGIN,
    GATE_INTERVALS,
    GATE_MODES,
    GATE_SCOPES,
)

INTERVAL_LABELS = {
    "wald": "stratified Wald",
    "newcombe": "stratified Newcombe",
    "hoeffding": "paired Hoeffding",
}
INTERVAL_METHODS = {
    "wald": paired.WALD_METHOD,
    "newcombe": paired.NEWCOMBE_METHOD,
    "hoeffding": paired.HOEFFDING_METHOD,
}
GATE_PAIRING = f"{SAME_TARGET}, else {STRONGEST_SINGLE}"


def _bounds(row: dict[str, Any], interval: str) -> list[float]:
    if interval == "hoeffding":
        return list(row["quality_delta_ci95"])
    key = "stratified_wald_ci95" if interval == "wald" else "stratified_newcombe_ci95"
    return list(row["paired_statistics"][key])


def benchmark_interval(
    interval: str, candidate: list[float], baseline: list[float], z: float
) -> list[float]:
    """One benchmark's interval for its delta at the normal quantile ``z``."""
    diffs = [c - b for c, b in zip(candidate, baseline, strict=True)]
    if interval == "wald":
        return paired.stratified_wald([diffs], [1.0], z)
    if interval == "newcombe":
        return paired.newcombe_interval(candidate, baseline, z)[1]
    alpha = 2 * (1 - NormalDist().cdf(z))
    return paired.hoeffding_interval(math.fsum(diffs) / len(diffs), [len(diffs)], [1.0], alpha)


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


def _head(mode: str, interval: str, scope: str, margin: float, benchmarks: int) -> str:
    label = INTERVAL_LABELS[interval]
    if scope == "macro":
        level = f"{label} 95 %"
    elif mode == "regression":
        level = f"per benchmark, {label} 95 % Bonferroni-adjusted over {benchmarks}"
    else:
        level = f"per benchmark, {label} 95 % each"
    return f"{mode}, {level}" + (f", margin {margin:g}" if mode == "noninferiority" else "")


def _scoped(
    comparison: Comparison,
    target_id: str,
    base_id: str,
    *,
    mode: str,
    margin: float,
    interval: str,
) -> list[dict[str, Any]]:
    """Every benchmark's delta and interval (at the scope's level) and whether it holds."""
    groups = comparison.groups(target_id, base_id)
    z = gate_z(mode, "benchmark", len(groups["names"]))
    rows = []
    for name, cand, base in zip(
        groups["names"], groups["candidate"], groups["baseline"], strict=True
    ):
        bounds = benchmark_interval(interval, cand, base, z)
        rows.append(
            {
                "benchmark": name,
                "cases": len(cand),
                "delta": (math.fsum(cand) - math.fsum(base)) / len(cand),
                "interval": bounds,
                "passed": holds(mode, bounds, margin),
            }
        )
    return rows


def evaluate_gate(
    baseline: RunSide,
    candidate: RunSide,
    *,
    mode: str = "regression",
    margin: float = DEFAULT_MARGIN,
    interval: str = "wald",
    scope: str = "macro",
    allow_mixed_sources: bool = False,
    allow_cached: bool = False,
) -> dict[str, Any]:
    """The gate object of the JSON report (``passed``, one line, per-target intervals, the
    design's power). Runs whose same benchmark came from different data fail the gate as
    not comparable unless ``allow_mixed_sources`` (then the line says so, loudly); so do runs
    with cells answered from the response cache unless ``allow_cached`` (the same)."""
    if mode not in GATE_MODES:
        raise ValueError(f"gate mode must be one of {GATE_MODES}, got {mode!r}")
    if interval not in GATE_INTERVALS:
        raise ValueError(f"gate interval must be one of {GATE_INTERVALS}, got {interval!r}")
    if scope not in GATE_SCOPES:
        raise ValueError(f"gate scope must be one of {GATE_SCOPES}, got {scope!r}")
    verdict: dict[str, Any] = {
        "mode": mode,
        "margin": margin,
        "interval": interval,
        "interval_method": INTERVAL_METHODS[interval],
        "scope": scope,
        "baseline_run_id": baseline.run_id,
        "baseline_source": baseline.source,
        "targets": [],
        "design": None,
        "comparison": None,
    }
    try:
        comparison = Comparison(baseline, candidate, allow_mixed_sources, allow_cached)
    except ComparisonError as error:
        head = _head(mode, interval, scope, margin, 0)
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
    names: list[str] = []
    for target_id in candidate.target_ids():
        same = target_id in baseline_ids
        base_id = target_id if same else comparison.selected
        pairing = SAME_TARGET if same else STRONGEST_SINGLE
        row = comparison.row(target_id, base_id, margin, pairing=pairing)
        rows.append(row)
        names = [b["benchmark"] for b in row["paired_statistics"]["per_benchmark"]]
        bounds = _bounds(row, interval)
        entry: dict[str, Any] = {
            "target_id": target_id,
            "baseline_target_id": base_id,
            "pairing": pairing,
            "quality_delta": row["quality_delta"],
            "interval": bounds,
            "benchmarks": None,
        }
        versus = "" if same else f" vs {base_id}"
        if scope == "macro":
            entry["passed"] = holds(mode, bounds, margin)
            parts.append(
                f"{target_id}{versus} Δ {_signed(row['quality_delta'])} "
                f"[{_signed(bounds[0])}, {_signed(bounds[1])}] "
                f"{'ok' if entry['passed'] else 'FAIL'}"
            )
        else:
            scoped = _scoped(
                comparison, target_id, base_id, mode=mode, margin=margin, interval=interval
            )
            entry["benchmarks"] = scoped
            entry["passed"] = all(b["passed"] for b in scoped)
            shown = [b for b in scoped if not b["passed"]] or [
                min(scoped, key=lambda b: b["interval"][1 if mode == "regression" else 0])
            ]
            parts.append(
                f"{target_id}{versus} "
                + ", ".join(
                    f"{b['benchmark']} Δ {_signed(b['delta'])} [{_signed(b['interval'][0])}, "
                    f"{_signed(b['interval'][1])}]"
                    for b in shown
                )
                + (" ok" if entry["passed"] else " FAIL")
            )
        verdict["targets"].append(entry)
    if rows:
        per_benchmark = rows[0]["paired_statistics"]["per_benchmark"]
        verdict["design"] = gate_design(
            names,
            [b["cases"] for b in per_benchmark],
            [b["weight"] for b in per_benchmark],
            mode=mode,
            margin=margin,
            scope=scope,
            interval=interval,
        )
    passed = all(t["passed"] for t in verdict["targets"])
    failing = [t["target_id"] for t in verdict["targets"] if not t["passed"]]
    where = "" if scope == "macro" else " in at least one benchmark"
    if passed:
        reason = None
    elif mode == "regression":
        reason = f"significant quality drop{where} for {', '.join(failing)} (upper bound below 0)"
    else:
        reason = (
            f"non-inferiority within {margin:g} not shown{where} for {', '.join(failing)} "
            f"(lower bound not above -{margin:g})"
        )
    head = _head(mode, interval, scope, margin, len(names))
    design = "" if verdict["design"] is None else f" — {design_summary(verdict['design'])}"
    mixed = comparison.sources["warning"]
    cached = comparison.cached["warning"]
    verdict.update(
        passed=passed,
        reason=reason,
        # the rows the verdict read, so each target has one delta (not also sr-bench's
        # strongest-single pairing beside the gate's same-target one)
        comparison=comparison.result(margin, rows, GATE_PAIRING),
        line=f"srbench gate {'PASSED' if passed else 'FAILED'} ({head}) against "
        f"{baseline.run_id}: "
        + "; ".join(parts)
        + design
        + (f" — {mixed}" if mixed else "")
        + (f" — {cached}" if cached else ""),
    )
    return verdict
