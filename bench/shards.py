"""A run sharded across invocations against one run as one process: the same workload (N
cells, latency L, concurrency C per process) as one pytest process, then as K concurrent
shards (`--srbench-shard k/K`, one run key, one store), each with its own simulator. The one
process writes a SQLite store; the shards write the same SQLite folder, or with `--postgres`
a PostgreSQL database on a server started for the bench (durable: fsync on every commit).

    python bench/shards.py [--cells 800] [--latency 0.2] [--concurrency 16] [--shards 2]
    python bench/shards.py --cells 8000 --concurrency 64 --shards 4 --postgres   # issue 23

Prints the run's wall time (created → finished, from its report) against the ideal
(N × L / (C × processes)), the slowest shard's command time (spawn → exit), the CPU seconds
the commands and their simulators used (the PostgreSQL server's not counted) and how many
cores that CPU time needs to fit in the ideal wall time — more than the machine has means the
shards share too few cores to reach the ideal, whatever the store. It checks that every cell
was called once and the reports agree.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.postgres_server

from _workload import PYTHON, TEST_MODULES, Workload, child_env, make_project

from pytest_srbench.store import open_store


def command(workload: Workload, *extra: str) -> list[str]:
    return [PYTHON[0], "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
            "--srbench-benchmark", "bench-mcq", *(f"--ignore={m}" for m in TEST_MODULES.values()),
            "--srbench-concurrency", str(workload.concurrency), *extra]  # fmt: skip


def timed_run(project: Path, commands: list[list[str]]) -> tuple[float, float]:
    """Start every command at once; seconds until the last one exits, and the CPU seconds the
    commands and the processes they waited for (their simulators) used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    procs = [
        subprocess.Popen(c, cwd=project, env=child_env(), stdout=subprocess.PIPE, text=True)
        for c in commands
    ]
    for proc in procs:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"a command failed:\n{out[-4000:]}")
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=800)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--postgres", action="store_true", help="the shards write PostgreSQL")
    args = parser.parse_args()
    server = None
    if args.postgres:
        from tests.postgres_server import start_server

        server = start_server(durable=True)
    try:
        return measure(args, server.create_database("shards") if server else None)
    finally:
        if server is not None:
            server.stop()


def measure(args: argparse.Namespace, postgres_url: str | None) -> int:
    workload = Workload(cells=args.cells, latency_s=args.latency, chunks=20,
                        concurrency=args.concurrency)  # fmt: skip
    backend = "PostgreSQL" if postgres_url else "SQLite"
    print(f"one process: SQLite; shards: {backend}")
    print(f"{'how':24} {'run wall s':>10} {'ideal s':>8} {'wall/ideal':>10} {'command s':>9}"
          f" {'CPU s':>7} {'cores for ideal':>15}")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="srbench-shards-") as scratch:
        project = make_project(Path(scratch) / "p", workload)
        reports = {}
        for label, count in (("one process", 1), (f"{args.shards} shards", args.shards)):
            key = f"bench-{count}"
            if count == 1:
                commands = [
                    command(workload, "--srbench-run-key", key, "--srbench-json", "r1.json")
                ]
            else:
                where = ("--srbench-store", postgres_url) if postgres_url else ()
                commands = [
                    command(workload, "--srbench-run-key", key, "--srbench-shard",
                            f"{k}/{count}", "--srbench-json", f"r{count}-{k}.json", *where)
                    for k in range(1, count + 1)
                ]  # fmt: skip
            seconds, cpu = timed_run(project, commands)
            (path,) = [p for p in project.glob(f"r{count}*.json")]
            report = json.loads(path.read_text())
            reports[count] = report
            store = open_store(postgres_url if postgres_url and count > 1 else project / ".srbench")
            calls = store.calls(report["run_id"])
            cells = {(c["case_id"], c["target_id"]) for c in calls}
            assert len(calls) == len(cells) == args.cells, (len(calls), len(cells))
            store.close()
            ideal = workload.cells * workload.latency_s / (workload.concurrency * count)
            wall = report["summary"]["wall_time_s"]
            # the cores the commands' CPU time would need to fit in the ideal wall time
            print(f"{label:24} {wall:>10.2f} {ideal:>8.2f} {wall / ideal:>10.2f} {seconds:>9.2f}"
                  f" {cpu:>7.1f} {cpu / ideal:>15.1f}")  # fmt: skip
        one, many = reports[1], reports[args.shards]
        same = [t["correct"] for t in one["summary"]["targets"]] == [
            t["correct"] for t in many["summary"]["targets"]
        ]
        print(f"reports agree on correct counts: {same}; status {many['status']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
