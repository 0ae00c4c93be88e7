"""Descriptive statistics shared by every report: Wilson intervals and percentiles."""

from __future__ import annotations

import math
from collections.abc import Sequence

WILSON_Z = 1.959963984540054


def wilson_interval(correct: int, total: int, z: float = WILSON_Z) -> list[float] | None:
    """Wilson score interval for ``correct / total``; ``None`` when ``total`` is 0.

    The clamps return the exact integers 0 and 1 at the edges, as sr-bench does.
    """
    if total <= 0:
        return None
    return wilson_bounds(correct / total, total, z)


def wilson_bounds(p: float, n: float, z: float = WILSON_Z) -> list[float]:
    """Wilson score bounds for an observed proportion ``p`` over ``n`` > 0 observations
    (``p`` may be a mean of values in [0, 1], as with repeated outcomes)."""
    z2 = z * z
    den = 1 + z2 / n
    center = (p + z2 / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / den
    return [max(0, center - half), min(1, center + half)]


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy "linear"); ``None`` when empty."""
    if not values:
        return None
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    lo = math.floor(at)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (at - lo)
