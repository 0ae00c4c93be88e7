"""Calibration of the paired comparison intervals and of the CI gate built on them.

Simulates many paired (baseline, candidate) runs at the smoke and quick case counts with a
known true weighted macro delta, computes every interval of ``pytest_srbench.core.compare.paired`` on
each run and prints, per interval: two-sided coverage of the true delta, mean width, the
``regression`` gate's false-alarm rate (true delta 0) and power (true drops), and the
``noninferiority`` gate's false-pass rate at true delta = -M and pass rate at true delta 0.

    python bench/gate_calibration.py                    # default study (a few minutes)
    python bench/gate_calibration.py --quick-check      # tiny version, a few seconds
    python bench/gate_calibration.py --sims 1000 --seed 7 --sizes quick

Prints tables; nothing is asserted. ``docs/gate-calibration.md`` holds a default run.
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
from dataclasses import dataclass

import numpy as np

from pytest_srbench.core.compare.paired import (
    BOOTSTRAP_HIGH_INDEX,
    BOOTSTRAP_LOW_INDEX,
    BOOTSTRAP_RESAMPLES,
    hoeffding_interval,
    newcombe_interval,
    stratified_bootstrap,
    stratified_newcombe,
)
from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS, PROFILE_COUNTS
from pytest_srbench.core.stats import wilson_interval

BENCHMARKS = sorted(BENCHMARK_WEIGHTS)
_TOTAL_WEIGHT = sum(BENCHMARK_WEIGHTS.values())
WEIGHTS = [BENCHMARK_WEIGHTS[b] / _TOTAL_WEIGHT for b in BENCHMARKS]

# Baseline accuracy per benchmark: a plausible mid-2026 model, and an edge case near the ceiling.
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
PI_SETS = {"real": REALISTIC_PI, "0.95": dict.fromkeys(BENCHMARKS, 0.95)}

INTERVALS = ("hoeffding", "strat-newcombe", "pooled-newcombe", "bootstrap")
SHORT = {"hoeffding": "H", "strat-newcombe": "SN", "pooled-newcombe": "PN", "bootstrap": "BS"}
LEGEND = (
    "H  = hoeffding_interval: sr-bench's primary interval (distribution-free)",
    "SN = stratified_newcombe: per-benchmark Newcombe combined by MOVER — THE DEFAULT GATE",
    "PN = newcombe_interval on all cases pooled as one group (weights [1.0]); it targets the",
    "     MICRO delta Σ n_b Δ_b / Σ n_b, so its coverage is measured against the true micro",
    "     delta (the other three against the true macro delta Σ ω_b Δ_b)",
    "BS = bootstrap (numpy equivalent of the report's diagnostic): stratified percentile",
    f"     bootstrap, {BOOTSTRAP_RESAMPLES} resamples, sorted values "
    f"[{BOOTSTRAP_LOW_INDEX}] and [{BOOTSTRAP_HIGH_INDEX}]",
)
POWER_DELTAS = (-0.03, -0.05, -0.10, -0.20)
MARGINS = (0.05, 0.10)
NOMINAL = 0.05
CHUNK = 250  # simulated runs generated and bootstrapped together


@dataclass(frozen=True)
class Scenario:
    """One data-generating setting; ``delta`` is the per-benchmark latent Δ before clamping."""

    pis: str
    d: float
    delta: float
    repeats: int = 1
    flip: float = 0.0

    @property
    def label(self) -> str:
        reps = f"K={self.repeats} f={self.flip:g}" if self.repeats > 1 else "K=1"
        return f"π={self.pis:<4} d={self.d:.2f} {reps:<10} Δ/case={self.delta:+.3f}"


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


def tables_for(scenario: Scenario) -> list[Table2x2]:
    pis = PI_SETS[scenario.pis]
    return [make_table(pis[b], scenario.delta, scenario.d) for b in BENCHMARKS]


def shrink(scenario: Scenario) -> float:
    """E[repeat mean | latent x] = f + (1 - 2f) x, so every expected difference shrinks."""
    return 1 - 2 * scenario.flip if scenario.repeats > 1 else 1.0


def true_deltas(scenario: Scenario, sizes: Sequence[int]) -> tuple[float, float]:
    """(macro, micro) expected candidate - baseline difference of the per-case values."""
    deltas = [t.delta * shrink(scenario) for t in tables_for(scenario)]
    macro = math.fsum(w * x for w, x in zip(WEIGHTS, deltas, strict=True))
    micro = math.fsum(n * x for n, x in zip(sizes, deltas, strict=True)) / sum(sizes)
    return macro, micro


def latent_delta_for(target: float, pis: str, d: float, repeats: int, flip: float) -> float:
    """The per-benchmark latent Δ whose clamped, shrunk macro delta equals ``target``."""
    low, high = -1.0, 0.0
    for _ in range(100):
        mid = (low + high) / 2
        macro, _ = true_deltas(Scenario(pis, d, mid, repeats, flip), [1] * len(BENCHMARKS))
        low, high = (mid, high) if macro < target else (low, mid)
    return round((low + high) / 2, 12)


def scenarios() -> list[Scenario]:
    rows = []
    for d, deltas in (
        (0.05, (0.0, -0.03, -0.05)),
        (0.15, (0.0, -0.03, -0.05, -0.10)),
        (0.30, (0.0, -0.03, -0.05, -0.10, -0.20)),
    ):
        rows += [Scenario("real", d, delta) for delta in deltas]
    for d, deltas in ((0.05, (0.0, -0.03, -0.05)), (0.10, (0.0, -0.05, -0.10))):
        rows += [Scenario("0.95", d, delta) for delta in deltas]
    k, f = 3, 0.15
    rows += [Scenario("real", 0.15, delta, k, f) for delta in (0.0, -0.05, -0.10)]
    rows += [
        Scenario("real", 0.15, latent_delta_for(-m, "real", 0.15, k, f), k, f) for m in MARGINS
    ]
    rows.append(Scenario("real", 0.30, 0.0, k, f))
    return rows


def quick_scenarios() -> list[Scenario]:
    return [
        Scenario("real", 0.15, 0.0),
        Scenario("real", 0.15, -0.05),
        Scenario("real", 0.15, -0.10),
        Scenario("0.95", 0.10, 0.0),
        Scenario("real", 0.15, 0.0, 3, 0.15),
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
    (which reproduces Python's random stream case by case and is too slow to call ~290 000 times), not the same stream.
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
        total = np.empty(u.shape, dtype=np.intp)
        for row in range(runs):
            total[row] = np.searchsorted(cdf[row], u[row], side="right")
        samples += weight * (np.minimum(total, support - 1) - k * n) / (k * n)
    picked = np.partition(samples, [BOOTSTRAP_LOW_INDEX, BOOTSTRAP_HIGH_INDEX], axis=1)
    return picked[:, BOOTSTRAP_LOW_INDEX], picked[:, BOOTSTRAP_HIGH_INDEX]


# --- one scenario ----------------------------------------------------------------------------


def run_scenario(
    size: str, scenario: Scenario, sims: int, seed: int, index: int
) -> dict[str, np.ndarray]:
    """Low and high bound of every interval for ``sims`` simulated paired runs."""
    rng = np.random.default_rng([seed, sum(map(ord, size)), index])
    sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
    offsets = np.cumsum([0, *sizes])
    k = scenario.repeats
    out = {name: np.empty((sims, 2)) for name in INTERVALS}
    for first in range(0, sims, CHUNK):
        runs = min(CHUNK, sims - first)
        cand, base = simulate(rng, scenario, sizes, runs)
        low, high = bootstrap_numpy(rng, cand - base, sizes, k)
        out["bootstrap"][first : first + runs] = np.column_stack([low, high])
        group_means = [(cand[:, a:b] - base[:, a:b]).mean(axis=1) / k for a, b in spans(offsets)]
        macro = sum(w * m for w, m in zip(WEIGHTS, group_means, strict=True))
        cand_values, base_values = (cand / k).tolist(), (base / k).tolist()
        for row in range(runs):
            c_all, b_all = cand_values[row], base_values[row]
            c_groups = [c_all[a:b] for a, b in spans(offsets)]
            b_groups = [b_all[a:b] for a, b in spans(offsets)]
            at = first + row
            out["hoeffding"][at] = hoeffding_interval(float(macro[row]), sizes, WEIGHTS)
            out["strat-newcombe"][at] = stratified_newcombe(c_groups, b_groups, WEIGHTS)
            out["pooled-newcombe"][at] = newcombe_interval(c_all, b_all)[1]
    return out


def spans(offsets: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) column range of every benchmark group."""
    return [(int(a), int(b)) for a, b in itertools.pairwise(offsets)]


# --- bootstrap equivalence check -------------------------------------------------------------


def bootstrap_check(size: str, seed: int, reps: int) -> str:
    """Project bootstrap vs the numpy one on the same data, ``reps`` seeds each."""
    scenario = Scenario("real", 0.15, 0.0, 3, 0.15)
    sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
    rng = np.random.default_rng([seed, 99])
    cand, base = simulate(rng, scenario, sizes, 1)
    offsets = spans(np.cumsum([0, *sizes]))
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

    def text(self) -> str:
        se = math.sqrt(self.value * (1 - self.value) / self.total)
        return f"{100 * self.value:5.1f}±{100 * se:.1f}"

    def bounds(self) -> list[float]:
        return wilson_interval(self.hits, self.total) or [0.0, 1.0]

    def wilson(self) -> str:
        low, high = self.bounds()
        return f"{100 * self.value:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"


@dataclass
class Outcome:
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
        return self.rate(self.bounds[name][:, 1] < 0)

    def noninferiority_pass(self, name: str, margin: float) -> Rate:
        return self.rate(self.bounds[name][:, 0] > -margin)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def is_null(outcome: Outcome) -> bool:
    return abs(outcome.macro) < 1e-12


def print_size(size: str, sims: int, outcomes: list[Outcome]) -> None:
    sizes = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
    print(f"\n=== {size}: {sum(sizes)} cases, {sims} simulated paired runs per scenario ===")
    print("\n[1] two-sided coverage of the true delta (%, ± Monte-Carlo SE) and mean width")
    headers = ["scenario", "macro Δ", "micro Δ"]
    for name in INTERVALS:
        headers += [f"{SHORT[name]} cover", f"{SHORT[name]} width"]
    rows = []
    for o in outcomes:
        row = [o.scenario.label, f"{o.macro:+.4f}", f"{o.micro:+.4f}"]
        for name in INTERVALS:
            row += [o.coverage(name).text(), f"{o.width(name):.3f}"]
        rows.append(row)
    print(table(headers, rows))

    print("\n[2] regression gate (fails when upper bound < 0): fail rate %, ± MC SE")
    print("    macro Δ = 0: false alarm (nominal ≤ 5 %; a two-sided 95 % interval gives ≈ 2.5 %)")
    print("    macro Δ < 0: power (higher is better)")
    headers = ["scenario", "macro Δ", "kind", *(SHORT[n] for n in INTERVALS)]
    rows = []
    for o in outcomes:
        kind = "false alarm" if is_null(o) else "power"
        rows.append(
            [o.scenario.label, f"{o.macro:+.4f}", kind]
            + [o.regression_fail(n).text() for n in INTERVALS]
        )
    print(table(headers, rows))

    print("\n[3] noninferiority gate (passes when lower bound > -M): pass rate %, ± MC SE")
    print("    at macro Δ = -M a pass is a false pass (must be ≤ 5 %); at Δ = 0 higher is better")
    headers = ["scenario", "macro Δ", "M", "kind", *(SHORT[n] for n in INTERVALS)]
    rows = []
    for margin in MARGINS:
        for o in outcomes:
            if abs(o.macro + margin) < 1e-9:
                kind = "FALSE PASS"
            elif is_null(o):
                kind = "pass"
            else:
                continue
            rows.append(
                [o.scenario.label, f"{o.macro:+.4f}", f"{margin:.2f}", kind]
                + [o.noninferiority_pass(n, margin).text() for n in INTERVALS]
            )
    print(table(headers, rows))


def worst(
    outcomes: list[Outcome], pick: str, key: str, margin: float = 0.0
) -> tuple[Rate, Outcome]:
    if key == "coverage":
        pairs = [(o.coverage(pick), o) for o in outcomes]
        return min(pairs, key=lambda p: p[0].value)
    if key == "false-alarm":
        pairs = [(o.regression_fail(pick), o) for o in outcomes if is_null(o)]
    else:
        pairs = [
            (o.noninferiority_pass(pick, margin), o)
            for o in outcomes
            if abs(o.macro + margin) < 1e-9
        ]
    return max(pairs, key=lambda p: p[0].value)


def short_label(outcome: Outcome) -> str:
    return " ".join(outcome.scenario.label.split())


def print_summary(results: dict[str, list[Outcome]]) -> None:
    print("\n=== summary: worst case over all scenarios (Wilson 95 % interval on the rate) ===")
    headers = ["size", "interval", "min coverage", "max false alarm"]
    headers += [f"max false pass M={m:.2f}" for m in MARGINS]
    rows = []
    for size, outcomes in results.items():
        for name in INTERVALS:
            row = [size, SHORT[name], worst(outcomes, name, "coverage")[0].wilson()]
            row.append(worst(outcomes, name, "false-alarm")[0].wilson())
            row += [worst(outcomes, name, "false-pass", m)[0].wilson() for m in MARGINS]
            rows.append(row)
    print(table(headers, rows))

    print("\n=== summary: regression-gate power (fail rate %) at π real, K = 1 ===")
    headers = ["size", "d", "interval", *(f"Δ/case {d:+.2f}" for d in POWER_DELTAS)]
    rows = []
    for size, outcomes in results.items():
        plain = [o for o in outcomes if o.scenario.pis == "real" and o.scenario.repeats == 1]
        for d in sorted({o.scenario.d for o in plain}):
            found = {o.scenario.delta: o for o in plain if o.scenario.d == d}
            for name in INTERVALS:
                rows.append(
                    [size, f"{d:.2f}", SHORT[name]]
                    + [
                        f"{100 * found[x].regression_fail(name).value:.1f}" if x in found else "—"
                        for x in POWER_DELTAS
                    ]
                )
    print(table(headers, rows))
    print("(— : no such scenario, d must be ≥ |Δ|)")

    parts = []
    for size, outcomes in results.items():
        alarm, at_alarm = worst(outcomes, "strat-newcombe", "false-alarm")
        cover, at_cover = worst(outcomes, "strat-newcombe", "coverage")
        passes = [worst(outcomes, "strat-newcombe", "false-pass", m)[0] for m in MARGINS]
        flag = "within nominal" if alarm.value <= NOMINAL else "EXCEEDS THE NOMINAL 5 %"
        under = [
            f"{short_label(o)}: {o.coverage('strat-newcombe').wilson()}"
            for o in outcomes
            if o.coverage("strat-newcombe").bounds()[1] < 0.95
        ]
        text = (
            f"{size}: worst false-alarm {alarm.wilson()} over {sum(map(is_null, outcomes))} "
            f"null scenarios ({flag}; at {short_label(at_alarm)}), worst noninferiority "
            + " and ".join(
                f"false pass {rate.wilson()} at M={m:.2f}"
                for m, rate in zip(MARGINS, passes, strict=True)
            )
            + f", min coverage {cover.wilson()} (at {short_label(at_cover)})"
        )
        if under:
            text += "; coverage significantly below 95 % in " + "; ".join(under)
        parts.append(text)
    verdict = "verdict — default gate (stratified Newcombe): " + ". ".join(parts) + "."
    print()
    print(textwrap.fill(verdict, width=100))


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sims", type=int, help="runs per scenario (default 8000 smoke, 4000 quick)"
    )
    parser.add_argument("--seed", type=int, default=20261201, help="data seed")
    parser.add_argument("--sizes", default="smoke,quick", help="comma-separated profiles")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument(
        "--quick-check", action="store_true", help="200 runs, 5 scenarios: a few seconds"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    profiles = [s.strip() for s in args.sizes.split(",") if s.strip()]
    defaults = {"smoke": 8000, "quick": 4000}
    sims = {s: args.sims or (200 if args.quick_check else defaults.get(s, 2000)) for s in profiles}
    grid = quick_scenarios() if args.quick_check else scenarios()

    print("paired-gate calibration: pytest_srbench.core.compare.paired on simulated paired runs")
    print(f"seed {args.seed}; {len(grid)} scenarios; runs per scenario: {sims}")
    print("benchmarks (sorted), weight ω, baseline accuracy π (real):")
    for name, weight in zip(BENCHMARKS, WEIGHTS, strict=True):
        counts = ", ".join(f"{s} {PROFILE_COUNTS[name][s]}" for s in profiles)
        print(f"  {name:<19} ω={weight:.2f}  π={REALISTIC_PI[name]:.2f}  n: {counts}")
    print(
        "data model: each case's (baseline, candidate) pair is drawn from a 2×2 table with\n"
        "baseline accuracy π_b, candidate accuracy π_b + Δ_b (Δ_b = Δ/case clamped to\n"
        "[-π_b, 1 - π_b]) and discordance d_b = P(outcomes differ) = d clamped to its\n"
        "feasible range [|Δ_b|, min(2π_b + Δ_b, 2(1 - π_b) - Δ_b)]; the cap binds for\n"
        "arc-agi-2 (d_b ≤ 0.20 + Δ_b) and hle (d_b ≤ 0.30 + Δ_b) at π real and for every\n"
        "benchmark (d_b ≤ 0.10 - Δ_b) at π = 0.95. K = 3: each of 3 repeats flips the latent\n"
        "outcome with probability f, the case value is the mean of its repeats, so the true\n"
        "difference is (1 - 2f) Δ_b. macro Δ = Σ ω_b (1 - 2f) Δ_b; micro Δ = Σ n_b (1 - 2f)\n"
        "Δ_b / Σ n_b. The K = 3 rows at macro Δ -0.05 and -0.10 use the latent Δ/case that\n"
        "puts the macro delta exactly on -M."
    )
    print("intervals:")
    for text in LEGEND:
        print(f"  {text}")
    print()
    print(bootstrap_check("smoke", args.seed, 3 if args.quick_check else 40))
    if "quick" in profiles and not args.quick_check:
        print(bootstrap_check("quick", args.seed, 6))

    tasks = [
        (size, scenario, sims[size], args.seed, index)
        for size in profiles
        for index, scenario in enumerate(grid)
    ]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        bounds = list(pool.map(run_scenario, *zip(*tasks, strict=True)))
    results: dict[str, list[Outcome]] = {size: [] for size in profiles}
    for (size, scenario, _, _, _), found in zip(tasks, bounds, strict=True):
        counts = [PROFILE_COUNTS[b][size] for b in BENCHMARKS]
        macro, micro = true_deltas(scenario, counts)
        results[size].append(Outcome(scenario, macro, micro, found))
    for size in profiles:
        print_size(size, sims[size], results[size])
    print_summary(results)
    print(f"\nwall time {time.perf_counter() - started:.0f} s ({args.jobs} processes)")


if __name__ == "__main__":
    main()
