"""The cost–quality frontier: targets no other target beats on both quality and cost (pure).

Quality is the fixed-weight macro accuracy with a weighted Wilson interval (per-benchmark
Wilson intervals combined by MOVER); cost is the subject spend (what serving the workload
cost; judge and simulator spend is the benchmark's, the same for every target). Targets
with unknown quality or cost are listed apart, never placed on the frontier.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_srbench.core.stats import wilson_interval

QUALITY_INTERVAL_METHOD = "weighted-wilson-mover"
COST_BASIS = "subject cost_usd (judge and simulator spend excluded)"


def macro_interval(
    rows: Sequence[Mapping[str, Any]], weights: Mapping[str, float]
) -> list[float] | None:
    """Σ ω_b p_b ± sqrt(Σ ω_b² (p_b − bound_b)²) over the benchmark rows of one target."""
    usable = [row for row in rows if row["total"]]
    total_weight = sum(weights[row["benchmark"]] for row in usable)
    if not usable or total_weight <= 0:
        return None
    centre = 0.0
    below = 0.0
    above = 0.0
    for row in usable:
        omega = weights[row["benchmark"]] / total_weight
        p = row["correct"] / row["total"]
        bounds = wilson_interval(row["correct"], row["total"])
        assert bounds is not None
        centre += omega * p
        below += (omega * (p - bounds[0])) ** 2
        above += (omega * (bounds[1] - p)) ** 2
    return [max(0.0, centre - math.sqrt(below)), min(1.0, centre + math.sqrt(above))]


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
