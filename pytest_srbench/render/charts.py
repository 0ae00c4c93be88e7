"""Geometry of the HTML report's SVG charts (pure): scales, ticks and shapes in pixels.

Templates draw what these functions return; nothing here computes a metric — every value
comes from the report dict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

TOKEN_BUCKETS = (
    ("input_tokens", "input"),
    ("cached_input_tokens", "cached input"),
    ("cache_write_tokens", "cache write"),
    ("output_tokens", "output"),
)


def interval_bar(
    value: float | None, bounds: Sequence[float] | None, width: float = 160
) -> dict[str, Any] | None:
    """A [0, 1] bar: filled to ``value``, a whisker from the interval's low to high."""
    if value is None:
        return None
    low, high = (bounds[0], bounds[1]) if bounds else (value, value)
    return {
        "width": width,
        "fill": round(value * width, 2),
        "low": round(low * width, 2),
        "high": round(high * width, 2),
    }


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value <= high + step / 2:
        ticks.append(round(value, 12))
        value += step
    return ticks


def _money(value: float) -> str:
    if value == 0:
        return "$0"
    if value >= 1:
        return f"${value:,.2f}"
    digits = max(2, -math.floor(math.log10(value)) + 1)
    return f"${value:.{digits}f}"


def quality_cost_chart(
    points: Sequence[Mapping[str, Any]], width: int = 640, height: int = 360
) -> dict[str, Any] | None:
    """Scatter of quality (y, with its interval) against cost (x, log scale when the costs
    span more than a factor of 20); the frontier joined left to right."""
    placed = [p for p in points if p.get("quality") is not None and p.get("cost_usd") is not None]
    if not placed:
        return None
    left, right, top, bottom = 64, 110, 16, 44
    costs = [float(p["cost_usd"]) for p in placed]
    positive = [c for c in costs if c > 0]
    use_log = bool(positive) and len(positive) == len(costs) and max(costs) / min(positive) > 20
    if use_log:
        lo, hi = math.log10(min(positive)), math.log10(max(positive))
        lo, hi = (lo - 0.3, hi + 0.3) if hi > lo else (lo - 1, hi + 1)
        x_ticks = [10**e for e in range(math.floor(lo), math.ceil(hi) + 1)]
    else:
        hi_cost = max(costs) or 1.0
        x_ticks = nice_ticks(0.0, hi_cost * 1.1)
        lo, hi = 0.0, x_ticks[-1]

    def x_of(cost: float) -> float:
        span = width - left - right
        if use_log:
            return left + (math.log10(max(cost, 10**lo)) - lo) / (hi - lo) * span
        return left + (cost - lo) / (hi - lo) * span

    def y_of(quality: float) -> float:
        return top + (1 - quality) * (height - top - bottom)

    shapes = []
    for p in sorted(placed, key=lambda p: (float(p["cost_usd"]), -float(p["quality"]))):
        ci = p.get("quality_ci95") or [p["quality"], p["quality"]]
        shapes.append(
            {
                "x": round(x_of(float(p["cost_usd"])), 2),
                "y": round(y_of(float(p["quality"])), 2),
                "y_low": round(y_of(float(ci[0])), 2),
                "y_high": round(y_of(float(ci[1])), 2),
                "label": p["target_id"],
                "run_id": p.get("run_id", ""),
                "on_frontier": bool(p.get("on_frontier")),
                "quality": p["quality"],
                "ci": p.get("quality_ci95"),
                "worst_coverage": p.get("quality_ci95_worst_coverage"),
                "cost": p["cost_usd"],
            }
        )
    frontier = [s for s in shapes if s["on_frontier"]]
    path = " ".join(f"{'M' if i == 0 else 'L'}{s['x']},{s['y']}" for i, s in enumerate(frontier))
    visible_x = [t for t in x_ticks if (math.log10(t) if use_log else t) >= lo - 1e-9]
    return {
        "width": width,
        "height": height,
        "plot": {"left": left, "right": width - right, "top": top, "bottom": height - bottom},
        "points": shapes,
        "frontier_path": path,
        "x_ticks": [{"x": round(x_of(t), 2), "label": _money(t)} for t in visible_x],
        "y_ticks": [{"y": round(y_of(q), 2), "label": f"{q:.1f}"} for q in nice_ticks(0, 1)],
        "log_x": use_log,
        "low_coverage": any(s["worst_coverage"] is not None for s in shapes),
    }


def token_bars(targets: Sequence[Mapping[str, Any]], width: float = 420) -> list[dict[str, Any]]:
    """Per target, the four exclusive token buckets as segments of one bar (shared scale)."""
    totals = [sum((t.get("tokens") or {}).values()) for t in targets]
    top = max(totals, default=0) or 1
    rows = []
    for target, total in zip(targets, totals, strict=True):
        tokens = target.get("tokens")
        segments = []
        offset = 0.0
        for key, label in TOKEN_BUCKETS:
            count = (tokens or {}).get(key, 0)
            length = count / top * width
            segments.append(
                {"key": key, "label": label, "count": count, "x": round(offset, 2),
                 "width": round(length, 2)}
            )  # fmt: skip
            offset += length
        rows.append({"target_id": target["id"], "known": tokens is not None, "total": total,
                     "segments": segments, "width": width})  # fmt: skip
    return rows


def histogram_bars(
    edges: Sequence[float], counts: Sequence[int], width: int = 280, height: int = 90
) -> dict[str, Any]:
    """Bars of one target's histogram, with the first and last edge as axis labels."""
    top = max(counts, default=0) or 1
    bar = width / max(len(counts), 1)
    return {
        "width": width,
        "height": height,
        "bars": [
            {
                "x": round(i * bar, 2),
                "width": round(max(bar - 1, 1), 2),
                "height": round(c / top * (height - 14), 2),
                "y": round(height - 14 - c / top * (height - 14), 2),
                "count": c,
                "from": edges[i],
                "to": edges[i + 1],
            }
            for i, c in enumerate(counts)
        ],
        "first": edges[0] if edges else 0,
        "last": edges[-1] if edges else 0,
        "total": sum(counts),
    }


def delta_forest(
    rows: Sequence[Mapping[str, Any]], width: int = 520, row_height: int = 26
) -> dict[str, Any]:
    """Intervals of quality deltas on a shared [-1, 1]-clipped axis with a zero line."""
    spans = [b for r in rows for b in r["intervals"].values() if b is not None]
    low = min([-0.05, *[float(b[0]) for b in spans]])
    high = max([0.05, *[float(b[1]) for b in spans]])
    low, high = max(-1.0, low), min(1.0, high)
    left, right = 150, 20

    def x_of(value: float) -> float:
        return left + (value - low) / (high - low) * (width - left - right)

    lines = []
    y = 18
    for row in rows:
        for name, bounds in row["intervals"].items():
            if bounds is None:
                continue
            lines.append(
                {"label": f"{row['label']} · {name}", "y": y, "x1": round(x_of(bounds[0]), 2),
                 "x2": round(x_of(bounds[1]), 2), "cx": round(x_of(row["delta"]), 2),
                 "low": bounds[0], "high": bounds[1], "delta": row["delta"]}
            )  # fmt: skip
            y += row_height
    ticks = nice_ticks(low, high, 6)
    return {
        "width": width,
        "height": y + 20,
        "zero": round(x_of(0.0), 2),
        "lines": lines,
        "ticks": [
            {"x": round(x_of(t), 2), "label": f"{t:+.2f}"} for t in ticks if low <= t <= high
        ],
    }
