"""The CI gate: a verdict on a run against a baseline from a paired interval (pure).

Each target of the run is paired with the baseline target of the same id, or, when the
baseline has no such target, with the baseline's strongest single model (§8.3). The embedded
comparison holds those same rows (``pairing`` names the rule), so a target has one delta.

- ``regression`` fails when the interval's upper bound is below 0 (a significant drop);
- ``noninferiority`` fails unless the lower bound is above ``-margin``.

The interval is the stratified Wald interval with a per-benchmark variance floor by default
(calibrated in docs/gate-calibration.md), the stratified Newcombe interval, or sr-bench's
paired Hoeffding bound (valid, conservative). The scope is the macro delta or every
benchmark on its own (``benchmark``: Bonferroni-adjusted for a regression, each at 95 % for
non-inferiority; see ``design.py``). Unless asked for, the scope is the macro delta for a
run of the full sr-bench set and per benchmark otherwise (``default_scope``): the
renormalised macro of a user's few benchmarks can hide one of them collapsing. Every verdict
carries the design: what a gate of this size can show (``design.gate_design``), and each
benchmark's Δ and interval, whatever the scope.

Benchmarks on one side only are reported (``added_benchmarks``, ``removed_benchmarks``) and
the gate reads the benchmarks both runs share (``common_part``); with none in common it
fails.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
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
    benchmarks_of,
    replay_refusal,
    restrict_side,
)
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.plan.choices import (
    DEFAULT_MARGIN,
    GATE_INTERVALS,
    GATE_MODES,
    GATE_SCOPES,
)
from pytest_srbench.core.plan.srbench import SR_BENCH_BENCHMARKS
from pytest_srbench.core.stats import WILSON_Z

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


SCOPE_LABELS = {"macro": "macro", "benchmark": "per benchmark"}
FULL_SET = "the full sr-bench set"


def default_scope(
    benchmarks: Iterable[str], session: Iterable[str] | None = None
) -> tuple[str, str]:
    """The gate's scope when none is asked for, and why: the macro delta for the nine
    sr-bench benchmarks, each benchmark on its own for anything else (user-defined
    benchmarks, marked tests, subsets), where the renormalised macro can weigh a benchmark
    that collapsed at a few per cent. ``benchmarks``: those gated (both runs share);
    ``session``: the candidate's own, when they are more."""
    gated = set(benchmarks)
    if gated == SR_BENCH_BENCHMARKS:
        return "macro", f"this session is {FULL_SET}"
    if session is not None and set(session) == SR_BENCH_BENCHMARKS:
        return "benchmark", f"the benchmarks both runs share are not {FULL_SET}"
    return "benchmark", f"this session is not {FULL_SET}"


def resolve_scope(
    scope: str | None, benchmarks: Iterable[str], session: Iterable[str] | None = None
) -> tuple[str, str | None]:
    """(scope, why) — why is None for a scope that was asked for."""
    if scope is not None:
        return scope, None
    return default_scope(benchmarks, session)


def common_part(baseline: RunSide, candidate: RunSide) -> tuple[RunSide, RunSide, dict[str, Any]]:
    """Both runs restricted to the benchmarks they share, when their benchmarks differ, and
    ``{"common", "added_benchmarks", "removed_benchmarks"}`` (added: the candidate's only)."""
    base, cand = benchmarks_of(baseline), benchmarks_of(candidate)
    common = base & cand
    found = {
        "common": sorted(common),
        "added_benchmarks": sorted(cand - base),
        "removed_benchmarks": sorted(base - cand),
    }
    if base == cand or not common:
        return baseline, candidate, found
    return restrict_side(baseline, common), restrict_side(candidate, common), found


def membership_note(found: dict[str, Any]) -> str:
    """One clause on benchmarks present on one side only ("" when none)."""
    parts = []
    if found["added_benchmarks"]:
        parts.append("added (not gated): " + ", ".join(found["added_benchmarks"]))
    if found["removed_benchmarks"]:
        parts.append("removed (not gated): " + ", ".join(found["removed_benchmarks"]))
    return "; ".join(parts)


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


def _head(
    mode: str, interval: str, scope: str, margin: float, benchmarks: int, why: str | None = None
) -> str:
    label = INTERVAL_LABELS[interval]
    if scope == "macro":
        level = f"{label} 95 %"
    elif mode == "regression" and benchmarks > 1:
        level = f"{label} 95 % Bonferroni-adjusted over {benchmarks}"
    else:
        level = f"{label} 95 % each"
    if why is not None:  # the default scope says which and why
        level = f"{SCOPE_LABELS[scope]}: {why}; {level}"
    elif scope == "benchmark":
        level = f"per benchmark, {level}"
    return f"{mode}, {level}" + (f", margin {margin:g}" if mode == "noninferiority" else "")


def _scoped(
    comparison: Comparison,
    target_id: str,
    base_id: str,
    *,
    mode: str,
    margin: float,
    interval: str,
    scope: str = "benchmark",
) -> list[dict[str, Any]]:
    """Every benchmark's delta and interval and whether it holds: at the per-benchmark
    gate's level (Bonferroni-adjusted for a regression), or at 95 % each beside a macro
    verdict (shown, not gated)."""
    groups = comparison.groups(target_id, base_id)
    z = gate_z(mode, "benchmark", len(groups["names"])) if scope == "benchmark" else WILSON_Z
    rows = []
    for name, cand, base in zip(
        groups["names"], groups["candidate"], groups["baseline"], strict=True
    ):
        bounds = benchmark_interval(interval, cand, base, z)
        rows.append(
            {
                "benchmark": name,
                "cases": len(cand),
                "baseline_accuracy": math.fsum(base) / len(base),
                "candidate_accuracy": math.fsum(cand) / len(cand),
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
    scope: str | None = None,
    allow_mixed_sources: bool = False,
    allow_cached: bool = False,
) -> dict[str, Any]:
    """The gate object of the JSON report (``passed``, one line, per-target intervals with
    each benchmark's, the design's power). ``scope`` None: ``default_scope`` of the benchmarks
    gated (the line says which and why). Benchmarks on one side only are listed and not
    gated; with no benchmark in common, or runs whose same benchmark came from different
    data (unless ``allow_mixed_sources``: then the line says so, loudly), or with cells
    answered from the response cache (unless ``allow_cached``: the same), the gate fails as
    not comparable."""
    if mode not in GATE_MODES:
        raise ValueError(f"gate mode must be one of {GATE_MODES}, got {mode!r}")
    if interval not in GATE_INTERVALS:
        raise ValueError(f"gate interval must be one of {GATE_INTERVALS}, got {interval!r}")
    if scope is not None and scope not in GATE_SCOPES:
        raise ValueError(f"gate scope must be one of {GATE_SCOPES}, got {scope!r}")
    own = benchmarks_of(candidate)
    baseline, candidate, found = common_part(baseline, candidate)
    scope, why = resolve_scope(scope, found["common"], own)
    membership = membership_note(found)
    verdict: dict[str, Any] = {
        "mode": mode,
        "margin": margin,
        "interval": interval,
        "interval_method": INTERVAL_METHODS[interval],
        "scope": scope,
        "scope_default": why is not None,
        "scope_reason": "asked for" if why is None else why,
        "baseline_run_id": baseline.run_id,
        "baseline_source": baseline.source,
        "added_benchmarks": found["added_benchmarks"],
        "removed_benchmarks": found["removed_benchmarks"],
        "targets": [],
        "design": None,
        "comparison": None,
    }
    head = _head(mode, interval, scope, margin, len(found["common"]), why)
    replay = next((side for side in (baseline, candidate) if side.mode == "replay"), None)
    if replay is not None:  # never live evidence, whatever the two runs have in common
        refusal = replay_refusal(replay.run_id)
        return {
            **verdict,
            "passed": False,
            "reason": f"baseline not comparable: {refusal}",
            "line": f"srbench gate FAILED ({head}): {refusal}",
        }
    if not found["common"]:
        nothing = (
            f"no benchmark in common with the baseline {baseline.run_id}: it has "
            f"{', '.join(found['removed_benchmarks']) or 'none'}, this run "
            f"{', '.join(found['added_benchmarks']) or 'none'}"
        )
        return {
            **verdict,
            "passed": False,
            "reason": f"baseline not comparable: {nothing}",
            "line": f"srbench gate FAILED ({head}): {nothing}",
        }
    try:
        comparison = Comparison(baseline, candidate, allow_mixed_sources, allow_cached)
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
    names: list[str] = []
    for target_id in candidate.target_ids():
        same = target_id in baseline_ids
        base_id = target_id if same else comparison.selected
        pairing = SAME_TARGET if same else STRONGEST_SINGLE
        row = comparison.row(target_id, base_id, margin, pairing=pairing)
        rows.append(row)
        names = [b["benchmark"] for b in row["paired_statistics"]["per_benchmark"]]
        bounds = _bounds(row, interval)
        scoped = _scoped(
            comparison,
            target_id,
            base_id,
            mode=mode,
            margin=margin,
            interval=interval,
            scope=scope,
        )
        entry: dict[str, Any] = {
            "target_id": target_id,
            "baseline_target_id": base_id,
            "pairing": pairing,
            "quality_delta": row["quality_delta"],
            "interval": bounds,
            "benchmarks": scoped,
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
    reason: str | None = None
    if passed:
        pass
    elif mode == "regression":
        reason = f"significant quality drop{where} for {', '.join(failing)} (upper bound below 0)"
    else:
        reason = (
            f"non-inferiority within {margin:g} not shown{where} for {', '.join(failing)} "
            f"(lower bound not above -{margin:g})"
        )
    head = _head(mode, interval, scope, margin, len(names), why)
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
        + (f" — {membership}" if membership else "")
        + design
        + (f" — {mixed}" if mixed else "")
        + (f" — {cached}" if cached else ""),
    )
    return verdict
