"""Build a store holding one interrupted run of 100,000 cells, then time the operator commands
that must stay interactive on it: ``srbench recover-plan`` (both modes) and
``srbench show --calls --limit 100`` (first page, a deep page, active calls, results).

Each command runs in-process through ``srbench``'s own ``main`` (argument parsing, store open
and sweep, the query, JSON output); ``recover-plan`` is also timed typed, as a user types it
(a fresh ``python -m pytest_srbench`` from spawn to exit: start-up, imports, the plan, its
file), beside ``--baseline-tree`` (an earlier source tree) when given, interleaved.

    python bench/durable_store.py [--cells 100000] [--repeat 5] [--keep DIR]
    python bench/durable_store.py --keep DIR --reuse --baseline-tree OLD   # a store built before
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _workload import child_env, run_command

from pytest_srbench.cli.main import main as srbench
from pytest_srbench.core.models import Case, DatasetInfo, Message, Prices, Target
from pytest_srbench.core.plan.build import freeze_plan
from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS
from pytest_srbench.store.opening import open_store
from pytest_srbench.store.writes import FinishCall, InsertCall, UpsertResult, Write

PRICE = Prices(input=1, cached_input=0.5, cache_write=1, output=2)
PROMPT = "Which option follows from the statement below? " * 8
USAGE = {"input_tokens": 140, "cached_input_tokens": 0, "cache_write_tokens": 0,
         "output_tokens": 90}  # fmt: skip


def build_store(root: Path, cells: int) -> tuple[str, dict[str, int]]:
    """One interrupted run: most cells finished, some failed, some unknown, the rest pending."""
    rng = random.Random(8)
    names = sorted(BENCHMARK_WEIGHTS)
    targets = [
        Target(id=f"t{k}", model=f"m{k}", base_url="http://127.0.0.1:9/v1", prices={f"m{k}": PRICE})
        for k in range(2)
    ]
    cases = [
        Case(
            id=f"{names[i % len(names)]}/case-{i:06d}",
            benchmark=names[i % len(names)],
            messages=[Message(role="user", content=f"{PROMPT} ({i})")],
            answer="C",
        )
        for i in range(cells // len(targets))
    ]
    manifest = freeze_plan(
        targets=targets,
        cases=cases,
        dataset=DatasetInfo(profile="standard", seed=1),
        adapter_versions={b: "1" for b in names},
    )
    store = open_store(root)
    run_id = "run-100k"
    store.create_run(run_id, manifest, status="running")
    mix = {"completed": 0, "failed": 0, "sent_unknown": 0, "pending": 0}
    writes: list[Write] = []
    for target in targets:
        for case in cases:
            draw = rng.random()
            status = (
                "completed" if draw < 0.8 else "failed" if draw < 0.9
                else "sent_unknown" if draw < 0.95 else "pending"
            )  # fmt: skip
            mix[status] += 1
            if status == "pending":
                continue
            call_id = f"c-{case.id}-{target.id}"
            call = {"id": call_id, "case_id": case.id, "target_id": target.id, "role": "subject",
                    "status": "sent", "model": target.model, "started_at": "2026-11-30T00:00:00+00:00"}  # fmt: skip
            writes.append(InsertCall(run_id, dict(call)))
            if status != "sent_unknown":
                finished = {**call, "status": "completed" if status == "completed" else "failed",
                            "usage": USAGE, "cost_usd": 0.00032, "latency_s": 1.2,
                            "finish_reason": "stop", "evidence": None}  # fmt: skip
                writes.append(FinishCall(run_id, finished))
            else:
                writes.append(
                    FinishCall(run_id, {**call, "status": "sent_unknown", "evidence": None})
                )
            writes.append(
                UpsertResult(run_id, {"case_id": case.id, "target_id": target.id,
                                      "benchmark": case.benchmark, "status": status,
                                      "correct": (rng.random() < 0.7) if status == "completed" else None,
                                      "cost_usd": 0.00032 if status != "sent_unknown" else None})
            )  # fmt: skip
            if len(writes) >= 20_000:
                with store.transaction():
                    store.write_batch(writes)
                writes = []
    with store.transaction():
        store.write_batch(writes)
    store.set_run_status(run_id, "interrupted", "benchmark store: owner gone")
    store.close()
    return run_id, mix


def timed(argv: list[str], repeat: int) -> tuple[float, int]:
    """Median wall time of ``srbench ARGV`` in-process, and the size of what it printed."""
    times = []
    size = 0
    for _ in range(repeat):
        out = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stdout(out):
            code = srbench(argv)
        times.append(time.perf_counter() - start)
        if code != 0:
            raise SystemExit(f"srbench {' '.join(argv)} exited {code}")
        size = len(out.getvalue())
    return statistics.median(times), size


def typed_recover_plan(root: Path, run_id: str, repeat: int, baseline: str | None) -> None:
    """``srbench recover-plan`` as typed: spawn to exit, medians, trees interleaved."""
    trees = {"this tree": None, **({"baseline tree": baseline} if baseline else {})}
    for mode in ("undispatched", "failed"):
        seconds: dict[str, list[float]] = {name: [] for name in trees}
        outputs: dict[str, bytes] = {}
        for _ in range(repeat):
            for name, tree in trees.items():
                plan = root.parent / f"typed-{mode}-{len(outputs)}.json"
                command = [sys.executable, "-m", "pytest_srbench", "--store", str(root),
                           "recover-plan", run_id, "--mode", mode, "--output", str(plan)]  # fmt: skip
                done = run_command(command, cwd=root.parent, env=child_env(tree))
                if done.returncode != 0:
                    raise SystemExit(f"recover-plan failed:\n{done.output}")
                seconds[name].append(done.seconds)
                outputs[name] = plan.read_bytes()
        same = len(set(outputs.values())) == 1
        for name, values in seconds.items():
            print(f"typed: srbench recover-plan --mode {mode:<13} ({name}) "
                  f"{statistics.median(values):.3f} s median of {repeat}"
                  + ("" if name == "this tree" else f"; plan files identical: {same}"))  # fmt: skip


def operator_commands(run_id: str, plan_file: Path) -> dict[str, list[str]]:
    """The operator commands timed on a large run: label -> ``srbench`` arguments."""
    return {
        "recover-plan --mode undispatched": ["recover-plan", run_id, "--output", str(plan_file)],
        "recover-plan --mode failed": ["recover-plan", run_id, "--mode", "failed"],
        "show --calls --limit 100": ["show", run_id, "--calls", "--limit", "100"],
        "show --calls --after 50000 --limit 100": ["show", run_id, "--calls", "--after",
                                                   "50000", "--limit", "100"],
        "show --calls --active --limit 100": ["show", run_id, "--calls", "--active", "--limit", "100"],
        "show --results --limit 100": ["show", run_id, "--results", "--limit", "100"],
        "show (summary)": ["show", run_id],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="build the store here and keep it")
    parser.add_argument("--reuse", action="store_true", help="use the store --keep names")
    parser.add_argument("--baseline-tree", metavar="DIR", help="also time this source tree typed")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="srbench-durable-")) / "store"
    try:
        if args.reuse and (root / "journal.sqlite3").exists():
            run_id = "run-100k"
        else:
            start = time.perf_counter()
            run_id, mix = build_store(root, args.cells)
            built = time.perf_counter() - start
            print(f"store: {args.cells:,} cells ({', '.join(f'{k} {v:,}' for k, v in mix.items())}); "
                  f"built in {built:.1f} s")  # fmt: skip
        db = root / "journal.sqlite3"
        size_mb = sum(p.stat().st_size for p in root.glob("journal.sqlite3*")) / 1e6
        print(f"store: {size_mb:.1f} MB ({db.name})")
        typed_recover_plan(root, run_id, args.repeat, args.baseline_tree)
        plan_file = root.parent / "plan.json"
        commands = operator_commands(run_id, plan_file)
        print(
            f"{'command (in-process, median of ' + str(args.repeat) + ')':<48}{'time':>10}{'output':>12}"
        )
        for label, argv in commands.items():
            seconds, size = timed(["--store", str(root), *argv], args.repeat)
            print(f"srbench {label:<40}{seconds * 1000:>8.0f} ms{size / 1000:>9.0f} kB")
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import pytest_srbench.cli.main"], check=True)
        print(f"{'(python start-up + import pytest_srbench.cli.main)':<48}"
              f"{(time.perf_counter() - start) * 1000:>8.0f} ms")  # fmt: skip
    finally:
        if not args.keep:
            shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
