"""What a gate can show at a plan's size, before anything runs (pure arithmetic, no I/O).

The gate reads the stratified Wald interval (``paired.stratified_wald``). Its half-width
depends on the plan's cases per benchmark, the macro weights and how often the two runs
disagree on a case (the per-case second moment of the difference, ``m``; the discordance for
0/1 outcomes). The design is computed from the plan alone, under stated assumptions:

- **an identical re-run** agrees on every case (``m = 0``). Its interval is exact: the
  floor's half-width. A non-inferiority margin at or below it cannot be passed by a
  candidate of equal quality, whatever happens — the gate is refused before anything runs;
- **the worst case** is ``m = 1``: two systems of equal accuracy ½ that are never right on
  the same case, the largest second moment a difference under "no change" can have, and the
  variance floor's pseudo-case (``paired.FLOOR_SECOND_MOMENT``): the floor never lowers the
  variance estimate below the worst case the design states. (Different models with
  independent errors disagree on 41–49 % of the quick profile's cases, ``m`` ≈ ½: the second
  power figure.)
- **power** is a normal approximation at ``m`` ∈ ``DISCORDANCES``: for the regression gate,
  the chance to fail when quality truly dropped by the margin (on every benchmark; in one
  benchmark for the per-benchmark scope); for the non-inferiority gate, the chance to pass
  when quality is truly equal. ``bench/gate_calibration.py`` checks it against simulation.

Repeats (K) do not enter: the interval is over cases, each case's value the mean of its
repeats; repeats lower ``m`` (they average run-to-run noise out), which no assumption here
relies on.

The per-benchmark scope gates every benchmark on its own interval. A regression fails when
any benchmark dropped, so the family of ``B`` intervals is Bonferroni-adjusted (each at
level ``1 − α/B``); Holm's step-down fails exactly when Bonferroni's first step does, so the
verdict would be the same, and Bonferroni also gives intervals to print. Non-inferiority
passes only when every benchmark shows it (an intersection–union test), which keeps its
false-pass rate at α with every interval at the unadjusted level.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

from pytest_srbench.core.compare.paired import (
    ALPHA,
    FLOOR_SECOND_MOMENT,
    cases_at_mix,
    expected_half_width,
    hoeffding_interval,
)
from pytest_srbench.core.plan.choices import GATE_SCOPES
from pytest_srbench.core.stats import WILSON_Z

# The worst case agrees with the variance floor's pseudo-case (issue 47: with a floor of ½
# below a worst case of 1, one-case benchmarks gave 6 % false alarms).
WORST_CASE_DISCORDANCE = FLOOR_SECOND_MOMENT
INDEPENDENT_DISCORDANCE = 0.5
DISCORDANCES = (0.1, INDEPENDENT_DISCORDANCE)
ASSUMPTIONS = (
    "identical re-run: every case agrees (exact); worst case: every case differs (two "
    "systems of accuracy 0.5 never right on the same case; the variance floor's pseudo-case); "
    "power: normal approximation with the true variance, at the discordances listed (0.5: two "
    "systems of accuracy 0.5 with independent errors); repeats do not enter (the interval is "
    "over cases)"
)


def gate_z(mode: str, scope: str, benchmarks: int) -> float:
    """The normal quantile of the gate's intervals: 95 % two-sided, Bonferroni-adjusted over
    the benchmarks for a per-benchmark regression gate."""
    if scope == "benchmark" and mode == "regression" and benchmarks > 1:
        return NormalDist().inv_cdf(1 - ALPHA / (2 * benchmarks))
    return WILSON_Z


def plan_groups(plan: Mapping[str, Any]) -> tuple[list[str], list[int], list[float]]:
    """(benchmarks sorted, cases per benchmark, normalised weights) of a plan identity, as a
    comparison groups them: each case once, whatever its repeats."""
    cases = {c.get("repeat_of") or c["id"]: c["benchmark"] for c in plan.get("cases") or []}
    counts = Counter(cases.values())
    names = sorted(counts)
    weights = plan.get("benchmark_weights") or {}
    total = sum(weights[name] for name in names)
    return names, [counts[name] for name in names], [weights[name] / total for name in names]


def _power(edge: float, half: float, sd: float) -> float:
    """P(estimate beyond ``half`` past ``edge``) for a normal estimate: Φ((edge − half)/sd)."""
    if sd <= 0:
        return 1.0 if edge > half else 0.0
    return NormalDist().cdf((edge - half) / sd)


def _half_width(
    interval: str, sizes: Sequence[int], weights: Sequence[float], moment: float, z: float
) -> float:
    """The interval's expected half-width at per-case second moment ``moment`` (Hoeffding's
    does not depend on the data; Newcombe's is approximated by the Wald one's)."""
    if interval == "hoeffding":
        alpha = 2 * (1 - NormalDist().cdf(z))
        return hoeffding_interval(0.0, sizes, weights, alpha)[1]
    return expected_half_width(sizes, weights, [moment] * len(sizes), z)


def _unit(
    sizes: Sequence[int],
    weights: Sequence[float],
    *,
    mode: str,
    margin: float,
    z: float,
    interval: str,
) -> dict[str, Any]:
    """The design of one gated quantity (the macro delta, or one benchmark's delta)."""

    def half(moment: float, at: Sequence[int] = sizes) -> float:
        return _half_width(interval, at, weights, moment, z)

    identical = half(0.0)
    power = []
    for m in DISCORDANCES:
        # regression: a true drop of the margin (so at least that share of cases differ);
        # non-inferiority: equal quality
        drop = margin if mode == "regression" else 0.0
        moment = max(m, drop)
        spread = (w * w * (moment - drop * drop) / n for w, n in zip(weights, sizes, strict=True))
        sd = math.sqrt(sum(spread))
        power.append({"discordance": m, "power": _power(margin, half(moment), sd)})
    # the worst data a regression gate can see: every case lost (Δ = −1 on every benchmark)
    lost = -sum(weights) + half(1.0)
    return {
        "cases": sum(sizes),
        "identical_rerun_half_width": identical,
        "worst_case_half_width": half(WORST_CASE_DISCORDANCE),
        "power": power,
        "can_pass": mode == "regression" or identical < margin,
        "can_fail": lost < 0 if mode == "regression" else True,
        "cases_for_identical_rerun": cases_at_mix(sizes, lambda at: half(0.0, at), margin),
        "cases_for_worst_case": cases_at_mix(
            sizes, lambda at: half(WORST_CASE_DISCORDANCE, at), margin
        ),
    }


def gate_design(
    names: Sequence[str],
    sizes: Sequence[int],
    weights: Sequence[float],
    *,
    mode: str,
    margin: float,
    scope: str = "macro",
    interval: str = "wald",
) -> dict[str, Any]:
    """What the gate can show at this design: half-widths, power, whether it can pass (and
    fail), and the cases (at the same benchmark mix) it would need; ``usable`` is False, with
    ``problem`` saying why, for a gate that can never pass or never fail.

    For the Newcombe interval the design is the Wald interval's (Newcombe's width depends on
    the accuracies as well); such a gate is described but never refused."""
    if scope not in GATE_SCOPES:
        raise ValueError(f"gate scope must be one of {GATE_SCOPES}, got {scope!r}")
    z = gate_z(mode, scope, len(names))
    exact = interval != "newcombe"
    kind = "wald" if interval == "newcombe" else interval
    design: dict[str, Any] = {
        "scope": scope,
        "mode": mode,
        "margin": margin,
        "interval": kind,
        "cases": sum(sizes),
        "benchmarks": len(names),
        "confidence": 1 - 2 * (1 - NormalDist().cdf(z)),
        "assumptions": ASSUMPTIONS,
        "power_at": f"a true macro drop of {margin:g}"
        if mode == "regression" and scope == "macro"
        else f"a true drop of {margin:g} in one benchmark"
        if mode == "regression"
        else "equal quality (true Δ = 0)",
    }
    if scope == "macro":
        design.update(_unit(sizes, weights, mode=mode, margin=margin, z=z, interval=kind))
        design["per_benchmark"] = None
    else:
        rows = [
            {
                "benchmark": name,
                **_unit([n], [1.0], mode=mode, margin=margin, z=z, interval=kind),
            }
            for name, n in zip(names, sizes, strict=True)
        ]
        design.update(
            identical_rerun_half_width=max(r["identical_rerun_half_width"] for r in rows),
            worst_case_half_width=max(r["worst_case_half_width"] for r in rows),
            power=[
                {
                    "discordance": m,
                    "power": min(r["power"][i]["power"] for r in rows),
                    "best": max(r["power"][i]["power"] for r in rows),
                }
                for i, m in enumerate(DISCORDANCES)
            ],
            can_pass=all(r["can_pass"] for r in rows),
            can_fail=any(r["can_fail"] for r in rows),
            per_benchmark=rows,
        )
    design["usable"], design["problem"] = _problem(design) if exact else (True, None)
    return design


def _problem(design: dict[str, Any]) -> tuple[bool, str | None]:
    margin = design["margin"]
    rows = design["per_benchmark"]
    where = f"{_count(design['cases'], 'case')} over {_count(design['benchmarks'], 'benchmark')}"
    if not design["can_pass"]:
        if rows is None:
            return False, (
                f"--srbench-gate=noninferiority --srbench-margin={margin:g} can never pass "
                f"at this plan's size ({where}): even a re-run that agrees on every case "
                f"gets ±{design['identical_rerun_half_width']:.3f}, so a candidate of equal "
                f"quality always fails. It needs about "
                f"{design['cases_for_identical_rerun']:,} cases at this benchmark mix (about "
                f"{design['cases_for_worst_case']:,} if every case differs), or a margin "
                f"above {design['identical_rerun_half_width']:.3f}"
            )
        short = [r for r in rows if not r["can_pass"]]
        names = ", ".join(
            f"{r['benchmark']} ({_count(r['cases'], 'case')}: "
            f"±{r['identical_rerun_half_width']:.3f}, needs {r['cases_for_identical_rerun']:,})"
            for r in short
        )
        return False, (
            f"--srbench-gate=noninferiority --srbench-gate-scope=benchmark "
            f"--srbench-margin={margin:g} can never pass at this plan's size: every benchmark "
            f"must show it, and even a re-run that agrees on every case cannot in {names}. "
            f"Gate the macro score, widen the margin or plan more cases there"
        )
    if not design["can_fail"]:
        scope = "" if rows is None else " --srbench-gate-scope=benchmark"
        return False, (
            f"--srbench-gate=regression{scope} can never fail at this plan's size ({where}): "
            "even losing every case leaves the interval's upper bound at or above 0. Plan "
            "more cases per benchmark"
        )
    return True, None


def design_summary(design: Mapping[str, Any]) -> str:
    """One clause for the verdict line: the power if half the cases differ, and if a tenth
    do (per benchmark: the range over the benchmarks)."""
    by_m = {p["discordance"]: p for p in design["power"]}

    def power(m: float) -> str:
        entry = by_m[m]
        if "best" in entry and round(100 * entry["best"]) != round(100 * entry["power"]):
            return f"{100 * entry['power']:.0f}–{_percent(entry['best'])}"
        return _percent(entry["power"])

    what = (
        f"to detect {design['power_at'].replace('a true ', 'a ', 1)}"
        if design["mode"] == "regression"
        else "to pass at equal quality"
    )
    return (
        f"design power {power(INDEPENDENT_DISCORDANCE)} {what} if half the cases differ "
        f"({power(DISCORDANCES[0])} if a tenth do)"
    )


def _count(number: int, noun: str) -> str:
    return f"{number:,} {noun}" + ("" if number == 1 else "s")


def _percent(value: float) -> str:
    return f"{100 * value:.0f} %"
