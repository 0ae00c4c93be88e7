"""The cost–quality frontier: targets no other target beats on both quality and cost (pure).

Quality is the fixed-weight macro accuracy with a stratified Wilson interval over cases
(``core.stats.stratified_case_interval``: each benchmark at its Kish effective number of
cases, so a case's repeats are one case); cost is the subject spend (what serving the
workload cost; judge and simulator spend is the benchmark's, the same for every target).
Targets with unknown quality or cost are listed apart, never placed on the frontier.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_srbench.core.stats import coverage_caveat, stratified_case_interval

QUALITY_INTERVAL_METHOD = "stratified-case-wilson"
COST_BASIS = "subject cost_usd (judge and simulator spend excluded)"


def _effective(row: Mapping[str, Any]) -> float:
    """A row's effective number of cases; a report from before intervals over cases has
    none, and its cells stand in (exact without repeats)."""
    effective = row.get("accuracy_effective_cases")
    return float(effective if effective is not None else row["total"])


def macro_interval(
    rows: Sequence[Mapping[str, Any]], weights: Mapping[str, float]
) -> list[float] | None:
    """The 95 % interval of the fixed-weight macro accuracy Σ ω_b p_b of one target's
    benchmark rows, over cases (``stratified_case_interval``); ``None`` without cells or
    with an unknown (preview) ``correct``."""
    usable = [row for row in rows if row["total"]]
    if any(row.get("correct") is None for row in usable):
        return None
    return stratified_case_interval(
        [
            (
                weights[row["benchmark"]],
                row["correct"],
                row["total"],
                _effective(row),
                int(row.get("cases") or row["total"]),
            )
            for row in usable
        ]
    )


def macro_worst_coverage(rows: Sequence[Mapping[str, Any]]) -> float | None:
    """The coverage caveat of a macro interval: with one benchmark it is that benchmark's
    interval and carries its caveat (``core.stats.coverage_caveat``); over several
    benchmarks ``None`` (measured in docs/interval-coverage.md)."""
    usable = [row for row in rows if row["total"]]
    if len(usable) != 1:
        return None
    row = usable[0]
    return coverage_caveat(int(row.get("cases") or row["total"]))


def frontier_point(
    run_id: str,
    target: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    weights: Mapping[str, float],
) -> dict[str, Any]:
    """One target as a point: macro quality with its interval, subject cost, identity."""
    own = [row for row in rows if row["target_id"] == target["id"]]
    return {
        "run_id": run_id,
        "target_id": target["id"],
        "kind": target.get("kind", "single"),
        "quality": target.get("macro_accuracy"),
        "quality_ci95": macro_interval(own, weights),
        "quality_ci95_worst_coverage": macro_worst_coverage(own),
        "cost_usd": target.get("cost_usd"),
        "total_spend_usd": target.get("total_spend_usd"),
        "complete": target.get("complete"),
    }


def _dominates(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return bool(
        a["quality"] >= b["quality"]
        and a["cost_usd"] <= b["cost_usd"]
        and (a["quality"] > b["quality"] or a["cost_usd"] < b["cost_usd"])
    )


def frontier(points: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Mark every point ``on_frontier``; unknown quality or cost goes to ``unplaced``."""
    placed = []
    unplaced = []
    for point in points:
        if point.get("quality") is None or point.get("cost_usd") is None:
            unplaced.append({**point, "on_frontier": False})
        else:
            placed.append(dict(point))
    for point in placed:
        point["on_frontier"] = not any(_dominates(other, point) for other in placed)
    placed.sort(key=lambda p: (p["cost_usd"], -p["quality"], p["run_id"], p["target_id"]))
    return {
        "quality": "macro_accuracy",
        "quality_interval_method": QUALITY_INTERVAL_METHOD,
        "cost_basis": COST_BASIS,
        "points": placed,
        "unplaced": unplaced,
    }
