"""How long a paired comparison takes at the smoke, quick and standard sizes, and what the
vectorised bootstrap saves against sr-bench's plain loop (the test oracle
``tests/oracles/bootstrap.py``; same numbers, bit for bit).

    python bench/comparison.py [--repeat 3]

Prints, per size: the plain-loop bootstrap, the vectorised one and their ratio; a whole
``compare`` (validation, exact qualities, Hoeffding, bootstrap, Newcombe, McNemar) of two
synthetic runs with two targets each.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.oracles: the plain loop

from pytest_srbench.core.compare.paired import stratified_bootstrap
from pytest_srbench.core.compare.runs import RunSide, compare
from pytest_srbench.core.models import Case, DatasetInfo, Message, Prices, Run, Target
from pytest_srbench.core.plan.build import freeze_plan
from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS, PROFILE_COUNTS
from pytest_srbench.core.report.build import build_report
from tests.oracles.bootstrap import stratified_bootstrap_reference

PRICE = Prices(input=1, cached_input=0.5, cache_write=1, output=2)


def sizes(profile: str) -> dict[str, int]:
    if profile == "standard":
        return {b: c["standard"] for b, c in PROFILE_COUNTS.items()}
    return {b: c[profile] for b, c in PROFILE_COUNTS.items()}


def side(run_id: str, profile: str, accuracy: dict[str, float]) -> RunSide:
    rng = random.Random(run_id)
    cases = [
        Case(
            id=f"{b}/{i}",
            benchmark=b,
            messages=[Message(role="user", content=f"{b} {i}")],
            answer="A",
        )
        for b, n in sizes(profile).items()
        for i in range(n)
    ]
    targets = [
        Target(id=t, model=t, base_url="http://127.0.0.1:9/v1", prices={t: PRICE}) for t in accuracy
    ]
    plan = freeze_plan(
        targets=targets,
        cases=cases,
        dataset=DatasetInfo(profile=profile, seed=1),
        adapter_versions={b: "1" for b in PROFILE_COUNTS},
    )
    results: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    for t, p in accuracy.items():
        for c in cases:
            results.append(
                {
                    "case_id": c.id,
                    "target_id": t,
                    "status": "completed",
                    "correct": rng.random() < p,
                }
            )
            calls.append(
                {"id": f"{c.id}-{t}", "case_id": c.id, "target_id": t, "role": "subject",
                 "status": "completed", "cost_usd": 0.001, "usage": None}
            )  # fmt: skip
    run = Run(id=run_id, status="completed", created_at="2026-11-30T00:00:00+00:00",
              updated_at="2026-11-30T00:00:01+00:00", plan_sha256=plan.plan_sha256)  # fmt: skip
    return RunSide.from_report(build_report(plan, run, results, calls))


def timed(repeat: int, action: Any) -> float:
    values = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        values.append(time.perf_counter() - start)
    return statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    names = sorted(BENCHMARK_WEIGHTS)
    weights = [BENCHMARK_WEIGHTS[n] for n in names]
    print(f"{'size':>8}  {'cases':>6}  {'plain bootstrap':>16}  {'vectorised':>11}  {'ratio':>6}  "
          f"{'compare (2x2 targets)':>22}")  # fmt: skip
    for profile in ("smoke", "quick", "standard"):
        counts = sizes(profile)
        rng = random.Random(3)
        groups = [[rng.choice([-1.0, 0.0, 0.0, 1.0]) for _ in range(counts[n])] for n in names]
        assert stratified_bootstrap_reference(groups, weights) == stratified_bootstrap(
            groups, weights
        )
        plain = timed(args.repeat, lambda g=groups: stratified_bootstrap_reference(g, weights))
        fast = timed(args.repeat, lambda g=groups: stratified_bootstrap(g, weights))
        base = side("base", profile, {"a": 0.8, "b": 0.6})
        cand = side("cand", profile, {"a": 0.75, "c": 0.7})
        whole = timed(args.repeat, lambda b=base, c=cand: compare(b, c))
        print(f"{profile:>8}  {sum(counts.values()):>6}  {plain * 1000:>13.1f} ms  "
              f"{fast * 1000:>8.1f} ms  {plain / fast:>5.1f}x  {whole * 1000:>19.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
