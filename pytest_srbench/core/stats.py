"""Descriptive statistics shared by every report: Wilson intervals (over cells and over
cases), their worst-case coverage, and percentiles."""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

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


# Within EDGE_COUNT effective successes (or failures) of 0 (or of all), the printed interval is
# the hull of Wilson's and Clopper–Pearson's: Wilson alone covers as little as 83.8 % for a true
# accuracy near 0 or 1 (89.5 % at 58–110 cases and accuracy 0.005–0.01, issue 47), and the hull
# covers ≥ 95 % there. 12 is the smallest count for which every n up to 600 keeps ≥ 93 % for
# any true accuracy in [0, 1] (bench/interval_coverage.py checks it exactly).
EDGE_COUNT = 12


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _beta_fraction(x: float, a: float, b: float) -> float:
    """The continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 10_000):
        step = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        for term in (step, -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + term * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + term / c
            c = c if abs(c) > tiny else tiny
            result *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return result


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the Beta(a, b) distribution function at x (a, b > 0 real)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(x, a, b) / a
    return 1 - front * _beta_fraction(1 - x, b, a) / b


def beta_quantile(q: float, a: float, b: float) -> float:
    """The x with I_x(a, b) = q, by bisection to machine precision."""
    low, high = 0.0, 1.0
    for _ in range(200):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        low, high = (mid, high) if regularized_beta(mid, a, b) < q else (low, mid)
    return (low + high) / 2


def clopper_pearson_bounds(p: float, n: float, z: float = WILSON_Z) -> list[float]:
    """Clopper–Pearson bounds at x = p·n successes of n (real x and n allowed: the beta
    quantiles α/2 of Beta(x, n − x + 1) and 1 − α/2 of Beta(x + 1, n − x))."""
    tail = math.erfc(z / math.sqrt(2)) / 2
    x = p * n
    low = 0.0 if x <= 0 else beta_quantile(tail, x, n - x + 1)
    high = 1.0 if x >= n else beta_quantile(1 - tail, x + 1, n - x)
    return [low, high]


def accuracy_bounds(
    p: float, n: float, z: float = WILSON_Z, cases: float | None = None
) -> list[float]:
    """The printed accuracy interval at proportion ``p`` over ``n`` (effective) cases: Wilson's,
    widened to the hull with Clopper–Pearson's within ``EDGE_COUNT`` successes or failures of
    the edge (where Wilson undercovers); Wilson's exactly elsewhere.

    With repeats the effective size ``n`` can exceed the number of ``cases``; near the edge the
    information is in how many cases succeed, not cells (a rare success is often a case that
    always succeeds), so the edge and Clopper–Pearson's bounds are taken over ``cases``: with
    K = 5 and skewed case difficulty, Wilson at the effective size covered 89.5–92 % there."""
    low, high = wilson_bounds(p, n, z)
    units = n if cases is None else min(n, cases)
    if min(p, 1 - p) * units > EDGE_COUNT + 1e-9:  # 12/80 · 80 is 12.000000000000002
        return [low, high]
    exact_low, exact_high = clopper_pearson_bounds(p, units, z)
    return [min(low, exact_low), max(high, exact_high)]


def accuracy_interval(correct: int, total: int, z: float = WILSON_Z) -> list[float] | None:
    """``accuracy_bounds`` for ``correct / total``; ``None`` when ``total`` is 0."""
    if total <= 0:
        return None
    return accuracy_bounds(correct / total, total, z)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy "linear"); ``None`` when empty."""
    if not values:
        return None
    ordered = sorted(values)
    at = (len(ordered) - 1) * q
    lo = math.floor(at)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (at - lo)


# --- intervals over cases --------------------------------------------------------------------
#
# The unit of sampling is the case: with ``--srbench-repeats K`` a case's K cells are one
# cluster, not K independent observations. ``case_interval`` is Wilson's interval at the Kish
# effective number of cases; ``stratified_case_interval`` joins benchmarks with fixed weights.
# Their coverage is measured in docs/interval-coverage.md (bench/interval_coverage.py).

COVERAGE_ACCURACY_RANGE = (0.3, 0.9)  # the range Wilson's own worst case was stated for
LOW_COVERAGE = 0.93
# The largest case count at which the printed interval (``accuracy_interval``) covers under
# LOW_COVERAGE for some true accuracy in [0, 1]: none (exact; its lowest is 93.03 % at 102
# cases; bench/interval_coverage.py checks every n to 300 and a few to 2,000, a test to 120).
# Wilson alone was below it at every n (83.8 % near 0 and 1) and, in 0.3–0.9, up to 55 cases.
LOW_COVERAGE_MAX_CASES = 0


def student_t_mass(t: float, df: int) -> float:
    """P(|T| ≤ t) for Student's t with ``df`` ≥ 1 degrees of freedom (exact: Abramowitz &
    Stegun 26.7.3 and 26.7.4, a finite series in θ = atan(t / √df))."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:
        term = math.cos(theta)
        series = 0.0 if df == 1 else term
        for j in range(3, df - 1, 2):  # cos θ (1 + 2/3 cos²θ + 2·4/(3·5) cos⁴θ + …)
            term *= c2 * (j - 1) / j
            series += term
        return 2 / math.pi * (theta + math.sin(theta) * series)
    term = 1.0
    series = 1.0
    for j in range(2, df - 1, 2):  # 1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + …
        term *= c2 * (j - 1) / j
        series += term
    return math.sin(theta) * series


@functools.cache
def student_t_quantile(df: int, z: float = WILSON_Z) -> float:
    """The t with P(|T| ≤ t) = P(|Z| ≤ z) for Student's t with ``df`` degrees of freedom (the
    t counterpart of a normal quantile z), by bisection to machine precision."""
    mass = math.erf(z / math.sqrt(2))
    low, high = z, z
    while student_t_mass(high, df) < mass:
        high *= 2
    for _ in range(200):
        mid = (low + high) / 2
        if mid in (low, high):
            break
        low, high = (mid, high) if student_t_mass(mid, df) < mass else (low, mid)
    return high


def effective_cases(clusters: Sequence[tuple[int, int]], z: float = WILSON_Z) -> Fraction | None:
    """Kish effective number of independent cases behind ``Σ correct / Σ cells``.

    With n cases, case i having c_i correct of k_i cells and p = Σc / Σk, the cluster-robust
    variance of p is v = n / (n − 1) · Σ (c_i − p k_i)² / (Σk)², estimated with n − 1 degrees
    of freedom. The effective size is p (1 − p) / v scaled by (z / t)², t being Student's
    quantile at n − 1 degrees of freedom (so Wilson's half-width at that size is about
    t·√v: the small-sample price of estimating v), and kept within [n, Σk]: a case mean in
    [0, 1] has a variance of at most p (1 − p) (never fewer than n cases), and K repeats of a
    case with success probability p_i have a variance of at least p (1 − p) / K (never more
    than the cells). Without repeats, or when every repeat of every case agrees, p (1 − p) / v
    is n − 1, so the result is exactly n; a single case, or p of 0 or 1, gives n. Exact
    rational arithmetic up to the t quantile, so equal inputs give equal outputs. ``None``
    without cells.
    """
    n = len(clusters)
    cells = sum(k for _, k in clusters)
    if n == 0 or cells == 0:
        return None
    right = sum(c for c, _ in clusters)
    if n == 1 or right in (0, cells):
        return Fraction(n)
    p = Fraction(right, cells)
    spread = sum(
        (count * (c - p * k) ** 2 for (c, k), count in Counter(clusters).items()), Fraction(0)
    )
    if spread == 0:
        return Fraction(cells)
    kish = p * (1 - p) * cells * cells * (n - 1) / (n * spread)
    if kish <= n:
        return Fraction(n)
    kish *= Fraction(z / student_t_quantile(n - 1, z)) ** 2
    return min(max(kish, Fraction(n)), Fraction(cells))


def case_interval(clusters: Sequence[tuple[int, int]], z: float = WILSON_Z) -> list[float] | None:
    """Wilson interval of ``Σ correct / Σ cells`` at the Kish effective number of cases.

    Without repeats (every case one cell) this is exactly ``wilson_interval(correct, total)``;
    with K identical repeats of every case it is the interval of one repeat. ``None`` without
    cells.
    """
    size = effective_cases(clusters, z)
    if size is None:
        return None
    right = sum(c for c, _ in clusters)
    cells = sum(k for _, k in clusters)
    return accuracy_bounds(right / cells, float(size), z, cases=len(clusters))


def stratified_case_interval(
    strata: Sequence[tuple[float, int, int, float] | tuple[float, int, int, float, int]],
    z: float = WILSON_Z,
) -> list[float] | None:
    """Interval (``accuracy_bounds``) of the weighted mean Σ ω_b p_b over strata (weight,
    correct, cells, effective cases[, cases]), the weights renormalised over strata with cells.
    With every stratum's number of cases given, Clopper–Pearson's hull near the edge is taken
    over at most their total (as ``case_interval`` does over one stratum's cases).

    The variance of the weighted mean is estimated twice — with each stratum's own
    p_b (1 − p_b) / e_b, and with the pooled p (1 − p) Σ ω_b² / e_b (which keeps a variance in
    a stratum observed at 0 or 1, or from one case) — and the larger is used: the interval is
    Wilson's at p with n = p (1 − p) / variance (Σ ω_b² / e_b)⁻¹ when p is 0 or 1). One
    stratum gives exactly that stratum's ``case_interval``. ``None`` when no stratum has cells
    or the weights sum to 0.
    """
    usable = [s for s in strata if s[2] > 0 and s[3] > 0]
    total_weight = sum((Fraction(s[0]) for s in usable), Fraction(0))
    if not usable or total_weight <= 0:
        return None
    p = Fraction(0)
    own = Fraction(0)
    design = Fraction(0)
    for weight, right, cells, effective, *_ in usable:
        omega = Fraction(weight) / total_weight
        p_b = Fraction(right, cells)
        p += omega * p_b
        own += omega * omega * p_b * (1 - p_b) / Fraction(effective)
        design += omega * omega / Fraction(effective)
    variance = max(own, p * (1 - p) * design)
    size = p * (1 - p) / variance if variance > 0 else 1 / design
    counted = [s[4] for s in usable if len(s) > 4]
    cases = sum(counted) if len(counted) == len(usable) else None
    return accuracy_bounds(float(p), float(size), z, cases=cases)


def _binomial_pmf(n: int, k: int, p: float) -> float:
    return math.comb(n, k) * p**k * (1 - p) ** (n - k)


def wilson_worst_coverage(
    n: int, accuracies: tuple[float, float] = COVERAGE_ACCURACY_RANGE, z: float = WILSON_Z
) -> float:
    """The lowest coverage of the Wilson interval over n Bernoulli trials for a true
    proportion in ``accuracies`` (exact; see ``worst_coverage``)."""
    return worst_coverage(
        [wilson_interval(k, n, z) or [0.0, 1.0] for k in range(n + 1)], accuracies
    )


def accuracy_worst_coverage(
    n: int, accuracies: tuple[float, float] = (0.0, 1.0), z: float = WILSON_Z
) -> float:
    """The lowest coverage of the printed interval (``accuracy_interval``) over n Bernoulli
    trials for a true proportion in ``accuracies`` (exact; the whole [0, 1] by default)."""
    return worst_coverage(
        [accuracy_interval(k, n, z) or [0.0, 1.0] for k in range(n + 1)], accuracies
    )


def worst_coverage(bounds: Sequence[Sequence[float]], accuracies: tuple[float, float]) -> float:
    """The infimum over a true proportion in ``accuracies`` of the probability that the
    interval ``bounds[k]`` of k successes of n = len(bounds) − 1 covers it.

    With bounds monotone in k, between two interval end points the set of covering outcomes
    k1..k2 is fixed and the coverage P(k1 ≤ X ≤ k2) rises then falls (its derivative
    n·[b(k1 − 1) − b(k2)] over n − 1 trials changes sign at most once, from + to −), so its
    infimum is a one-sided limit at an end point — where the outcome whose interval ends there
    no longer covers — or a range end.
    """
    n = len(bounds) - 1
    low, high = accuracies

    def coverage(p: float, leaving: int | None) -> float:
        return math.fsum(
            _binomial_pmf(n, k, p)
            for k, (lo, hi) in enumerate(bounds)
            if lo <= p <= hi and k != leaving
        )

    points: list[tuple[float, int | None]] = [(low, None), (high, None)]
    points += [(end, k) for k, pair in enumerate(bounds) for end in pair if low < end < high]
    return min(coverage(p, leaving) for p, leaving in points)


@functools.cache
def coverage_caveat(cases: int) -> float | None:
    """The worst coverage (rounded down to 0.1 %) of the printed 95 % interval over ``cases``
    cases for a true accuracy in [0, 1], when it is below 93 %; ``None`` otherwise (since
    issue 47, at every case count: ``LOW_COVERAGE_MAX_CASES``)."""
    if cases < 1 or cases > LOW_COVERAGE_MAX_CASES:
        return None
    worst = accuracy_worst_coverage(cases)
    return math.floor(worst * 1000) / 1000 if worst < LOW_COVERAGE else None
