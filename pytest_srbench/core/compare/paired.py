"""Paired statistics for comparing two runs case by case (pure arithmetic, no I/O).

Every function takes per-benchmark groups of per-case values. A value is a case's outcome in
[0, 1] (0 or 1, or the mean over repeats); a difference is candidate minus baseline in
[-1, 1]. Weights are the normalised benchmark weights of the macro quality.

- ``hoeffding_interval``: sr-bench's primary interval (valid for any bounded differences,
  wide).
- ``stratified_bootstrap``: sr-bench's diagnostic, bit-exact with Python's Mersenne Twister.
- ``stratified_wald``: the gate's default: a normal interval for the weighted difference whose
  per-benchmark variance is the mean squared difference with one pseudo-case at 1 (a floor
  that keeps a one-case benchmark, or a benchmark where every case agreed, from claiming no
  variance); calibrated in docs/gate-calibration.md.
- ``newcombe_interval`` / ``stratified_newcombe``: Newcombe's square-and-add (hybrid Wilson
  score) interval for a paired difference, combined across benchmarks by MOVER.
- ``sign_test_p``: exact two-sided sign test on the non-tied pairs (McNemar's exact test).
- ``cases_for_half_width``: how many cases a margin needs at the observed discordance.
- ``expected_half_width`` / ``cases_at_mix``: the stratified Wald interval's half-width a
  design can expect at a given per-case second moment, and the cases (at the same benchmark
  mix) that bring it under a target; the gate's design (``design.py``) is built on them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

from pytest_srbench.core.stats import WILSON_Z, wilson_bounds

ALPHA = 0.05
LN_TWO_OVER_ALPHA = math.log(2 / ALPHA)
BOOTSTRAP_SEED = 20260918
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_LOW_INDEX = 49
BOOTSTRAP_HIGH_INDEX = 1949

HOEFFDING_METHOD = "weighted-paired-hoeffding"
NEWCOMBE_METHOD = "weighted-stratified-newcombe-mover"
WALD_METHOD = "weighted-stratified-wald-variance-floor"
# The pseudo-case every benchmark's variance starts from: the largest second moment a paired
# difference of two systems of equal accuracy can have, 1 (accuracy ½ each, never right on the
# same case). A pseudo-case below the true second moment lowers the variance estimate: at ½
# (independent errors at accuracy ½), one-case benchmarks whose runs always disagree gave 6 %
# false alarms (issue 47); at 1 the estimate's expectation is never below the truth.
FLOOR_SECOND_MOMENT = 1.0

Group = Sequence[float]


def _clamp(low: float, high: float) -> list[float]:
    return [max(-1.0, low), min(1.0, high)]


def hoeffding_interval(
    delta: float, group_sizes: Sequence[int], weights: Sequence[float], alpha: float = ALPHA
) -> list[float]:
    """``delta ± sqrt(2 ln(2/α) Σ ω_b² / n_b)``, clamped to [-1, 1]; never zero width."""
    spread = sum(w * w / n for w, n in zip(weights, group_sizes, strict=True))
    log_term = LN_TWO_OVER_ALPHA if alpha == ALPHA else math.log(2 / alpha)
    radius = math.sqrt(2 * log_term * spread)
    return _clamp(delta - radius, delta + radius)


def stratified_bootstrap(
    groups: Sequence[Group],
    weights: Sequence[float],
    *,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> list[float]:
    """Percentile bootstrap of ``Σ ω_b · mean(resampled differences of b)``.

    sr-bench's definition: a fresh ``random.Random(seed)``; per resample and per group (in
    the given order) ``n_b`` indices ``floor(random() · n_b)``; the sample is
    ``value += sum(picked) / n_b * ω_b`` summed left to right; the values sorted; [49] and
    [1949] of 2000. This runs it vectorised: numpy's MT19937 is started from the very state
    of ``random.Random(seed)``, draws in the same order, and sums with the same operations in
    the same order, so the result is bit-identical to the plain loop (the test oracle
    ``tests/oracles/bootstrap.py``; tests/core/compare/test_paired.py holds them equal).
    """
    import numpy as np  # loaded only when a comparison bootstraps (it costs ~0.1 s to import)

    state = random.Random(seed).getstate()[1]
    rng = np.random.RandomState()
    rng.set_state(("MT19937", np.array(state[:624], dtype=np.uint32), int(state[624]), 0, 0.0))
    arrays = [np.asarray(group, dtype=np.float64) for group in groups]
    per_resample = sum(len(group) for group in arrays)
    chunk = max(1, min(resamples, 4_000_000 // max(per_resample, 1)))
    samples = np.empty(resamples)
    done = 0
    while done < resamples:
        rows = min(chunk, resamples - done)
        draws = rng.random_sample((rows, per_resample))
        value = np.zeros(rows)
        start = 0
        for group, weight in zip(arrays, weights, strict=True):
            size = len(group)
            picked = group[np.floor(draws[:, start : start + size] * size).astype(np.intp)]
            total = np.cumsum(picked, axis=1)[:, -1]  # sequential, as Python's sum
            value = value + total / size * weight
            start += size
        samples[done : done + rows] = value
        done += rows
    samples.sort()
    low = round(resamples * BOOTSTRAP_LOW_INDEX / BOOTSTRAP_RESAMPLES)
    high = round(resamples * BOOTSTRAP_HIGH_INDEX / BOOTSTRAP_RESAMPLES)
    return [float(samples[low]), float(samples[high])]


def sign_test_p(wins: int, losses: int) -> float:
    """Exact two-sided binomial p-value of ``wins`` against ``losses`` at one half.

    With one binary outcome per case per side this is McNemar's exact test on the
    discordant pairs; ties carry no information and are left out.
    """
    trials = wins + losses
    if trials == 0:
        return 1.0
    tail = sum(math.comb(trials, k) for k in range(min(wins, losses) + 1))
    return float(min(1.0, 2 * tail / 2**trials))


def _corrected_phi(candidate: Group, baseline: Group) -> float:
    """Newcombe's continuity-corrected correlation of the paired outcomes (0 when undefined).

    For 0/1 values the numerator is ``ad - bc`` of the 2×2 table and the denominator the
    product of its four margins; ``ad - bc`` above ``n/2`` is reduced by ``n/2``, values in
    ``[0, n/2]`` count as no correlation.
    """
    n = len(candidate)
    sx = math.fsum(candidate)
    sy = math.fsum(baseline)
    sxy = math.fsum(x * y for x, y in zip(candidate, baseline, strict=True))
    sxx = math.fsum(x * x for x in candidate)
    syy = math.fsum(y * y for y in baseline)
    cross = n * sxy - sx * sy
    if cross > n / 2:
        cross -= n / 2
    elif cross >= 0:
        cross = 0.0
    spread = (n * sxx - sx * sx) * (n * syy - sy * sy)
    if spread <= 0:
        return 0.0
    return max(-1.0, min(1.0, cross / math.sqrt(spread)))


def newcombe_interval(
    candidate: Group, baseline: Group, z: float = WILSON_Z
) -> tuple[float, list[float]]:
    """(difference, [low, high]) of Newcombe's square-and-add interval for paired data.

    The Wilson intervals of the two proportions are combined with the correlation of the
    pairs (Newcombe 1998, method 10). Values may be repeat means; then the Wilson bounds
    treat each case as one observation, which is conservative.
    """
    n = len(candidate)
    if n == 0 or n != len(baseline):
        raise ValueError("paired groups must be non-empty and of equal size")
    p1 = math.fsum(candidate) / n
    p2 = math.fsum(baseline) / n
    l1, u1 = wilson_bounds(p1, n, z)
    l2, u2 = wilson_bounds(p2, n, z)
    phi = _corrected_phi(candidate, baseline)
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2
    delta = p1 - p2
    return delta, _clamp(delta - math.sqrt(max(below, 0.0)), delta + math.sqrt(max(above, 0.0)))


def stratified_newcombe(
    candidate_groups: Sequence[Group],
    baseline_groups: Sequence[Group],
    weights: Sequence[float],
    z: float = WILSON_Z,
) -> list[float]:
    """The weighted sum of per-benchmark Newcombe intervals, combined by MOVER.

    ``L = Σ ω δ − sqrt(Σ ω² (δ_b − l_b)²)`` and ``U = Σ ω δ + sqrt(Σ ω² (u_b − δ_b)²)``
    (Zou and Donner's method of variance estimates recovery); one benchmark gives Newcombe's
    interval itself.
    """
    centre = 0.0
    below = 0.0
    above = 0.0
    for cand, base, weight in zip(candidate_groups, baseline_groups, weights, strict=True):
        delta, (low, high) = newcombe_interval(cand, base, z)
        centre += weight * delta
        below += (weight * (delta - low)) ** 2
        above += (weight * (high - delta)) ** 2
    return _clamp(centre - math.sqrt(below), centre + math.sqrt(above))


def floored_second_moment(diffs: Group) -> float:
    """``(Σ d² + 1) / (n + 1)``: a benchmark's mean squared difference with one pseudo-case at
    ``FLOOR_SECOND_MOMENT``.

    The mean squared difference (not the variance around the observed mean) is the variance
    of a difference under "no change", the hypothesis the gate tests; it is never below the
    variance, so the interval errs wide when the systems differ. The pseudo-case is the
    floor: one case gives no estimate of its own spread, and a few cases that all agree do
    not show that the systems always agree."""
    return (math.fsum(d * d for d in diffs) + FLOOR_SECOND_MOMENT) / (len(diffs) + 1)


def stratified_wald(
    diff_groups: Sequence[Group], weights: Sequence[float], z: float = WILSON_Z
) -> list[float]:
    """``Σ ω_b d̄_b ± z · sqrt(Σ ω_b² v_b / n_b)`` with ``v_b`` the floored second moment of
    benchmark b, clamped to [-1, 1]: the gate's default interval for the macro delta.

    Calibrated by simulation over independent and correlated errors, discordance up to 1, one-
    to 2,000-case benchmarks and repeats (docs/gate-calibration.md); Newcombe's intervals
    joined by MOVER undercover there (86 % at the smoke profile's sizes)."""
    centre = 0.0
    spread = 0.0
    for diffs, weight in zip(diff_groups, weights, strict=True):
        n = len(diffs)
        if n == 0:
            raise ValueError("every benchmark group needs at least one case")
        centre += weight * math.fsum(diffs) / n
        spread += weight * weight * floored_second_moment(diffs) / n
    half = z * math.sqrt(spread)
    return _clamp(centre - half, centre + half)


def expected_half_width(
    sizes: Sequence[int],
    weights: Sequence[float],
    second_moments: Sequence[float],
    z: float = WILSON_Z,
) -> float:
    """The half-width ``stratified_wald`` gives, in expectation of its variance, when the
    per-case differences of benchmark b have second moment ``m_b`` (the share of cases that
    differ, for 0/1 outcomes): ``z · sqrt(Σ ω_b² (n_b m_b + 1) / ((n_b + 1) n_b))``. At
    ``m_b = 0`` (a re-run that agrees on every case) it is exact."""
    spread = 0.0
    for n, weight, moment in zip(sizes, weights, second_moments, strict=True):
        spread += weight * weight * (n * moment + FLOOR_SECOND_MOMENT) / ((n + 1) * n)
    return z * math.sqrt(spread)


def cases_at_mix(
    sizes: Sequence[int], half_width_of: Callable[[list[int]], float], target: float
) -> int:
    """The fewest cases, every benchmark scaled by one factor (``ceil(s · n_b)``, at least
    one each), for which ``half_width_of(scaled sizes)`` is below ``target`` (it must shrink
    towards 0 as the sizes grow)."""
    if target <= 0:
        raise ValueError("the target half-width must be > 0")

    def scaled(factor: float) -> list[int]:
        return [max(1, math.ceil(factor * n)) for n in sizes]

    def narrow_enough(factor: float) -> bool:
        return half_width_of(scaled(factor)) < target

    low, high = 0.0, 1.0
    while not narrow_enough(high):
        low, high = high, high * 2
    for _ in range(64):  # 64 halvings: far finer than one case
        middle = (low + high) / 2
        low, high = (low, middle) if narrow_enough(middle) else (middle, high)
    return sum(scaled(high))


def cases_for_half_width(
    diff_groups: Sequence[Group], weights: Sequence[float], margin: float, z: float = WILSON_Z
) -> int:
    """Cases needed, at this benchmark mix, for the gate's interval (``stratified_wald``) to
    reach half-width ``margin`` at the observed discordance.

    Each benchmark's second moment is its own mean squared difference, floored at one pseudo-
    case of the pooled one: ``max(Q_b / n_b, (Q_b + m̄) / (n_b + 1))`` with ``Q_b = Σ d²`` and
    ``m̄ = (Σ_b Q_b + 1) / (N + 1)``. A one-case benchmark, or one whose few cases all
    agreed, thus counts the spread the other benchmarks show instead of none (the plain
    variance made the estimate 0.38 times the true count at the smoke profile's sizes), and
    the estimate exists even when every difference is equal (with no discordant pair, ``m̄``
    is ``1 / (N + 1)``). Checked against the true count by simulation in
    ``bench/gate_calibration.py``.
    """
    if margin <= 0:
        raise ValueError("margin must be > 0")
    squares = [math.fsum(d * d for d in group) for group in diff_groups]
    sizes = [len(group) for group in diff_groups]
    pooled = (math.fsum(squares) + FLOOR_SECOND_MOMENT) / (sum(sizes) + 1)
    moments = [max(q / n, (q + pooled) / (n + 1)) for q, n in zip(squares, sizes, strict=True)]
    return cases_at_mix(
        sizes, lambda scaled: expected_half_width(scaled, weights, moments, z), margin
    )
