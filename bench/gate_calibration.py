"""Calibration of the paired comparison intervals, the CI gate, its design and the cases-needed
estimator.

Simulates many paired (baseline, candidate) runs at the smoke, quick and standard case counts
with a known true weighted macro delta and prints, per interval: two-sided coverage, mean
width, the ``regression`` gate's false-alarm rate (true delta 0) and power, the
``noninferiority`` gate's false-pass rate at true delta = -M and pass rate at 0, the
per-benchmark scope against drops confined to one benchmark, the design's predicted power
against the simulated one, and the estimated cases a margin needs against the true count.

    PYTHONPATH=. python bench/gate_calibration.py                  # default study
    PYTHONPATH=. python bench/gate_calibration.py --quick-check    # tiny version, seconds
    PYTHONPATH=. python bench/gate_calibration.py --sims 1000 --sizes quick --jobs 2

Every interval is computed vectorised with numpy from per-benchmark moments; the run first
checks, on a sample of simulated runs, that these equal the project's own functions
(``pytest_srbench.core.compare``). Prints tables; nothing is asserted.
``docs/gate-calibration.md`` holds a default run.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import textwrap
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pytest_srbench.core.compare import paired
from pytest_srbench.core.compare.design import gate_design, gate_z
from pytest_srbench.core.compare.gate import benchmark_interval
from pytest_srbench.core.compare.paired import (
    BOOTSTRAP_HIGH_INDEX,
    BOOTSTRAP_LOW_INDEX,
    BOOTSTRAP_RESAMPLES,
    FLOOR_SECOND_MOMENT,
    stratified_bootstrap,
)
from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS, PROFILE_COUNTS
from pytest_srbench.core.stats import WILSON_Z, wilson_interval

BENCHMARKS = sorted(BENCHMARK_WEIGHTS)
_TOTAL_WEIGHT = sum(BENCHMARK_WEIGHTS.values())
WEIGHTS = [BENCHMARK_WEIGHTS[b] / _TOTAL_WEIGHT for b in BENCHMARKS]
W = np.array(WEIGHTS)
B = len(BENCHMARKS)
Z = WILSON_Z
Z_BONFERRONI = gate_z("regression", "benchmark", B)
BOOTSTRAP_RUNS = 500  # the bootstrap (a diagnostic, and the slow part) on the first runs only

# Baseline accuracy per benchmark: a plausible mid-2026 model; a spread of 0.3-0.9 (every
# benchmark can lose 25 points); and uniform accuracies.
REALISTIC_PI = {
    "mmlu-pro": 0.80,
    "gpqa-diamond": 0.60,
    "hle": 0.15,
    "livecodebench": 0.50,
    "scicode": 0.30,
    "terminal-bench-2.1": 0.40,
    "simpleqa-verified": 0.45,
    "arc-agi-2": 0.10,
    "tau3": 0.55,
}
SPREAD_PI = {
    "mmlu-pro": 0.40,
    "gpqa-diamond": 0.60,
    "hle": 0.30,
    "livecodebench": 0.70,
    "scicode": 0.90,
    "terminal-bench-2.1": 0.80,
    "simpleqa-verified": 0.60,
    "arc-agi-2": 0.30,
    "tau3": 0.50,
}
PI_SETS = {
    "real": REALISTIC_PI,
    "mix": SPREAD_PI,
    "0.95": dict.fromkeys(BENCHMARKS, 0.95),
    **{f"{p:g}": dict.fromkeys(BENCHMARKS, p) for p in (0.3, 0.5, 0.7, 0.9)},
}
# crossed: the candidate is 20 points better on some benchmarks and worse on others, with the
# same macro accuracy (0.1·(+1+1−1−1+1−1) + 0.15·(+1−1) = 0)
CROSSED = {
    "arc-agi-2": +1, "gpqa-diamond": +1, "hle": -1, "livecodebench": -1, "mmlu-pro": +1,
    "scicode": -1, "simpleqa-verified": +1, "tau3": -1, "terminal-bench-2.1": 0,
}  # fmt: skip

# hetero: the two systems differ (independent errors) only on the two smallest benchmarks and
# nearly agree elsewhere, so a variance pooled over benchmarks understates theirs
HETERO = ("scicode", "terminal-bench-2.1")

INTERVALS = ("hoeffding", "strat-wald", "strat-newcombe", "pooled-newcombe", "bootstrap")
SHORT = {
    "hoeffding": "H",
    "strat-wald": "SW",
    "strat-newcombe": "SN",
    "pooled-newcombe": "PN",
    "bootstrap": "BS",
    "per-benchmark": "SWb",
}
LEGEND = (
    "H   = hoeffding_interval: sr-bench's primary interval (distribution-free)",
    "SW  = stratified_wald: per-benchmark mean squared difference with one pseudo-case at 1,",
    "      weighted, normal — THE NEW DEFAULT GATE",
    "SN  = stratified_newcombe: per-benchmark Newcombe combined by MOVER — the old default",
    "PN  = newcombe_interval on all cases pooled as one group; it targets the MICRO delta",
    "      Σ n_b Δ_b / Σ n_b, so its coverage is measured against the true micro delta",
    "BS  = bootstrap (numpy equivalent of the report's diagnostic): stratified percentile",
    f"      bootstrap, {BOOTSTRAP_RESAMPLES} resamples, sorted values "
    f"[{BOOTSTRAP_LOW_INDEX}] and [{BOOTSTRAP_HIGH_INDEX}]; on the first {BOOTSTRAP_RUNS} runs",
    "      of each scenario only (its rates have wider Monte-Carlo intervals)",
    "SWb = --srbench-gate-scope benchmark: each benchmark's Wald interval with the floor;",
    f"      regression at z = {Z_BONFERRONI:.4f} (Bonferroni over {B}), non-inferiority at",
    "      z = 1.96 for every benchmark (intersection-union); fails / passes as a family",
)
GATES = (*INTERVALS, "per-benchmark")
POWER_DELTAS = (-0.03, -0.05, -0.10, -0.20)
MARGINS = (0.05, 0.10)
NOMINAL = 0.05
DROP = 0.25  # the one-benchmark drop of the scope study
CHUNK = 250  # simulated runs generated together
CHECK_RUNS = 40  # simulated runs per (size, check scenario) compared with the project
ESTIMATOR_RUNS = 2000  # simulated runs per scenario in the cases-needed study
SIZES = ("smoke", "quick", "standard")


@dataclass(frozen=True)
class Scenario:
    """One data-generating setting.

    ``model`` "corr": each benchmark's 2×2 table has baseline accuracy π_b, candidate π_b + Δ_b
    and discordance d (clamped to what is feasible); "indep": the two systems err
    independently (d_b = p(1 − q) + q(1 − p)); "hetero": independent on ``HETERO``, "corr"
    elsewhere. ``delta`` is the per-benchmark latent Δ before
    clamping; ``crossed`` adds ±0.2 by ``CROSSED`` instead; ``only`` applies Δ to that one
    benchmark (discordance ``d`` there, 0.10 elsewhere)."""

    model: str
    pis: str
    d: float = 0.0
    delta: float = 0.0
    repeats: int = 1
    flip: float = 0.0
    crossed: bool = False
    only: str | None = None

    @property
    def label(self) -> str:
        if self.only:
            return f"drop {-self.delta:.2f} in {self.only} (π mix; d 0.10 elsewhere)"
        reps = f" K={self.repeats} f={self.flip:g}" if self.repeats > 1 else ""
        if self.model == "indep":
            what = "indep p=" + self.pis if self.pis not in ("real", "mix") else "indep " + self.pis
        elif self.model == "hetero":
            what = f"hetero p={self.pis} d={self.d:.2f}"
        else:
            what = f"corr π={self.pis} d={self.d:.2f}"
        shift = "crossed ±0.20" if self.crossed else f"Δ/case={self.delta:+.3f}"
        return f"{what}{reps} {shift}"


@dataclass(frozen=True)
class Table2x2:
    """Per-benchmark cell probabilities of (baseline, candidate) and the Δ_b, d_b used."""

    delta: float
    d: float
    p11: float
    p10: float  # baseline right, candidate wrong
    p01: float  # baseline wrong, candidate right


def make_table(pi: float, delta: float, d: float) -> Table2x2:
    """Clamp Δ to a feasible candidate accuracy and d to [|Δ|, its feasible maximum]."""
    delta = min(max(delta, -pi), 1.0 - pi)
    d_max = min(2 * pi + delta, 2 * (1 - pi) - delta)
    d = min(max(d, abs(delta)), d_max)
    p01 = (d + delta) / 2
    p10 = (d - delta) / 2
    return Table2x2(delta=delta, d=d, p11=pi - p10, p10=p10, p01=p01)


def independent_table(p: float, delta: float) -> Table2x2:
    """Independent errors: baseline accuracy p, candidate q = p + Δ (clamped)."""
    q = min(max(p + delta, 0.0), 1.0)
    p10, p01 = p * (1 - q), (1 - p) * q
    return Table2x2(delta=q - p, d=p10 + p01, p11=p * q, p10=p10, p01=p01)


def tables_for(scenario: Scenario) -> list[Table2x2]:
    pis = PI_SETS[scenario.pis]
    tables = []
    for name in BENCHMARKS:
        delta = scenario.delta
        if scenario.crossed:
            delta = 0.2 * CROSSED[name]
        if scenario.only is not None:
            if name == scenario.only:
                tables.append(make_table(pis[name], delta, scenario.d))
            else:
                tables.append(make_table(pis[name], 0.0, 0.10))
            continue
        if scenario.model == "indep" or (scenario.model == "hetero" and name in HETERO):
            tables.append(independent_table(pis[name], delta))
        else:
            tables.append(make_table(pis[name], delta, scenario.d))
    return tables


def shrink(scenario: Scenario) -> float:
    """E[repeat mean | latent x] = f + (1 - 2f) x, so every expected difference shrinks."""
    return 1 - 2 * scenario.flip if scenario.repeats > 1 else 1.0


def true_deltas(scenario: Scenario, sizes: Sequence[int]) -> tuple[float, float]:
    """(macro, micro) expected candidate - baseline difference of the per-case values."""
    deltas = [t.delta * shrink(scenario) for t in tables_for(scenario)]
    macro = math.fsum(w * x for w, x in zip(WEIGHTS, deltas, strict=True))
    micro = math.fsum(n * x for n, x in zip(sizes, deltas, strict=True)) / sum(sizes)
    return macro, micro


def true_second_moments(scenario: Scenario) -> list[float]:
    """E[D²] of a case's difference per benchmark: d_b, or with K repeats flipping with
    probability f, (1 - 2f)² d_b + 2f(1 - f)/K (the repeat noise of both sides)."""
    tables = tables_for(scenario)
    if scenario.repeats == 1:
        return [t.d for t in tables]
    f, k = scenario.flip, scenario.repeats
    return [(1 - 2 * f) ** 2 * t.d + 2 * f * (1 - f) / k for t in tables]


def latent_delta_for(target: float, base: Scenario) -> float:
    """The per-benchmark latent Δ whose clamped, shrunk macro delta equals ``target``."""
    low, high = -1.0, 0.0
    for _ in range(100):
        mid = (low + high) / 2
        macro, _ = true_deltas(replace(base, delta=mid), [1] * B)
        low, high = (mid, high) if macro < target else (low, mid)
    return round((low + high) / 2, 12)


def scenarios() -> list[Scenario]:
    rows = []
    for d, deltas in (
        (0.05, (0.0, -0.03, -0.05)),
        (0.15, (0.0, -0.03, -0.05, -0.10)),
        (0.30, (0.0, -0.03, -0.05, -0.10, -0.20)),
        (0.50, (0.0, -0.05, -0.10, -0.20)),
    ):
        rows += [Scenario("corr", "real", d, delta) for delta in deltas]
    for d, deltas in ((0.05, (0.0, -0.03, -0.05)), (0.10, (0.0, -0.05, -0.10))):
        rows += [Scenario("corr", "0.95", d, delta) for delta in deltas]
    rows += [Scenario("corr", "0.5", 0.10, delta) for delta in (0.0, -0.05)]
    for pis in ("0.3", "0.5", "0.7", "0.9", "real", "mix"):
        rows += [Scenario("indep", pis, 0.0, delta) for delta in (0.0, -0.05, -0.10)]
    rows.append(Scenario("indep", "mix", crossed=True))
    rows += [Scenario("hetero", "0.5", 0.02, delta) for delta in (0.0, -0.05)]
    k, f = 3, 0.15
    corr = Scenario("corr", "real", 0.15, 0.0, k, f)
    rows += [replace(corr, delta=delta) for delta in (0.0, -0.05, -0.10)]
    rows += [replace(corr, delta=latent_delta_for(-m, corr)) for m in MARGINS]
    rows.append(replace(corr, d=0.30))
    indep = Scenario("indep", "0.5", 0.0, 0.0, k, f)
    rows += [indep, replace(indep, delta=latent_delta_for(-0.05, indep))]
    rows += [Scenario("corr", "mix", 0.35, -DROP, only=name) for name in BENCHMARKS]
    return rows


def quick_scenarios() -> list[Scenario]:
    return [
        Scenario("corr", "real", 0.15, 0.0),
        Scenario("corr", "real", 0.15, -0.05),
        Scenario("indep", "0.5", 0.0, 0.0),
        Scenario("indep", "0.5", 0.0, -0.05),
        Scenario("corr", "real", 0.15, 0.0, 3, 0.15),
        Scenario("corr", "mix", 0.35, -DROP, only="mmlu-pro"),
    ]


# --- data ------------------------------------------------------------------------------------


def simulate(
    rng: np.random.Generator, scenario: Scenario, sizes: Sequence[int], sims: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-case success counts (0..K) of candidate and baseline, shape (sims, Σ n_b)."""
    cands, bases = [], []
    for table, n in zip(tables_for(scenario), sizes, strict=True):
        u = rng.random((sims, n))
        base = u < table.p11 + table.p10
        cand = (u < table.p11) | (
            (u >= table.p11 + table.p10) & (u < table.p11 + table.p10 + table.p01)
        )
        if scenario.repeats > 1:
            k, f = scenario.repeats, scenario.flip
            cand = (cand[..., None] ^ (rng.random((sims, n, k)) < f)).sum(axis=2)
            base = (base[..., None] ^ (rng.random((sims, n, k)) < f)).sum(axis=2)
        cands.append(cand.astype(np.int64))
        bases.append(base.astype(np.int64))
    return np.concatenate(cands, axis=1), np.concatenate(bases, axis=1)


@dataclass
class Moments:
    """Per-benchmark sums of the case values x (candidate) and y (baseline) in [0, 1]."""

    n: np.ndarray  # (B,)
    sx: np.ndarray  # (runs, B)
    sy: np.ndarray
    sxy: np.ndarray
    sxx: np.ndarray
    syy: np.ndarray

    @classmethod
    def of(cls, cand: np.ndarray, base: np.ndarray, sizes: Sequence[int], k: int) -> Moments:
        starts = np.cumsum([0, *sizes[:-1]])
        x, y = cand / k, base / k

        def total(values: np.ndarray) -> np.ndarray:
            return np.add.reduceat(values, starts, axis=1)

        return cls(
            np.array(sizes, dtype=float),
            total(x),
            total(y),
            total(x * y),
            total(x * x),
            total(y * y),
        )

    @property
    def sd(self) -> np.ndarray:
        return self.sx - self.sy

    @property
    def q(self) -> np.ndarray:
        """Σ (x − y)² per benchmark."""
        return self.sxx - 2 * self.sxy + self.syy


# --- vectorised intervals (checked against the project's functions) --------------------------


def wilson_np(p: np.ndarray, n: np.ndarray, z: float = Z) -> tuple[np.ndarray, np.ndarray]:
    z2 = z * z
    den = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / den
    half = z * np.sqrt(np.maximum(p * (1 - p) / n + z2 / (4 * n * n), 0.0)) / den
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def newcombe_np(
    n: np.ndarray,
    sx: np.ndarray,
    sy: np.ndarray,
    sxy: np.ndarray,
    sxx: np.ndarray,
    syy: np.ndarray,
    z: float = Z,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newcombe's paired interval (method 10) from moments, as ``paired.newcombe_interval``."""
    p1, p2 = sx / n, sy / n
    l1, u1 = wilson_np(p1, n, z)
    l2, u2 = wilson_np(p2, n, z)
    cross = n * sxy - sx * sy
    cross = np.where(cross > n / 2, cross - n / 2, np.where(cross >= 0, 0.0, cross))
    spread = (n * sxx - sx * sx) * (n * syy - sy * sy)
    safe = np.where(spread > 0, spread, 1.0)
    phi = np.where(spread > 0, np.clip(cross / np.sqrt(safe), -1.0, 1.0), 0.0)
    below = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    above = (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2
    delta = p1 - p2
    low = np.maximum(-1.0, delta - np.sqrt(np.maximum(below, 0.0)))
    high = np.minimum(1.0, delta + np.sqrt(np.maximum(above, 0.0)))
    return delta, low, high


def intervals_np(m: Moments) -> dict[str, np.ndarray]:
    """Low and high bounds (runs, 2) of H, SW, SN and PN, and per benchmark (runs, B, 2) of
    the scope's intervals at the regression (Bonferroni) and non-inferiority levels."""
    mean = m.sd / m.n
    centre = (W * mean).sum(axis=1)
    out: dict[str, Any] = {}
    radius = math.sqrt(2 * paired.LN_TWO_OVER_ALPHA * float((W * W / m.n).sum()))
    out["hoeffding"] = np.clip(np.column_stack([centre - radius, centre + radius]), -1, 1)
    floored = (m.q + FLOOR_SECOND_MOMENT) / (m.n + 1)
    half = Z * np.sqrt((W * W * floored / m.n).sum(axis=1))
    out["strat-wald"] = np.clip(np.column_stack([centre - half, centre + half]), -1, 1)
    delta, low, high = newcombe_np(m.n, m.sx, m.sy, m.sxy, m.sxx, m.syy)
    mover = (W * delta).sum(axis=1)
    below = np.sqrt(((W * (delta - low)) ** 2).sum(axis=1))
    above = np.sqrt(((W * (high - delta)) ** 2).sum(axis=1))
    out["strat-newcombe"] = np.clip(np.column_stack([mover - below, mover + above]), -1, 1)
    total = [a.sum(axis=1) for a in (m.sx, m.sy, m.sxy, m.sxx, m.syy)]
    _, p_low, p_high = newcombe_np(np.array(m.n.sum()), *total)
    out["pooled-newcombe"] = np.column_stack([p_low, p_high])
    se = np.sqrt(floored / m.n)
    out["scope-regression"] = np.clip(
        np.stack([mean - Z_BONFERRONI * se, mean + Z_BONFERRONI * se], axis=2), -1, 1
    )
    out["scope-noninferiority"] = np.clip(np.stack([mean - Z * se, mean + Z * se], axis=2), -1, 1)
    return out


# --- vectorised bootstrap --------------------------------------------------------------------


def bootstrap_numpy(
    rng: np.random.Generator, codes: np.ndarray, sizes: Sequence[int], repeats: int
) -> tuple[np.ndarray, np.ndarray]:
    """Stratified percentile bootstrap of ``Σ ω_b · mean(resampled differences of b)``.

    ``codes`` holds K × (candidate - baseline) per case, integers in [-K, K], shape
    (runs, Σ n_b). A resampled group mean is the mean of n_b independent draws from the
    group's observed differences, so its sum of codes is drawn directly from its exact
    distribution (the n_b-fold convolution of the observed code frequencies, by FFT)
    instead of drawing n_b indices: the same distribution as ``stratified_bootstrap``
    (which reproduces Python's random stream case by case and is too slow to call for every
    simulated run), not the same stream.
    """
    k = repeats
    runs = codes.shape[0]
    samples = np.zeros((runs, BOOTSTRAP_RESAMPLES))
    start = 0
    for n, weight in zip(sizes, WEIGHTS, strict=True):
        group = codes[:, start : start + n]
        start += n
        freq = np.stack([(group == v).sum(axis=1) for v in range(-k, k + 1)], axis=1) / n
        if n == 1 or bool((freq.max(axis=1) == 1).all()):
            samples += weight * (group.sum(axis=1) / (k * n))[:, None]
            continue
        support = 2 * k * n + 1
        nfft = 1 << (support - 1).bit_length()
        pmf = np.fft.irfft(np.fft.rfft(freq, nfft, axis=1) ** n, nfft, axis=1)[:, :support]
        np.clip(pmf, 0.0, None, out=pmf)
        cdf = np.cumsum(pmf, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((runs, BOOTSTRAP_RESAMPLES))
        # one search for every row: row r's cdf and draws shifted into [r, r + 1]
        shift = np.arange(runs)[:, None]
        found = np.searchsorted((cdf + shift).ravel(), (u + shift).ravel(), side="right")
        total = found.reshape(u.shape) - shift * support
        samples += weight * (np.minimum(total, support - 1) - k * n) / (k * n)
    picked = np.partition(samples, [BOOTSTRAP_LOW_INDEX, BOOTSTRAP_HIGH_INDEX], axis=1)
    return picked[:, BOOTSTRAP_LOW_INDEX], picked[:, BOOTSTRAP_HIGH_INDEX]


# --- the cases-needed estimator --------------------------------------------------------------


def cases_at_mix_np(sizes: Sequence[int], moments: np.ndarray, target: float) -> np.ndarray:
    """``paired.cases_at_mix`` of ``expected_half_width`` for every row of ``moments``."""
    n = np.array(sizes, dtype=float)

    def half_width(factor: np.ndarray) -> np.ndarray:
        at = np.maximum(1.0, np.ceil(factor[:, None] * n))
        spread = (W * W * (at * moments + FLOOR_SECOND_MOMENT) / ((at + 1) * at)).sum(axis=1)
        return Z * np.sqrt(spread)

    low = np.zeros(len(moments))
    high = np.ones(len(moments))
    while True:
        wide = half_width(high) >= target
        if not wide.any():
            break
        low = np.where(wide, high, low)
        high = np.where(wide, high * 2, high)
    for _ in range(64):
        middle = (low + high) / 2
        narrow = half_width(middle) < target
        low, high = np.where(narrow, low, middle), np.where(narrow, middle, high)
    return np.maximum(1.0, np.ceil(high[:, None] * n)).sum(axis=1)


def estimated_cases(m: Moments, margin: float) -> tuple[np.ndarray, np.ndarray]:
    """(new, old) estimates of the cases a margin needs, per run; old is NaN where null."""
    q, n = m.q, m.n
    pooled = (q.sum(axis=1) + FLOOR_SECOND_MOMENT) / (n.sum() + 1)
    moments = np.maximum(q / n, (q + pooled[:, None]) / (n + 1))
    new = cases_at_mix_np(list(m.n.astype(int)), moments, margin)
    variance = ((W * W) * (q / n - (m.sd / n) ** 2) / n).sum(axis=1)
    old = np.ceil(n.sum() * variance * Z * Z / (margin * margin))
    return new, np.where(variance > 0, old, np.nan)


# --- alternatives the default was chosen among ------------------------------------------------

ALTERNATIVES = {
    "plain": "stratified Wald, each benchmark's variance around its observed mean (textbook)",
    "2nd": "stratified Wald, each benchmark's mean squared difference Q_b/n_b, no floor",
    "pooled": "… with one pseudo-case at the pooled mean squared difference: (Q_b + m̄)/(n_b + 1)",
    "SW": "… with one pseudo-case at ½: (Q_b + ½)/(n_b + 1) — the chosen default",
    "SN": "stratified Newcombe (MOVER) — the old default",
}


def alternative_bounds(m: Moments) -> dict[str, np.ndarray]:
    mean = m.sd / m.n
    centre = (W * mean).sum(axis=1)
    pooled = (m.q.sum(axis=1) + FLOOR_SECOND_MOMENT) / (m.n.sum() + 1)
    variances = {
        "plain": np.maximum(m.q / m.n - mean * mean, 0.0),
        "2nd": m.q / m.n,
        "pooled": (m.q + pooled[:, None]) / (m.n + 1),
        "SW": (m.q + FLOOR_SECOND_MOMENT) / (m.n + 1),
    }
    out = {}
    for name, variance in variances.items():
        half = Z * np.sqrt((W * W * variance / m.n).sum(axis=1))
        out[name] = np.clip(np.column_stack([centre - half, centre + half]), -1, 1)
    out["SN"] = intervals_np(m)["strat-newcombe"]
    return out


def alternative_scenarios() -> list[Scenario]:
    return [
        Scenario("indep", "0.5"),
        Scenario("indep", "real"),
        Scenario("hetero", "0.5", 0.02),
        Scenario("corr", "0.95", 0.05),
        Scenario("corr", "real", 0.05, -0.05),
        Scenario("corr", "real", 0.15, -0.05),
        Scenario("corr", "real", 0.15, -0.10),
        Scenario("indep", "0.5", 0.0, -0.10),
    ]


def run_alternatives(size: str, scenario: Scenario, sims: int, seed: int, index: int) -> dict:
    rng = np.random.default_rng([seed, sum(map(ord, size)), 1000 + index])
    sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
    out = {name: np.empty((sims, 2)) for name in ALTERNATIVES}
    for first in range(0, sims, CHUNK):
        runs = min(CHUNK, sims - first)
        cand, base = simulate(rng, scenario, sizes, runs)
        for name, bounds in alternative_bounds(Moments.of(cand, base, sizes, 1)).items():
            out[name][first : first + runs] = bounds
    return out


# --- one scenario ----------------------------------------------------------------------------


def run_scenario(size: str, scenario: Scenario, sims: int, seed: int, index: int) -> dict:
    """Bounds of every interval for ``sims`` simulated paired runs, and the cases-needed
    estimates of the first ``ESTIMATOR_RUNS`` (null scenarios only)."""
    rng = np.random.default_rng([seed, sum(map(ord, size)), index])
    sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
    k = scenario.repeats
    out: dict[str, Any] = {name: np.empty((sims, 2)) for name in INTERVALS}
    out["bootstrap"] = np.empty((min(sims, BOOTSTRAP_RUNS), 2))
    out["scope-regression"] = np.empty((sims, B, 2))
    out["scope-noninferiority"] = np.empty((sims, B, 2))
    estimates: list[tuple[np.ndarray, np.ndarray]] = []
    for first in range(0, sims, CHUNK):
        runs = min(CHUNK, sims - first)
        cand, base = simulate(rng, scenario, sizes, runs)
        at = slice(first, first + runs)
        if first < BOOTSTRAP_RUNS:
            kept = min(runs, BOOTSTRAP_RUNS - first)
            low, high = bootstrap_numpy(rng, (cand - base)[:kept], sizes, k)
            out["bootstrap"][first : first + kept] = np.column_stack([low, high])
        moments = Moments.of(cand, base, sizes, k)
        for name, bounds in intervals_np(moments).items():
            out[name][at] = bounds
        if first < ESTIMATOR_RUNS and abs(true_deltas(scenario, sizes)[0]) < 1e-12:
            estimates.append(estimated_cases(moments, NOMINAL))
    if estimates:
        out["cases-new"] = np.concatenate([e[0] for e in estimates])
        out["cases-old"] = np.concatenate([e[1] for e in estimates])
    return out


# --- equivalence with the project's functions ------------------------------------------------


def check_against_project(size: str, seed: int) -> str:
    """Largest difference between the vectorised bounds and the project's functions on
    ``CHECK_RUNS`` simulated runs of a few scenarios."""
    sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
    offsets = list(itertools.pairwise(np.cumsum([0, *sizes]).tolist()))
    worst = dict.fromkeys([*INTERVALS[:4], "per-benchmark", "cases"], 0.0)
    checks = (
        Scenario("indep", "0.5"),
        Scenario("corr", "0.95", 0.05, -0.05),
        Scenario("corr", "real", 0.15, 0.0, 3, 0.15),
    )
    for number, scenario in enumerate(checks):
        rng = np.random.default_rng([seed, 7, number])
        k = scenario.repeats
        cand, base = simulate(rng, scenario, sizes, CHECK_RUNS)
        moments = Moments.of(cand, base, sizes, k)
        ours = intervals_np(moments)
        new, _ = estimated_cases(moments, NOMINAL)
        for row in range(CHECK_RUNS):
            c_all, b_all = (cand[row] / k).tolist(), (base[row] / k).tolist()
            c_groups = [c_all[a:b] for a, b in offsets]
            b_groups = [b_all[a:b] for a, b in offsets]
            diffs = [[x - y for x, y in zip(c, b, strict=True)] for c, b in zip(
                c_groups, b_groups, strict=True)]  # fmt: skip
            macro = math.fsum(
                w * math.fsum(d) / len(d) for w, d in zip(WEIGHTS, diffs, strict=True)
            )
            project = {
                "hoeffding": paired.hoeffding_interval(macro, sizes, WEIGHTS),
                "strat-wald": paired.stratified_wald(diffs, WEIGHTS),
                "strat-newcombe": paired.stratified_newcombe(c_groups, b_groups, WEIGHTS),
                "pooled-newcombe": paired.newcombe_interval(c_all, b_all)[1],
            }
            for name, bounds in project.items():
                gap = float(np.abs(ours[name][row] - np.array(bounds)).max())
                worst[name] = max(worst[name], gap)
            for index, (c, b) in enumerate(zip(c_groups, b_groups, strict=True)):
                scoped = benchmark_interval("wald", c, b, Z_BONFERRONI)
                gap = float(np.abs(ours["scope-regression"][row, index] - np.array(scoped)).max())
                worst["per-benchmark"] = max(worst["per-benchmark"], gap)
            count = paired.cases_for_half_width(diffs, WEIGHTS, NOMINAL)
            worst["cases"] = max(worst["cases"], abs(count - float(new[row])))
    return f"{size}: " + ", ".join(
        f"{SHORT.get(name, name)} {value:.1e}" for name, value in worst.items()
    )


def bootstrap_check(size: str, seed: int, reps: int) -> str:
    """Project bootstrap vs the numpy one on the same data, ``reps`` seeds each."""
    scenario = Scenario("corr", "real", 0.15, 0.0, 3, 0.15)
    sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
    rng = np.random.default_rng([seed, 99])
    cand, base = simulate(rng, scenario, sizes, 1)
    offsets = list(itertools.pairwise(np.cumsum([0, *sizes]).tolist()))
    diffs = ((cand - base) / scenario.repeats)[0].tolist()
    groups = [diffs[a:b] for a, b in offsets]
    project = np.array([stratified_bootstrap(groups, WEIGHTS, seed=seed + r) for r in range(reps)])
    low, high = bootstrap_numpy(rng, np.repeat(cand - base, reps, axis=0), sizes, scenario.repeats)
    se = math.sqrt(reps)
    return (
        f"bootstrap equivalence ({size}, one K=3 data set, {reps} seeds each; mean ± SE): "
        f"project stratified_bootstrap [{project[:, 0].mean():+.4f} ± "
        f"{project[:, 0].std() / se:.4f}, {project[:, 1].mean():+.4f} ± "
        f"{project[:, 1].std() / se:.4f}]; numpy [{low.mean():+.4f} ± {low.std() / se:.4f}, "
        f"{high.mean():+.4f} ± {high.std() / se:.4f}]"
    )


# --- summaries -------------------------------------------------------------------------------


@dataclass
class Rate:
    hits: int
    total: int

    @property
    def value(self) -> float:
        return self.hits / self.total

    def bounds(self) -> list[float]:
        return wilson_interval(self.hits, self.total) or [0.0, 1.0]

    def text(self) -> str:
        """Percent with the Wilson 95 % interval's upper end (the Monte-Carlo error)."""
        return f"{100 * self.value:5.1f}<{100 * self.bounds()[1]:.1f}"

    def cover_text(self) -> str:
        """Percent with the Wilson 95 % interval's lower end."""
        return f"{100 * self.value:5.1f}>{100 * self.bounds()[0]:.1f}"

    def wilson(self) -> str:
        low, high = self.bounds()
        return f"{100 * self.value:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"


@dataclass
class Outcome:
    size: str
    scenario: Scenario
    macro: float
    micro: float
    bounds: dict[str, np.ndarray]

    def truth(self, name: str) -> float:
        return self.micro if name == "pooled-newcombe" else self.macro

    @staticmethod
    def rate(hits: np.ndarray) -> Rate:
        return Rate(int(hits.sum()), len(hits))

    def coverage(self, name: str) -> Rate:
        low, high = self.bounds[name].T
        true = self.truth(name)
        return self.rate((low <= true + 1e-12) & (true - 1e-12 <= high))

    def width(self, name: str) -> float:
        low, high = self.bounds[name].T
        return float((high - low).mean())

    def regression_fail(self, name: str) -> Rate:
        if name == "per-benchmark":
            return self.rate((self.bounds["scope-regression"][:, :, 1] < 0).any(axis=1))
        return self.rate(self.bounds[name][:, 1] < 0)

    def noninferiority_pass(self, name: str, margin: float) -> Rate:
        if name == "per-benchmark":
            lows = self.bounds["scope-noninferiority"][:, :, 0]
            return self.rate((lows > -margin).all(axis=1))
        return self.rate(self.bounds[name][:, 0] > -margin)

    @property
    def null(self) -> bool:
        """The macro delta is 0 (a crossed scenario is a null for the macro gates)."""
        return abs(self.macro) < 1e-12 and self.scenario.only is None

    @property
    def scope_null(self) -> bool:
        """No benchmark's delta differs from 0 (the scope's false alarms are read here)."""
        return all(abs(t.delta) < 1e-12 for t in tables_for(self.scenario))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def print_size(size: str, sims: int, outcomes: list[Outcome]) -> None:
    sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
    print(f"\n=== {size}: {sum(sizes)} cases, {sims} simulated paired runs per scenario ===")
    main = [o for o in outcomes if o.scenario.only is None]
    print("\n[1] two-sided coverage of the true delta (%, >Wilson lower end) and mean width")
    headers = ["scenario", "macro Δ"]
    for name in INTERVALS:
        headers += [f"{SHORT[name]} cover", f"{SHORT[name]} w"]
    rows = []
    for o in main:
        row = [o.scenario.label, f"{o.macro:+.4f}"]
        for name in INTERVALS:
            row += [o.coverage(name).cover_text(), f"{o.width(name):.3f}"]
        rows.append(row)
    print(table(headers, rows))

    print("\n[2] regression gate (fails when upper bound < 0): fail rate %, <Wilson upper end")
    print("    macro Δ = 0: false alarm (nominal ≤ 5 %; a two-sided 95 % interval gives ≈ 2.5 %)")
    print("    (crossed: macro Δ 0, benchmarks ±0.20 — a false alarm for the macro gates only)")
    print("    macro Δ < 0: power (higher is better)")
    headers = ["scenario", "macro Δ", "kind", *(SHORT[n] for n in GATES)]
    rows = []
    for o in main:
        kind = "false alarm" if o.null else "power"
        rows.append(
            [o.scenario.label, f"{o.macro:+.4f}", kind]
            + [o.regression_fail(n).text() for n in GATES]
        )
    print(table(headers, rows))

    print("\n[3] noninferiority gate (passes when lower bound > -M): pass rate %, <Wilson upper")
    print("    at macro Δ = -M a pass is a false pass (must be ≤ 5 %); at Δ = 0 higher is better")
    headers = ["scenario", "macro Δ", "M", "kind", *(SHORT[n] for n in GATES)]
    rows = []
    for margin in MARGINS:
        for o in main:
            if abs(o.macro + margin) < 1e-9:
                kind = "FALSE PASS"
            elif o.null and not o.scenario.crossed:
                kind = "pass"
            else:
                continue
            rows.append(
                [o.scenario.label, f"{o.macro:+.4f}", f"{margin:.2f}", kind]
                + [o.noninferiority_pass(n, margin).text() for n in GATES]
            )
    print(table(headers, rows))


def worst(
    outcomes: list[Outcome], name: str, key: str, margin: float = 0.0
) -> tuple[Rate, Any] | tuple[None, None]:
    """The worst rate of ``key`` over the scenarios it applies to, and where."""
    if key == "coverage":
        pairs = [(o.coverage(name), o) for o in outcomes if o.scenario.only is None]
        return min(pairs, key=lambda p: p[0].value) if pairs else (None, None)
    if key == "false-alarm":
        chosen = [o for o in outcomes if (o.scope_null if name == "per-benchmark" else o.null)]
        pairs = [(o.regression_fail(name), o) for o in chosen]
    else:
        pairs = [
            (o.noninferiority_pass(name, margin), o)
            for o in outcomes
            if abs(o.macro + margin) < 1e-9 and o.scenario.only is None
        ]
    return max(pairs, key=lambda p: p[0].value) if pairs else (None, None)


def wilson_text(found: tuple[Rate, Any] | tuple[None, None]) -> str:
    return "—" if found[0] is None else found[0].wilson()


def short_label(outcome: Outcome) -> str:
    return " ".join(outcome.scenario.label.split())


def print_scope(results: dict[str, list[Outcome]]) -> None:
    print(
        f"\n=== per-benchmark scope: a {DROP:.2f} drop confined to one benchmark "
        "(regression fail rate %) ==="
    )
    print(
        "π mix (0.3-0.9), discordance 0.35 on the dropped benchmark and 0.10 elsewhere; "
        "macro = the default gate (SW), per benchmark = SWb"
    )
    headers = ["benchmark", "ω"]
    for size in results:
        n = "n"
        headers += [f"{size} {n}", f"{size} macro Δ", f"{size} macro", f"{size} per-bench"]
    rows = []
    for index, name in enumerate(BENCHMARKS):
        row = [name, f"{WEIGHTS[index]:.2f}"]
        for size, outcomes in results.items():
            found = next((o for o in outcomes if o.scenario.only == name), None)
            if found is None:
                row += ["—"] * 4
                continue
            row += [
                str(PROFILE_COUNTS[name][size]),
                f"{found.macro:+.3f}",
                f"{100 * found.regression_fail('strat-wald').value:.1f}",
                f"{100 * found.regression_fail('per-benchmark').value:.1f}",
            ]
        rows.append(row)
    print(table(headers, rows))


def print_design(results: dict[str, list[Outcome]]) -> None:
    print("\n=== design: predicted power (gate_design, normal approximation) vs simulated (SW) ===")
    print("regression: a drop of 0.05 on every benchmark; noninferiority M = 0.05: Δ = 0")
    headers = ["size", "scenario", "gate", "predicted", "simulated"]
    rows = []
    for size, outcomes in results.items():
        sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
        by_label = {o.scenario: o for o in outcomes}
        for mode in ("regression", "noninferiority"):
            design = gate_design(BENCHMARKS, sizes, WEIGHTS, mode=mode, margin=0.05)
            for point in design["power"]:
                m = point["discordance"]
                delta = -0.05 if mode == "regression" else 0.0
                scenario = (
                    Scenario("indep", "0.5", 0.0, delta)
                    if m == 0.5
                    else Scenario("corr", "0.5", 0.10, delta)
                )
                found = by_label.get(scenario)
                if found is None:
                    continue
                simulated = (
                    found.regression_fail("strat-wald")
                    if mode == "regression"
                    else found.noninferiority_pass("strat-wald", 0.05)
                )
                rows.append(
                    [
                        size,
                        short_label(found),
                        mode,
                        f"{100 * point['power']:.1f}",
                        simulated.wilson(),
                    ]
                )
    if rows:
        print(table(headers, rows))
    identical = []
    for size in results:
        sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
        design = gate_design(BENCHMARKS, sizes, WEIGHTS, mode="noninferiority", margin=0.05)
        identical.append(
            f"{size} ±{design['identical_rerun_half_width']:.3f} (worst case "
            f"±{design['worst_case_half_width']:.3f}; NI at 0.05 "
            f"{'usable' if design['usable'] else 'refused'}; an identical re-run passes from "
            f"{design['cases_for_identical_rerun']:,} cases at this mix)"
        )
    print("identical re-run half-width (exact) — " + "; ".join(identical))


def print_estimator(results: dict[str, list[Outcome]]) -> None:
    print(
        f"\n=== cases needed for M = {NOMINAL}: estimate / true count (first {ESTIMATOR_RUNS} "
        "runs of each null scenario) ==="
    )
    print(
        "true = cases (this mix) at which the gate's interval reaches ±M at the true per-case "
        "second moments;\nnew = floored estimator (paired.cases_for_half_width); old = plain "
        "variance, null where no difference varies"
    )
    headers = ["size", "scenario", "true", "new mean", "new median", "new p10-p90", "old mean"]
    headers += ["old median", "old null %"]
    rows = []
    for size, outcomes in results.items():
        sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
        for o in outcomes:
            if "cases-new" not in o.bounds:
                continue
            moments = true_second_moments(o.scenario)
            truth = paired.cases_at_mix(
                sizes,
                lambda at, moments=moments: paired.expected_half_width(at, WEIGHTS, moments),
                NOMINAL,
            )
            new = o.bounds["cases-new"] / truth
            old = o.bounds["cases-old"] / truth
            valid = old[~np.isnan(old)]
            rows.append(
                [
                    size,
                    short_label(o),
                    f"{truth:,}",
                    f"{new.mean():.2f}",
                    f"{np.median(new):.2f}",
                    f"{np.quantile(new, 0.1):.2f}-{np.quantile(new, 0.9):.2f}",
                    f"{valid.mean():.2f}" if len(valid) else "—",
                    f"{np.median(np.nan_to_num(old)):.2f}",
                    f"{100 * np.isnan(old).mean():.0f}",
                ]
            )
    print(table(headers, rows))
    print("(old median counts a null estimate as 0)")


def print_alternatives(results: dict[str, list[Outcome]], sims: int) -> None:
    print(
        f"\n=== how the default was chosen: candidate intervals for the macro delta ({sims} runs "
        "per scenario) ==="
    )
    for name, text in ALTERNATIVES.items():
        print(f"  {name:<6} {text}")
    print(
        "cell: coverage %, rate % <its Wilson upper end, mean width; the rate is the regression "
        "false\nalarm at macro Δ 0, the non-inferiority false pass at macro Δ −0.05 (M 0.05), "
        "else the\nregression power. hetero: the systems err independently on "
        + " and ".join(HETERO)
        + " and agree\nbut for 2 % of cases elsewhere"
    )
    headers = ["size", "scenario", "rate", *ALTERNATIVES]
    rows = []
    for size, outcomes in results.items():
        for o in outcomes:
            if o.null:
                kind, rate = "false alarm", o.regression_fail
            elif abs(o.macro + 0.05) < 1e-9:
                kind = "NI false pass"

                def rate(name: str, o: Outcome = o) -> Rate:
                    return o.noninferiority_pass(name, 0.05)
            else:
                kind, rate = "power", o.regression_fail
            rows.append(
                [size, short_label(o), kind]
                + [
                    f"{100 * o.coverage(n).value:.1f} {rate(n).text().strip()} {o.width(n):.3f}"
                    for n in ALTERNATIVES
                ]
            )
    print(table(headers, rows))


def print_summary(results: dict[str, list[Outcome]]) -> None:
    print("\n=== summary: worst case over all scenarios (Wilson 95 % interval on the rate) ===")
    headers = ["size", "gate", "min coverage", "max false alarm"]
    headers += [f"max false pass M={m:.2f}" for m in MARGINS]
    rows = []
    for size, outcomes in results.items():
        for name in GATES:
            cover = (
                "—" if name == "per-benchmark" else wilson_text(worst(outcomes, name, "coverage"))
            )
            row = [size, SHORT[name], cover, wilson_text(worst(outcomes, name, "false-alarm"))]
            row += [wilson_text(worst(outcomes, name, "false-pass", m)) for m in MARGINS]
            rows.append(row)
    print(table(headers, rows))

    print("\n=== summary: regression-gate power (fail rate %) ===")
    headers = ["size", "scenario", *(f"{SHORT[n]}" for n in ("hoeffding", "strat-wald"))]
    headers += ["SN (old)", "SWb"]
    rows = []
    for size, outcomes in results.items():
        for o in outcomes:
            if o.null or o.scenario.only or o.scenario.repeats > 1 or o.macro > -0.049:
                continue
            rows.append(
                [size, short_label(o)]
                + [
                    f"{100 * o.regression_fail(n).value:.1f}"
                    for n in ("hoeffding", "strat-wald", "strat-newcombe", "per-benchmark")
                ]
            )
    print(table(headers, rows))

    parts = []
    for size, outcomes in results.items():
        for name, title in (("strat-wald", "default (SW)"), ("strat-newcombe", "old default (SN)")):
            alarm, at_alarm = worst(outcomes, name, "false-alarm")
            cover, at_cover = worst(outcomes, name, "coverage")
            if alarm is None or cover is None:
                continue
            passes = [wilson_text(worst(outcomes, name, "false-pass", m)) for m in MARGINS]
            flag = (
                "within 5 % with its Monte-Carlo interval"
                if alarm.bounds()[1] <= NOMINAL
                else "point within 5 %, Monte-Carlo interval above"
                if alarm.value <= NOMINAL
                else "ABOVE 5 %"
            )
            parts.append(
                f"{size} {title}: worst false alarm {alarm.wilson()} ({flag}; at "
                f"{short_label(at_alarm)}), worst non-inferiority false pass "
                + " and ".join(
                    f"{rate} at M={m:.2f}" for m, rate in zip(MARGINS, passes, strict=True)
                )
                + f", min coverage {cover.wilson()} (at {short_label(at_cover)})"
            )
        alarm, at_alarm = worst(outcomes, "per-benchmark", "false-alarm")
        if alarm is not None:
            parts.append(
                f"{size} per-benchmark scope: worst family-wise false alarm {alarm.wilson()} "
                f"(at {short_label(at_alarm)})"
            )
    print()
    print(textwrap.fill("verdict — " + ". ".join(parts) + ".", width=100))


# --- user suites: the per-benchmark default at the sizes user suites have -------------------

USER_SIZES = (8, 14, 25, 50)  # cases per benchmark
USER_BENCHMARKS = (1, 2, 3, 4, 6)
# null settings (no benchmark changed): (label, baseline accuracy, discordance; None = the
# two runs err independently, d = 2p(1 − p))
USER_NULLS = (
    ("corr π 0.85 d 0.10", 0.85, 0.10),
    ("corr π 0.70 d 0.20", 0.70, 0.20),
    ("corr π 0.50 d 0.30", 0.50, 0.30),
    ("indep π 0.50 (d 0.50)", 0.50, None),
    ("indep π 0.85 (d 0.26)", 0.85, None),
)
# alternatives: one benchmark drops (from π 0.85, discordance |Δ| + 0.10, the others as the
# first null setting); a collapse is 0.85 → 0
USER_DROPS = (-0.20, -0.30, -0.50, -0.85)


def _user_table(pi: float, delta: float, d: float | None) -> Table2x2:
    return independent_table(pi, delta) if d is None else make_table(pi, delta, d)


def user_fail_rate(
    rng: np.random.Generator, n: int, tables: Sequence[Table2x2], sims: int
) -> float:
    """The share of simulated paired runs in which the per-benchmark regression gate (the
    default outside the full sr-bench set) fails: any benchmark's floored Wald interval at
    z = gate_z(regression, benchmark, B), clamped to [−1, 1], ends below 0."""
    z = gate_z("regression", "benchmark", len(tables))
    failed = np.zeros(sims, dtype=bool)
    for table in tables:
        u = rng.random((sims, n))
        # difference candidate − baseline per case: −1 with p10, +1 with p01, else 0
        lost = u < table.p10
        won = (u >= table.p10) & (u < table.p10 + table.p01)
        d = won.astype(np.int64) - lost
        total = d.sum(axis=1)
        squares = np.abs(d).sum(axis=1)
        centre = total / n
        half = z * np.sqrt((squares + FLOOR_SECOND_MOMENT) / (n + 1) / n)
        failed |= np.minimum(1.0, centre + half) < 0
    return float(failed.mean())


def check_user_interval(seed: int) -> float:
    """Largest difference between the vectorised per-benchmark bounds and the project's
    ``benchmark_interval`` (used by the gate) on a few simulated benchmarks."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for n, b in itertools.product(USER_SIZES, (1, 4)):
        z = gate_z("regression", "benchmark", b)
        table = make_table(0.7, -0.2, 0.3)
        for _ in range(10):
            u = rng.random(n)
            base = u < table.p11 + table.p10
            cand = (u < table.p11) | ((u >= table.p11 + table.p10)
                                      & (u < table.p11 + table.p10 + table.p01))  # fmt: skip
            d = cand.astype(int) - base.astype(int)
            centre = d.sum() / n
            half = z * math.sqrt((np.abs(d).sum() + FLOOR_SECOND_MOMENT) / (n + 1) / n)
            mine = [max(-1.0, centre - half), min(1.0, centre + half)]
            theirs = benchmark_interval("wald", cand.astype(float).tolist(),
                                        base.astype(float).tolist(), z)  # fmt: skip
            worst = max(worst, *(abs(a - c) for a, c in zip(mine, theirs, strict=True)))
    return worst


def run_user_suites(seed: int, sims: int) -> None:
    print("per-benchmark default gate at user-suite sizes (regression, stratified Wald with")
    print("the floor, Bonferroni over B benchmarks; the family fails when any benchmark does)")
    print(f"seed {seed}; {sims} simulated paired runs per cell; sizes n = {USER_SIZES} cases "
          f"per benchmark, B = {USER_BENCHMARKS}")  # fmt: skip
    print(
        f"vectorised vs gate.benchmark_interval: max |difference| {check_user_interval(seed):.1e}"
    )
    rng = np.random.default_rng(seed)
    print("\n=== family-wise false alarm % (no benchmark changed; <Wilson 95 % upper end) ===")
    headers = ["setting", "n \\ B", *(str(b) for b in USER_BENCHMARKS)]
    rows = []
    worst: tuple[float, str] = (0.0, "")
    for label, pi, d in USER_NULLS:
        for n in USER_SIZES:
            row = [label, str(n)]
            for b in USER_BENCHMARKS:
                rate = user_fail_rate(rng, n, [_user_table(pi, 0.0, d)] * b, sims)
                upper = wilson_interval(round(rate * sims), sims)[1]
                row.append(f"{100 * rate:.1f}<{100 * upper:.1f}")
                if upper > worst[0]:
                    worst = (upper, f"{label}, n {n}, B {b} ({100 * rate:.1f} %)")
            rows.append(row)
    print(table(headers, rows))
    print(f"worst Wilson upper end: {100 * worst[0]:.1f} % at {worst[1]}")
    print("\n=== power % : one benchmark drops by Δ from 0.85 (discordance |Δ| + 0.10 there), "
          "the others unchanged (π 0.85, d 0.10) ===")  # fmt: skip
    headers = ["Δ in one benchmark", "n \\ B", *(str(b) for b in USER_BENCHMARKS)]
    rows = []
    for drop in USER_DROPS:
        for n in USER_SIZES:
            row = [f"{drop:+.2f}" + (" (collapse to 0)" if drop == -0.85 else ""), str(n)]
            for b in USER_BENCHMARKS:
                tables = [make_table(0.85, drop, abs(drop) + 0.10)]
                tables += [make_table(0.85, 0.0, 0.10)] * (b - 1)
                row.append(f"{100 * user_fail_rate(rng, n, tables, sims):.1f}")
            rows.append(row)
    print(table(headers, rows))


# --- one-case strata and discordance up to 1 (issue 47) --------------------------------------

ONE_CASE_LIMITS = (1, 2, 3, 5)
ONE_CASE_DISCORDANCES = (0.5, 0.7, 0.9, 1.0)
OLD_FLOOR = 0.5  # the pseudo-case before issue 47


def run_one_case(seed: int, sims: int) -> None:
    """Null scenarios (true Δ = 0, accuracy ½ on both sides) at ``--srbench-limit`` 1, 2, 3, 5
    (every benchmark that many cases) and discordance 0.5-1.0: coverage and regression false
    alarms of the macro gates, the floor at 1 (now) against the floor at ½ (before)."""
    print("one-case strata: every benchmark at --srbench-limit n cases, accuracy ½ on both")
    print("sides, true Δ = 0, discordance d (d = 1: the two runs never agree on a case)")
    print(f"seed {seed}; {sims} simulated paired runs per cell; Wilson 95 % intervals on rates")
    print("SW = stratified Wald with the floor's pseudo-case at 1 (the default); SW½ = the same")
    print("at ½ (before issue 47); SN = stratified Newcombe (--srbench-gate-interval newcombe);")
    print("H = Hoeffding. cover = two-sided coverage of the macro Δ; alarm = regression gate")
    print("fails (upper bound < 0), nominal ≤ 5 %")
    headers = ["n/benchmark", "d"]
    for name in ("SW", "SW½", "SN", "H"):
        headers += [f"{name} cover", f"{name} alarm"]
    rows = []
    for index, (limit, d) in enumerate(itertools.product(ONE_CASE_LIMITS, ONE_CASE_DISCORDANCES)):
        rng = np.random.default_rng([seed, 47, index])
        sizes = [limit] * B
        scenario = Scenario("corr", "0.5", d, 0.0)
        found: dict[str, list[np.ndarray]] = {name: [] for name in ("SW", "SW½", "SN", "H")}
        for first in range(0, sims, CHUNK):
            runs = min(CHUNK, sims - first)
            cand, base = simulate(rng, scenario, sizes, runs)
            moments = Moments.of(cand, base, sizes, 1)
            bounds = intervals_np(moments)
            found["SW"].append(bounds["strat-wald"])
            found["SN"].append(bounds["strat-newcombe"])
            found["H"].append(bounds["hoeffding"])
            centre = (W * moments.sd / moments.n).sum(axis=1)
            old = (moments.q + OLD_FLOOR) / (moments.n + 1)
            half = Z * np.sqrt((W * W * old / moments.n).sum(axis=1))
            found["SW½"].append(np.clip(np.column_stack([centre - half, centre + half]), -1, 1))
        row = [str(limit), f"{d:.1f}"]
        for name in ("SW", "SW½", "SN", "H"):
            low, high = np.concatenate(found[name]).T
            cover = Rate(int(((low <= 1e-12) & (high >= -1e-12)).sum()), sims)
            alarm = Rate(int((high < 0).sum()), sims)
            row += [cover.cover_text(), alarm.text()]
        rows.append(row)
    print(table(headers, rows))


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sims", type=int, help="runs per scenario (default 6000 smoke, 3000 quick, 1500 standard)"
    )
    parser.add_argument("--seed", type=int, default=20261201, help="data seed")
    parser.add_argument("--sizes", default=",".join(SIZES), help="comma-separated profiles")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--quick-check", action="store_true", help="200 runs, 6 scenarios: seconds")
    parser.add_argument(
        "--user-suites",
        action="store_true",
        help="only the per-benchmark default at user-suite sizes (8-50 cases, 1-6 benchmarks)",
    )
    parser.add_argument(
        "--one-case",
        action="store_true",
        help="only one- to five-case strata at discordance 0.5-1.0 (issue 47)",
    )
    args = parser.parse_args()
    started = time.perf_counter()
    if args.one_case:
        run_one_case(args.seed, args.sims or 20000)
        print(f"\nwall time {time.perf_counter() - started:.0f} s (1 process)")
        return
    if args.user_suites:
        run_user_suites(args.seed, args.sims or 20000)
        print(f"\nwall time {time.perf_counter() - started:.0f} s (1 process)")
        return
    profiles = [s.strip() for s in args.sizes.split(",") if s.strip()]
    defaults = {"smoke": 6000, "quick": 3000, "standard": 1500}
    sims = {s: args.sims or (200 if args.quick_check else defaults.get(s, 2000)) for s in profiles}
    grid = quick_scenarios() if args.quick_check else scenarios()
    alternative_sims = 200 if args.quick_check else (args.sims or 4000)

    print("paired-gate calibration: pytest_srbench.core.compare on simulated paired runs")
    print(f"seed {args.seed}; {len(grid)} scenarios; runs per scenario: {sims}")
    print("benchmarks (sorted), weight ω, baseline accuracy π (real, mix):")
    for name, weight in zip(BENCHMARKS, WEIGHTS, strict=True):
        counts = ", ".join(f"{s} {PROFILE_COUNTS[name][s]}" for s in profiles)
        print(
            f"  {name:<19} ω={weight:.2f}  π={REALISTIC_PI[name]:.2f} / {SPREAD_PI[name]:.2f}"
            f"  n: {counts}"
        )
    print(
        "data model: corr — each case's (baseline, candidate) pair is drawn from a 2×2 table\n"
        "with baseline accuracy π_b, candidate π_b + Δ_b (Δ_b clamped to [-π_b, 1 - π_b]) and\n"
        "discordance d_b = P(outcomes differ) = d clamped to [|Δ_b|, min(2π_b + Δ_b,\n"
        "2(1 - π_b) - Δ_b)]; indep — the two systems err independently, baseline accuracy p_b,\n"
        "candidate p_b + Δ_b, so d_b = p(1 - q) + q(1 - p) (0.42-0.50 at p 0.3-0.7); crossed —\n"
        "indep at π mix with the candidate ±0.20 per benchmark and the same macro accuracy.\n"
        "K = 3: each repeat flips the latent outcome with probability f, the case value is the\n"
        "mean of its repeats, so the true difference is (1 - 2f) Δ_b. macro Δ = Σ ω_b (1 - 2f)\n"
        "Δ_b; micro Δ = Σ n_b (1 - 2f) Δ_b / Σ n_b. Rows at macro Δ exactly -M use the latent\n"
        "Δ/case that puts it there (the non-inferiority boundary)."
    )
    print("intervals and gates:")
    for text in LEGEND:
        print(f"  {text}")
    print()
    print(
        f"vectorised vs project functions (max |difference| over {CHECK_RUNS} runs × 3 "
        "scenarios; intervals and the cases-needed count):"
    )
    for size in profiles:
        print("  " + check_against_project(size, args.seed))
    print(bootstrap_check("smoke", args.seed, 3 if args.quick_check else 40))
    if "quick" in profiles and not args.quick_check:
        print(bootstrap_check("quick", args.seed, 6))

    tasks = [
        (size, scenario, sims[size], args.seed, index)
        for size in profiles
        for index, scenario in enumerate(grid)
    ]
    # the largest first, so that the pool's last tasks are short
    order = sorted(range(len(tasks)), key=lambda i: -sims[tasks[i][0]] * sum(
        PROFILE_COUNTS[b][tasks[i][0]] for b in BENCHMARKS) * tasks[i][1].repeats)  # fmt: skip
    others = [
        (size, scenario, alternative_sims, args.seed, index)
        for size in profiles
        for index, scenario in enumerate(alternative_scenarios())
    ]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = pool.map(run_scenario, *zip(*[tasks[i] for i in order], strict=True))
        found = dict(zip(order, done, strict=True))
        compared = list(pool.map(run_alternatives, *zip(*others, strict=True)))
    alternatives: dict[str, list[Outcome]] = {size: [] for size in profiles}
    for (size, scenario, _, _, _), bounds in zip(others, compared, strict=True):
        counts = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
        macro, micro = true_deltas(scenario, counts)
        alternatives[size].append(Outcome(size, scenario, macro, micro, bounds))
    results: dict[str, list[Outcome]] = {size: [] for size in profiles}
    for index, (size, scenario, _, _, _) in enumerate(tasks):
        counts = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
        macro, micro = true_deltas(scenario, counts)
        results[size].append(Outcome(size, scenario, macro, micro, found[index]))
    for size in profiles:
        print_size(size, sims[size], results[size])
    print_scope(results)
    print_design(results)
    print_estimator(results)
    print_alternatives(alternatives, alternative_sims)
    print_summary(results)
    print(f"\nwall time {time.perf_counter() - started:.0f} s ({args.jobs} processes)")


if __name__ == "__main__":
    main()
