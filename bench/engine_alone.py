"""How much of a run is the engine itself: the same plan run by the engine with no pytest
around it, beside pytest-srbench and the hand-written loop, against one running simulator.

pytest-srbench runs cells on an engine thread while pytest's main thread reports the items;
both share one interpreter lock. This benchmark takes the plan a pytest-srbench run froze and
runs it again in a fresh process that only starts the engine (same store kind, journal, group
commit, transport, adapters and concurrency) and waits for every cell, so the difference to
the pytest run's own wall time is what pytest's reporting (and the lock it shares) costs the
run. Every run is checked: one completed result per planned cell.

    python bench/engine_alone.py                          # 2,000 cells, C=64, L=200 ms and L=0
    python bench/engine_alone.py --cells 4000 --latency 0.2,1.0 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _user_venv import user_python
from _workload import (
    PYTHON,
    Workload,
    child_env,
    make_project,
    reported_wall,
    run_command,
    run_hand_loop_command,
    run_pytest,
    start_endpoint,
    use_python,
)

BENCH_DIR = Path(__file__).resolve().parent


def engine_alone(store_dir: Path, run_id: str, base_url: str, concurrency: int) -> dict[str, float]:
    """Run ``run_id``'s plan again, engine only, into a new store beside ``store_dir``."""
    from pytest_srbench.benchmarks.mcq import MmluProAdapter
    from pytest_srbench.benchmarks.registry import default_registry
    from pytest_srbench.core.plan.budget import Budget
    from pytest_srbench.engine import Engine, EngineOptions
    from pytest_srbench.engine.runtime import RunRuntime
    from pytest_srbench.store import GroupCommitWriter, open_store
    from pytest_srbench.transport import make_transport

    class BenchQuiz(MmluProAdapter):
        benchmark = "bench-mcq"

    registry = default_registry(with_entry_points=False)
    registry.register(BenchQuiz())
    manifest = open_store(store_dir).get_manifest(run_id)
    store = open_store(store_dir.parent / "engine-alone-store")
    new_id = f"alone-{time.time_ns()}"
    started = time.perf_counter()
    store.create_run(new_id, manifest)
    runtime = RunRuntime(
        run_id=new_id,
        manifest=manifest,
        store=store,
        writer=GroupCommitWriter(store),
        transport=make_transport("aiohttp", connections=concurrency),
        adapters=registry,
        base_urls={t.id: base_url for t in manifest.targets},
        budget=Budget(cap_usd=manifest.limits.max_cost_usd),
    )
    cases = {case.id: case for case in manifest.cases}
    targets = {t.id: t for t in manifest.targets}
    work = [(cases[c], targets[t]) for c, t in manifest.iter_planned_keys()]
    engine = Engine(runtime, EngineOptions(concurrency=concurrency))
    engine.start(work)
    statuses = [slot.result(timeout=3600).status for slot in list(engine.slots.values())]
    if not engine.join(600):
        raise RuntimeError("the engine did not stop")
    wall = time.perf_counter() - started
    completed = sum(1 for row in store.results(new_id) if row["status"] == "completed")
    if completed != len(work) or set(statuses) != {"completed"}:
        raise RuntimeError(f"{completed} completed results for {len(work)} cells")
    return {"wall_s": wall, "cells": float(len(work))}


def run_engine_alone_command(
    store_dir: Path, run_id: str, base_url: str, concurrency: int
) -> float:
    done = run_command(
        [PYTHON[0], str(Path(__file__).resolve()), "engine-child", str(store_dir), run_id,
         base_url, str(concurrency)],
        cwd=BENCH_DIR, env=child_env(),
    )  # fmt: skip
    return reported_wall(done, "the engine alone")


def latest_run(store_dir: Path) -> str:
    import sqlite3
    from contextlib import closing

    with closing(sqlite3.connect(store_dir / "journal.sqlite3")) as db:
        row = db.execute("SELECT id FROM runs ORDER BY created_at DESC LIMIT 1").fetchone()
    return str(row[0])


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cells", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--latency", default="0.2,0", help="seconds, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="medians of this many runs")
    parser.add_argument(
        "--dev-env", action="store_true", help="this interpreter, not .cache/bench-user"
    )
    args = parser.parse_args()
    if not args.dev_env:
        use_python(user_python())
    header = ("latency", "ideal s", "pytest-srbench run s", "engine alone s", "hand loop s")
    print("  ".join(header))
    with tempfile.TemporaryDirectory(prefix="srbench-alone-") as scratch:
        for index, latency in enumerate(float(x) for x in args.latency.split(",")):
            workload = Workload(args.cells, latency, 1, args.concurrency)
            endpoint = start_endpoint(workload)
            try:
                project = make_project(Path(scratch) / f"p{index}", workload, endpoint.base_url)
                ours, alone, loop = [], [], []
                for _ in range(args.repeat):  # interleaved: load falls on all three alike
                    ours.append(run_pytest(project, workload).wall_s)
                    store_dir = project / ".srbench"
                    alone.append(
                        run_engine_alone_command(
                            store_dir, latest_run(store_dir), endpoint.base_url, args.concurrency
                        )
                    )
                    loop.append(run_hand_loop_command(workload, base_url=endpoint.base_url).wall_s)
            finally:
                endpoint.stop()
            row = (f"{latency * 1000:.0f} ms", f"{workload.ideal_s:.2f}",
                   *(f"{statistics.median(v):.2f}" for v in (ours, alone, loop)))  # fmt: skip
            print("  ".join(cell.ljust(len(name)) for cell, name in zip(row, header, strict=True)))
    print(
        "\npytest-srbench run s = the run's own wall time (created → finished); engine alone = "
        "create the run, start the engine on every planned cell, wait for all, stop (the same "
        "plan, in a process with no pytest); hand loop = its request phase. Medians."
    )
    return 0


if __name__ == "__main__" and sys.argv[1:2] == ["engine-child"]:
    store_arg, run_arg, url_arg, concurrency_arg = sys.argv[2:6]
    print(json.dumps(engine_alone(Path(store_arg), run_arg, url_arg, int(concurrency_arg))))
elif __name__ == "__main__":
    sys.exit(main())
