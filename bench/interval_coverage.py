"""Coverage of every accuracy interval the report prints, by simulation.

Simulates runs at the smoke, quick and standard case counts with K = 1, 3 and 5 repeats per
case, with heterogeneous case difficulty and true accuracies over the whole of [0, 1], and measures how often each 95 % interval of the
report covers the true accuracy: the target's ``accuracy_ci95``, every benchmark row's, and
the macro accuracy's (``macro_accuracy_ci95``, the frontier's ``quality_ci95``). The former
cell-based intervals are measured beside them. Results and method: docs/interval-coverage.md.

    python bench/interval_coverage.py                 # the full grid, about a minute
    python bench/interval_coverage.py --sims 2000     # a rough version, a few seconds
"""

from __future__ import annotations

import argparse
import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import beta as beta_distribution
from scipy.stats import binom

from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS, PROFILE_COUNTS
from pytest_srbench.core.stats import (
    EDGE_COUNT,
    LOW_COVERAGE,
    LOW_COVERAGE_MAX_CASES,
    WILSON_Z,
    case_interval,
    coverage_caveat,
    effective_cases,
    stratified_case_interval,
    student_t_quantile,
)

BENCHMARKS = sorted(BENCHMARK_WEIGHTS)
WEIGHTS = np.array([BENCHMARK_WEIGHTS[b] for b in BENCHMARKS])
SIZES = ("smoke", "quick", "standard")
LARGE = {"mmlu-pro", "simpleqa-verified", "gpqa-diamond", "hle"}  # ≥ 40 cases at quick
# true benchmark accuracies μ_b: flat, and mixes in the realistic range 0.3-0.9
# (the gate study's "real" accuracies with hle and arc-agi-2 raised to 0.3)
REAL = dict(zip(BENCHMARKS, (0.30, 0.60, 0.30, 0.50, 0.80, 0.30, 0.45, 0.55, 0.40), strict=True))
MIXES: dict[str, dict[str, float]] = {
    **{
        f"flat {mu:.1f}": dict.fromkeys(BENCHMARKS, mu)
        for mu in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    },
    "real≥0.3": REAL,
    "large .9/small .5": {b: 0.9 if b in LARGE else 0.5 for b in BENCHMARKS},
    "large .9/small .3": {b: 0.9 if b in LARGE else 0.3 for b in BENCHMARKS},
    "large .3/small .6": {b: 0.3 if b in LARGE else 0.6 for b in BENCHMARKS},
    # near the edges (issue 47): ARC-AGI-2 and HLE territory for small models, and saturated
    # benchmarks
    **{
        f"flat {mu:g}": dict.fromkeys(BENCHMARKS, mu)
        for mu in (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.95, 0.98, 0.99, 0.995)
    },
    "large .9/small .01": {b: 0.9 if b in LARGE else 0.01 for b in BENCHMARKS},
    "large .01/small .5": {b: 0.01 if b in LARGE else 0.5 for b in BENCHMARKS},
}
REPEATS = (1, 3, 5)
# case difficulty: p_i ~ Beta(μκ, (1 − μ)κ) (a 50/50 mixture for "mixed")
HETEROGENEITY = {"consistent": (0.5,), "mixed": (0.5, 20.0), "flaky": (20.0,)}


@dataclass(frozen=True)
class Design:
    size: str
    repeats: int
    heterogeneity: str  # "any" at K = 1: a single cell is Bernoulli(μ_b) whatever the mix
    limit: int | None = None  # --srbench-limit: this many cases of every benchmark

    @property
    def sizes(self) -> list[int]:
        if self.limit is not None:
            return [self.limit] * len(BENCHMARKS)
        return [PROFILE_COUNTS[b][self.size] for b in BENCHMARKS]

    @property
    def label(self) -> str:
        size = self.size if self.limit is None else f"limit {self.limit}"
        return f"{size} K={self.repeats} {self.heterogeneity}"


def log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def beta_binomial(repeats: int, a: float, b: float) -> np.ndarray:
    """P(j of K repeats right), j = 0..K, for a case whose p_i ~ Beta(a, b)."""
    return np.array(
        [
            math.comb(repeats, j) * math.exp(log_beta(j + a, repeats - j + b) - log_beta(a, b))
            for j in range(repeats + 1)
        ]
    )


def case_pmf(repeats: int, mu: float, heterogeneity: str) -> np.ndarray:
    """P(a case has j of its K repeats right), j = 0..K, for case p_i ~ the Beta mix."""
    if heterogeneity == "any":
        return np.array(
            [math.comb(repeats, j) * mu**j * (1 - mu) ** (repeats - j) for j in range(repeats + 1)]
        )
    kappas = HETEROGENEITY[heterogeneity]
    return np.mean([beta_binomial(repeats, mu * k, (1 - mu) * k) for k in kappas], axis=0)


# --- the report's intervals, vectorised over runs ---------------------------------------------


def wilson(p: np.ndarray, n: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
    """``core.stats.wilson_bounds`` over arrays."""
    z2 = WILSON_Z * WILSON_Z
    den = 1 + z2 / n
    centre = (p + z2 / (2 * n)) / den
    half = WILSON_Z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / den
    return np.maximum(0.0, centre - half), np.minimum(1.0, centre + half)


def accuracy(
    p: np.ndarray, size: np.ndarray | float, cases: np.ndarray | float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``core.stats.accuracy_bounds`` over arrays: Wilson at the effective size, widened to the
    Clopper–Pearson hull (over the cases) within ``EDGE_COUNT`` successes or failures of the
    edge."""
    low, high = wilson(p, size)
    units = size if cases is None else np.minimum(size, cases)
    n = np.broadcast_to(np.asarray(units, dtype=float), np.shape(p))
    x = p * n
    edge = np.minimum(p, 1 - p) * n <= EDGE_COUNT + 1e-9
    with np.errstate(divide="ignore", invalid="ignore"):
        exact_low = np.where(
            x > 0, beta_distribution.ppf(0.025, np.maximum(x, 1e-300), n - x + 1), 0.0
        )
        exact_high = np.where(
            x < n, beta_distribution.ppf(0.975, x + 1, np.maximum(n - x, 1e-300)), 1.0
        )
    return (
        np.where(edge, np.minimum(low, exact_low), low),
        np.where(edge, np.maximum(high, exact_high), high),
    )


def exact_worst(n: int, accuracies: tuple[float, float] = (0.0, 1.0)) -> float:
    """``core.stats.accuracy_worst_coverage`` vectorised (scipy's binomial pmf)."""
    k = np.arange(n + 1)
    low, high = accuracy(k / n, float(n))
    ends = np.concatenate([low, high])
    points = np.concatenate([ends - 1e-12, ends + 1e-12, [accuracies[0], accuracies[1]]])
    points = points[(points >= accuracies[0]) & (points <= accuracies[1])]
    inside = (low[None, :] <= points[:, None]) & (points[:, None] <= high[None, :])
    return float((binom.pmf(k[None, :], n, points[:, None]) * inside).sum(axis=1).min())


def kish(hist: np.ndarray, repeats: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, effective cases, cases) of ``core.stats.effective_cases`` from per-run histograms
    of cases by correct repeats (shape runs × (K + 1), the same number of cases in every
    run), in floating point."""
    n = hist.sum(axis=1).astype(float)
    cells = n * repeats
    j = np.arange(repeats + 1)
    right = hist @ j
    p = right / cells
    spread = (hist * (j[None, :] - p[:, None] * repeats) ** 2).sum(axis=1)
    cases = int(n[0])  # every run of a design has the same number of cases
    scale = (WILSON_Z / student_t_quantile(cases - 1)) ** 2 if cases > 1 else 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        raw = p * (1 - p) * cells * cells * (n - 1) / (n * spread)
    raw = np.where(raw > n, raw * scale, n)
    size = np.clip(np.where(spread > 0, raw, cells), n, cells)
    size = np.where((n == 1) | (right == 0) | (right == cells), n, size)
    return p, size, n


def stratified(
    ps: Sequence[np.ndarray], sizes: Sequence[np.ndarray], cases: float | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``core.stats.stratified_case_interval`` over arrays (the nine benchmark weights)."""
    omega = WEIGHTS / WEIGHTS.sum()
    p = sum(w * x for w, x in zip(omega, ps, strict=True))
    own = sum(w * w * x * (1 - x) / e for w, x, e in zip(omega, ps, sizes, strict=True))
    design = sum(w * w / e for w, e in zip(omega, sizes, strict=True))
    variance = np.maximum(own, p * (1 - p) * design)
    with np.errstate(divide="ignore", invalid="ignore"):
        size = np.where(variance > 0, p * (1 - p) / variance, 1 / design)
    return accuracy(p, size, cases)


def mover(ps: Sequence[np.ndarray], cells: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """The former frontier interval: per-benchmark Wilson over cells joined by MOVER."""
    omega = WEIGHTS / WEIGHTS.sum()
    p = sum(w * x for w, x in zip(omega, ps, strict=True))
    below = np.zeros_like(p)
    above = np.zeros_like(p)
    for w, x, t in zip(omega, ps, cells, strict=True):
        lo, hi = wilson(x, t)
        below += (w * (x - lo)) ** 2
        above += (w * (hi - x)) ** 2
    return np.maximum(0.0, p - np.sqrt(below)), np.minimum(1.0, p + np.sqrt(above))


# --- one design × accuracy mix --------------------------------------------------------------


@dataclass
class Result:
    design: Design
    mix: str
    cover: dict[str, float]  # interval -> coverage
    width: dict[str, float]  # interval -> mean width
    bench_cover: dict[str, float]  # benchmark -> coverage of its row interval


def covered(bounds: tuple[np.ndarray, np.ndarray], truth: float) -> np.ndarray:
    return (bounds[0] <= truth) & (truth <= bounds[1])


def simulate(design: Design, mix: str, sims: int, seed: int) -> tuple[Result, list[np.ndarray]]:
    mixes = list(MIXES)
    kinds = ["any", *HETEROGENEITY]
    size = SIZES.index(design.size) if design.limit is None else 10 + design.limit
    stream = [size, design.repeats, kinds.index(design.heterogeneity)]
    rng = np.random.default_rng([seed, *stream, mixes.index(mix)])
    k = design.repeats
    mus = [MIXES[mix][b] for b in BENCHMARKS]
    hists = [
        rng.multinomial(n, case_pmf(k, mu, design.heterogeneity), size=sims)
        for n, mu in zip(design.sizes, mus, strict=True)
    ]
    total = np.array(design.sizes, dtype=float)
    micro = float((total * mus).sum() / total.sum())
    macro = float((WEIGHTS * mus).sum() / WEIGHTS.sum())
    rows = [kish(h, k) for h in hists]
    pooled = kish(sum(hists), k)
    intervals = {
        "target": (accuracy(*pooled), micro),
        "target (cells)": (wilson(pooled[0], pooled[2] * k), micro),
        "macro": (
            stratified([r[0] for r in rows], [r[1] for r in rows], float(sum(design.sizes))),
            macro,
        ),
        "macro (MOVER, cells)": (mover([r[0] for r in rows], [n * k for n in design.sizes]), macro),
    }
    cover = {name: float(covered(b, t).mean()) for name, (b, t) in intervals.items()}
    width = {name: float((b[1] - b[0]).mean()) for name, (b, _) in intervals.items()}
    bench_cover = {
        b: float(covered(accuracy(*r), mu).mean())
        for b, r, mu in zip(BENCHMARKS, rows, mus, strict=True)
    }
    return Result(design, mix, cover, width, bench_cover), hists


# --- equivalence with the project's functions -------------------------------------------------


def check_against_project(design: Design, hists: list[np.ndarray], runs: int) -> float:
    """Largest |difference| between the vectorised bounds and the project's own functions
    (``case_interval``, ``stratified_case_interval``) on the first ``runs`` simulated runs."""
    k = design.repeats
    worst = 0.0
    for run in range(runs):
        strata = []
        everything = []
        ps, sizes = [], []
        for b, h in zip(BENCHMARKS, hists, strict=True):
            clusters = [(j, k) for j in range(k + 1) for _ in range(int(h[run, j]))]
            everything += clusters
            size = effective_cases(clusters)
            assert size is not None
            right = sum(c for c, _ in clusters)
            strata.append(
                (BENCHMARK_WEIGHTS[b], right, len(clusters) * k, float(size), len(clusters))
            )
            ours = case_interval(clusters)
            p, e, n = kish(h[run : run + 1], k)
            theirs = accuracy(p, e, n)
            assert ours is not None
            worst = max(worst, abs(ours[0] - theirs[0][0]), abs(ours[1] - theirs[1][0]))
            ps.append(p)
            sizes.append(e)
        ours = stratified_case_interval(strata)
        theirs = stratified(ps, sizes, float(sum(design.sizes)))
        assert ours is not None
        worst = max(worst, abs(ours[0] - theirs[0][0]), abs(ours[1] - theirs[1][0]))
        total = case_interval(everything)
        p, e, n = kish(sum(hists)[run : run + 1], k)
        theirs = accuracy(p, e, n)
        assert total is not None
        worst = max(worst, abs(total[0] - theirs[0][0]), abs(total[1] - theirs[1][0]))
    return worst


# --- output ---------------------------------------------------------------------------------


def pct(value: float) -> str:
    return f"{100 * value:5.1f}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns padded to their widest cell; the first left-aligned, the others right."""
    widths = [max(len(c) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if i else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    return [line(header), line(["-" * w for w in widths]), *[line(r) for r in rows]]


def designs() -> list[Design]:
    out = []
    for size in SIZES:
        out.append(Design(size, 1, "any"))
        out += [Design(size, k, h) for k in REPEATS[1:] for h in HETEROGENEITY]
    return out


def small(size: str, benchmark: str) -> bool:
    """Whether a benchmark row carries a worst-case coverage (≤ 55 cases) at ``size``."""
    return PROFILE_COUNTS[benchmark][size] <= LOW_COVERAGE_MAX_CASES


def lowest(values: Sequence[float]) -> str:
    return pct(min(values)) if values else "—"


def grid_table(results: Sequence[Result]) -> list[str]:
    """[1]: every design and mix."""
    header = ["design", "mix", "target", "bench ≤55", "bench >55", "macro"]
    header += ["target cells", "macro MOVER"]
    rows = []
    for r in results:
        size = r.design.size
        rows.append(
            [
                r.design.label,
                r.mix,
                pct(r.cover["target"]),
                lowest([v for b, v in r.bench_cover.items() if small(size, b)]),
                lowest([v for b, v in r.bench_cover.items() if not small(size, b)]),
                pct(r.cover["macro"]),
                pct(r.cover["target (cells)"]),
                pct(r.cover["macro (MOVER, cells)"]),
            ]
        )
    return table(header, rows)


def worst_table(results: Sequence[Result]) -> list[str]:
    """[2]: the worst case over the mixes per size and K, and mean widths."""
    header = ["size", "K", "cases", "target", "bench ≤55", "bench >55", "macro", "width"]
    header += ["target cells", "macro MOVER", "width"]
    rows = []
    for size, k in itertools.product(SIZES, REPEATS):
        own = [r for r in results if r.design.size == size and r.design.repeats == k]
        benches = [(b, v) for r in own for b, v in r.bench_cover.items()]
        rows.append(
            [
                size,
                str(k),
                str(sum(PROFILE_COUNTS[b][size] for b in BENCHMARKS)),
                lowest([r.cover["target"] for r in own]),
                lowest([v for b, v in benches if small(size, b)]),
                lowest([v for b, v in benches if not small(size, b)]),
                lowest([r.cover["macro"] for r in own]),
                f"{np.mean([r.width['macro'] for r in own]):.3f}",
                lowest([r.cover["target (cells)"] for r in own]),
                lowest([r.cover["macro (MOVER, cells)"] for r in own]),
                f"{np.mean([r.width['macro (MOVER, cells)'] for r in own]):.3f}",
            ]
        )
    return table(header, rows)


def benchmark_table(results: Sequence[Result]) -> list[str]:
    """[3]: per benchmark row, the worst case over the mixes beside its stated caveat."""
    header = ["benchmark", *[f"{s} K={k}" for s, k in itertools.product(SIZES, REPEATS)]]
    rows = []
    for b in BENCHMARKS:
        row = [b]
        for size, k in itertools.product(SIZES, REPEATS):
            n = PROFILE_COUNTS[b][size]
            own = [r for r in results if r.design.size == size and r.design.repeats == k]
            caveat = coverage_caveat(n)
            stated = f" / ≥{100 * caveat:.1f}" if caveat is not None else ""
            row.append(f"{lowest([r.bench_cover[b] for r in own])} ({n}){stated}")
        rows.append(row)
    return table(header, rows)


def exact_lines(exact_to: int) -> list[str]:
    """[4]: the printed interval's exact worst case over a true accuracy in [0, 1] by number
    of cases, and every n where it is < 93 %."""
    shown = [1, 2, 3, 4, 5, 8, 10, 12, 14, 15, 20, 30, 36, 40, 50, 55, 56, 58, 60, 80, 100, 102]
    shown += [110, 200, 300, 500, 1000, 2000]
    worst = {n: exact_worst(n) for n in range(1, exact_to + 1)}
    worst.update({n: exact_worst(n) for n in shown if n > exact_to})
    cells = [f"n={n}: {100 * worst[n]:.2f}" for n in shown]
    low = [n for n in sorted(worst) if worst[n] < LOW_COVERAGE]
    lowest_n = min(worst, key=worst.__getitem__)
    return [
        *("  " + "  ".join(cells[i : i + 8]) for i in range(0, len(cells), 8)),
        f"  every n ≤ {exact_to} and those shown: lowest {100 * worst[lowest_n]:.2f} % (n = {lowest_n}); below "
        f"{100 * LOW_COVERAGE:.0f} %: {low or 'none'} (LOW_COVERAGE_MAX_CASES = "
        f"{LOW_COVERAGE_MAX_CASES})",
    ]


def limit_table(limits: Sequence[int], sims: int, seed: int) -> list[str]:
    """[5]: all nine benchmarks at ``--srbench-limit`` L (L cases each): the target and macro
    intervals, worst over the mixes."""
    header = ["cases per benchmark", "K", "target", "macro", "target cells", "macro MOVER"]
    rows = []
    for limit, k in itertools.product(limits, REPEATS):
        kinds = ["any"] if k == 1 else list(HETEROGENEITY)
        own = [
            simulate(Design("smoke", k, kind, limit), mix, sims, seed)[0]
            for kind in kinds
            for mix in MIXES
        ]
        rows.append(
            [
                str(limit),
                str(k),
                *(
                    lowest([r.cover[name] for r in own])
                    for name in ("target", "macro", "target (cells)", "macro (MOVER, cells)")
                ),
            ]
        )
    return table(header, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=20000, help="runs per design and mix")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument(
        "--exact-to", type=int, default=300, help="check the interval's exact worst case to n"
    )
    parser.add_argument("--limits", default="1,2,3,5", help="[5]: cases per benchmark")
    args = parser.parse_args()
    started = time.monotonic()
    print("interval coverage: the report's 95 % accuracy intervals on simulated runs")
    print(f"seed {args.seed}; {args.sims} runs per design and accuracy mix; z = {WILSON_Z}")
    print("case counts per benchmark (sorted) and weight:")
    for b, w in zip(BENCHMARKS, WEIGHTS, strict=True):
        counts = ", ".join(f"{s} {PROFILE_COUNTS[b][s]}" for s in SIZES)
        print(f"  {b:19s} ω={w:.2f}  {counts}")
    print("case p_i ~ Beta(μ_b κ, (1 − μ_b) κ): consistent κ = 0.5, flaky κ = 20, mixed = 50/50;")
    print("K = 1 needs no mix (a single cell is Bernoulli(μ_b) whatever the case mix)")
    print(f"accuracy mixes μ_b: {', '.join(MIXES)}")
    print("truth: target = Σ n_b μ_b / Σ n_b; benchmark = μ_b; macro = Σ ω_b μ_b")
    print()

    results: list[Result] = []
    difference = 0.0
    for design in designs():
        for mix in MIXES:
            result, hists = simulate(design, mix, args.sims, args.seed)
            results.append(result)
            if mix in ("flat 0.5", "real≥0.3"):
                difference = max(difference, check_against_project(design, hists, 25))
    print(
        "vectorised intervals vs the project's case_interval / stratified_case_interval on "
        f"25 runs per design and 2 mixes: largest |difference| {difference:.1e}"
    )
    print()
    se = 100 * math.sqrt(0.95 * 0.05 / args.sims)
    print(f"[1] coverage (%) per design and accuracy mix (Monte-Carlo SE ≈ {se:.2f} points)")
    print(*grid_table(results), sep="\n")
    print("bench ≤55 / >55: the lowest coverage over the benchmark rows of ≤ 55 cases (which carry")
    print("accuracy_ci95_worst_coverage) and of more cases (no caveat); — where there are none.")
    print()
    print("[2] worst coverage (%) over all accuracy and case-difficulty mixes; mean width")
    print(*worst_table(results), sep="\n")
    print()
    print("[3] per benchmark row: worst coverage (%) over the mixes (cases); after the / the")
    print("    worst-case coverage the row states (accuracy_ci95_worst_coverage), if any")
    print(*benchmark_table(results), sep="\n")
    print()
    print("[4] exact worst coverage (%) of the printed 95 % interval over n cases (K = 1), for a")
    print("    true accuracy anywhere in [0, 1]")
    print(*exact_lines(args.exact_to), sep="\n")
    print()
    limits = [int(x) for x in args.limits.split(",") if x]
    if limits:
        print("[5] off the profiles: every benchmark at --srbench-limit L; worst coverage (%) over")
        print("    the mixes (the target interval over 9 L cases carries its caveat up to 55)")
        print(*limit_table(limits, args.sims // 2, args.seed), sep="\n")
        print()
    print(f"took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
