"""The two store backends side by side: what a call costs to journal, and how the operator
commands stay interactive on a 100,000-cell run in PostgreSQL.

Commit cost: the engine's group commit, replayed — each batch of B calls is one transaction
inserting the ``sent`` rows (committed before the requests leave), then one transaction
finishing them (receipt, about 1 kB of stream evidence, result row, ``case_completed`` event).
B = 1 is a lone call; B = 64 is what C = 64 in flight gives. Both backends keep their durable
defaults (SQLite WAL with synchronous=FULL; PostgreSQL fsync on every commit), on this machine's
disk, PostgreSQL over its Unix socket.

Then ``srbench recover-plan`` (both modes) and paged ``srbench show`` on a 100,000-cell
interrupted run (the one ``bench/durable_store.py`` builds) in each backend, in-process
through ``srbench``'s own ``main``.

    python bench/store_commit.py [--calls 2000] [--cells 100000] [--repeat 3]
                                 [--postgres postgresql:///DB?host=…]   # else a temporary server
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests.*: the plan helpers

from durable_store import build_store, operator_commands, timed

from pytest_srbench.store.opening import open_store
from pytest_srbench.store.writes import AppendEvent, FinishCall, InsertCall, UpsertResult
from tests.core.helpers import case, manifest, target

EVIDENCE = b'data: {"choices":[{"delta":{"content":"C"}}]}\n\n' * 20 + b"data: [DONE]\n\n"


def commit_cost(location: str, calls: int, batch: int) -> float:
    """Seconds per call to journal ``calls`` calls in batches of ``batch`` (two commits each)."""
    store = open_store(location)
    plan = manifest([case("mmlu-pro", str(i)) for i in range(calls)], [target("t")])
    run_id = f"run-b{batch}"
    store.create_run(run_id, plan, status="running")
    start = time.perf_counter()
    for first in range(0, calls, batch):
        rows = [{"id": f"{run_id}-c{i}", "case_id": f"mmlu-pro/{i}", "target_id": "t",
                 "role": "subject", "status": "sent"} for i in range(first, min(first + batch, calls))]  # fmt: skip
        with store.transaction():
            store.write_batch([InsertCall(run_id, dict(row)) for row in rows])
        finish: list = []
        for row in rows:
            finish += [
                FinishCall(run_id, {**row, "status": "completed", "cost_usd": 0.0003,
                                    "usage": {"input_tokens": 140, "output_tokens": 90},
                                    "finish_reason": "stop"}, EVIDENCE),
                UpsertResult(run_id, {"case_id": row["case_id"], "target_id": "t",
                                      "status": "completed", "correct": True}),
                AppendEvent(run_id, "case_completed", {"case_id": row["case_id"]}),
            ]  # fmt: skip
        with store.transaction():
            store.write_batch(finish)
    seconds = (time.perf_counter() - start) / calls
    assert store.count_calls(run_id) == calls
    store.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", help="a database to use (else a temporary server)")
    args = parser.parse_args()
    server = None
    folder = Path(tempfile.mkdtemp(prefix="srbench-stores-"))
    try:
        if args.postgres:
            url = big_url = args.postgres
        else:
            from tests.postgres_server import start_server

            server = start_server(durable=True)
            url = server.create_database("commits")
            big_url = server.create_database("big")
        print(f"commit cost per call ({args.calls:,} calls; sent batch + finish batch)")
        print(f"{'batch':>8}{'SQLite':>14}{'PostgreSQL':>14}")
        for batch in (1, 64):
            sqlite = commit_cost(str(folder / f"s{batch}"), args.calls, batch)
            postgres = commit_cost(url, args.calls, batch)
            print(f"{batch:>8}{sqlite * 1000:>11.3f} ms{postgres * 1000:>11.3f} ms")
        stores = {"SQLite": str(folder / "big"), "PostgreSQL": big_url}
        for name, location in stores.items():
            start = time.perf_counter()
            run_id, mix = build_store(location, args.cells)  # type: ignore[arg-type]
            print(f"{name} run: {args.cells:,} cells "
                  f"({', '.join(f'{k} {v:,}' for k, v in mix.items())}); "
                  f"built in {time.perf_counter() - start:.1f} s")  # fmt: skip
        plan_file = folder / "plan.json"
        commands = operator_commands(run_id, plan_file)
        print(f"{'in-process, median of ' + str(args.repeat):<48}{'SQLite':>10}{'PostgreSQL':>13}")
        for label, argv in commands.items():
            seconds = [timed(["--store", location, *argv], args.repeat)[0]
                       for location in stores.values()]  # fmt: skip
            print(f"srbench {label:<40}" + "".join(f"{s * 1000:>10.0f} ms" for s in seconds))
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
