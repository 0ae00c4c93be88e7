"""Peak memory and time of a run's report on large stores: ``srbench report`` typed as a user
types it, and the end-of-run report (what a pytest session does once its cells are done:
``finalize_run`` writes ``report.json``, then the ``--srbench-json`` file), each in its own
process, whose peak RSS is read from the kernel when it exits (``os.wait4``).

The stores are written directly through the store API (no model runs): per cell a result row
and a subject call receipt shaped like the simulator's (a prompt of ~600 characters, a final
answer, usage, cost, evidence locator), a retried call for 1 in 10 cells, three events; 3 %
of cells failed, 1 % pending. They are built once per size and kept in ``--cache``.

    python bench/report_memory.py                           # 20,000 and 100,000 cells
    python bench/report_memory.py --cells 20000 --baseline /work/main   # beside another checkout

``--baseline DIR`` runs the same commands with ``PYTHONPATH=DIR`` (e.g. a checkout of the
previous version) and prints both side by side: wall and CPU seconds (user + system: less
sensitive than the wall to other work on the machine) and the peak RSS. ``(imports)`` is a
process that only imports what the command imports: the report's own share is the
difference.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RUN_ID = "run-report-memory"
PROMPT = "Read the passage and choose the option that follows from it. " * 10
FINAL = "Working through the options one by one, the answer is C. " * 4
USAGE = {"input_tokens": 160, "cached_input_tokens": 32, "cache_write_tokens": 0,
         "output_tokens": 48}  # fmt: skip
RAW_USAGE = {"prompt_tokens": 192, "completion_tokens": 48, "total_tokens": 240,
             "prompt_tokens_details": {"cached_tokens": 32}}  # fmt: skip


def build_store(root: Path, cells: int) -> None:
    """A completed two-target run of ``cells`` cells, written batch by batch."""
    from pytest_srbench.core.models import Case, DatasetInfo, Message, Prices, Target
    from pytest_srbench.core.plan.build import freeze_plan
    from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS
    from pytest_srbench.store.opening import open_store
    from pytest_srbench.store.writes import AppendEvent, FinishCall, InsertCall, UpsertResult

    rng = random.Random(21)
    names = sorted(BENCHMARK_WEIGHTS)
    price = Prices(input=1, cached_input=0.5, cache_write=1, output=2)
    targets = [
        Target(id=f"sim-{size}", model=f"sim-{size}", base_url="http://127.0.0.1:9/v1",
               prices={f"sim-{size}": price})
        for size in ("large", "small")
    ]  # fmt: skip
    cases = [
        Case(id=f"{names[i % len(names)]}/case-{i:06d}", benchmark=names[i % len(names)],
             messages=[Message(role="user", content=f"{PROMPT} ({i})")], answer="C")
        for i in range(cells // len(targets))
    ]  # fmt: skip
    manifest = freeze_plan(targets=targets, cases=cases,
                           dataset=DatasetInfo(profile="standard", seed=1),
                           adapter_versions={b: "1" for b in names})  # fmt: skip
    store = open_store(root)
    store.create_run(RUN_ID, manifest, status="running")
    writes: list = []
    stamp = "2026-12-01T10:00:00.000000+00:00"
    for index, (case, target) in enumerate((c, t) for c in cases for t in targets):
        draw = rng.random()
        if draw < 0.01:
            continue  # pending: never dispatched
        status = "failed" if draw < 0.04 else "completed"
        latency = rng.lognormvariate(-1, 0.6)
        attempts = 2 if rng.random() < 0.1 else 1
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            ok = status == "completed" and last
            call = {
                "id": f"call-{index:07d}-{attempt}", "case_id": case.id, "target_id": target.id,
                "role": "subject", "status": "sent", "attempt": attempt,
                "requested_model": target.model, "model": target.model, "simulated": True,
                "phase": "user_turn", "phase_source": "request", "started_at": stamp,
                "request": {"model": target.model, "stream": True, "max_tokens": 1024,
                            "messages": [{"role": "user", "content": f"{PROMPT} ({index})"}]},
            }  # fmt: skip
            writes.append(InsertCall(RUN_ID, dict(call)))
            call.update(
                status="completed" if ok else "failed", selected_model=target.model,
                decision=None, response_usage=USAGE if ok else None, raw_usage=RAW_USAGE if ok else None,
                cache_read_usage=USAGE if ok else None, usage=USAGE if ok else None,
                cost_usd=0.000232 if ok else None, inference_call_count=1 if ok else None,
                usage_complete=ok, cache_read_reported=ok, cache_write_reported=False,
                latency_s=latency, ttft_s=latency / 3 if ok else None,
                finish_reason="stop" if ok else None, output_complete=ok,
                final=FINAL if ok else None, reasoning=None, tool_calls=None,
                http_status=200 if ok else 503, router=None, evidence_bytes=800,
                finished_at=stamp, cost_complete=ok,
                error=None if ok else "Target HTTP 503: Service Unavailable",
                evidence={"pack": f"runs/{RUN_ID}/evidence/bench.sse", "offset": index * 800,
                          "length": 800},
            )  # fmt: skip
            writes.append(FinishCall(RUN_ID, call))
            writes.append(AppendEvent(RUN_ID, "call_sent", {"call_id": call["id"],
                                                            "case_id": case.id}))  # fmt: skip
        writes.append(AppendEvent(RUN_ID, "case_running", {"case_id": case.id,
                                                           "target_id": target.id}))  # fmt: skip
        completed = status == "completed"
        writes.append(
            UpsertResult(RUN_ID, {
                "case_id": case.id, "target_id": target.id, "benchmark": case.benchmark,
                "status": status, "queue_wait_s": rng.random() / 100, "started_at": stamp,
                "correct": rng.random() < 0.7 if completed else None,
                "answer": "C" if completed else None, "score": 1 if completed else None,
                "details": {"grader_version": "sr-bench-mcq-v1", "answer_status": "answered"}
                if completed else {},
                "error": None if completed else "Target HTTP 503: Service Unavailable",
                "latency_s": latency * 1.05, "subject_latency_s": latency,
                "ttft_s": latency / 3 if completed else None,
                "usage": USAGE if completed else None,
                "cost_usd": 0.000232 if completed else None, "call_count": attempts,
                "finished_at": stamp,
            })
        )  # fmt: skip
        writes.append(AppendEvent(RUN_ID, "case_completed", {"case_id": case.id,
                                                             "target_id": target.id,
                                                             "status": status}))  # fmt: skip
        if len(writes) >= 20_000:
            with store.transaction():
                store.write_batch(writes)
            writes = []
    with store.transaction():
        store.write_batch(writes)
        store.set_run_status(RUN_ID, "completed")
    store.close_evidence()
    store.close()


END_OF_RUN = """
import sys
from pathlib import Path
from pytest_srbench.app.run_end import finalize_run, write_outputs
from pytest_srbench.store.opening import open_store
store = open_store(sys.argv[1])
report = finalize_run(store, sys.argv[2], runner={"pytest_srbench": "bench"})
problems = write_outputs(store, sys.argv[2], report, Path(sys.argv[3]), None)
assert not problems, problems
"""
IMPORTS = {
    "end-of-run report": "import pytest_srbench.app.run_end, pytest_srbench.store.sqlite",
    "srbench report --json": "import pytest_srbench.cli.main, pytest_srbench.app.reports",
}


def measured(argv: list[str], pythonpath: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (MB) of one command in a fresh
    process; the kernel reports the CPU time and peak of that process alone."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    start = time.perf_counter()
    process = subprocess.Popen(argv, env=env, cwd=pythonpath, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: kilobytes


def commands(store: Path, out: Path) -> dict[str, tuple[list[str], bool]]:
    """label -> (command, whether the run's saved report is removed first: it is built)."""
    python = sys.executable
    typed = [python, "-m", "pytest_srbench", "--store", str(store), "report", RUN_ID,
             "--json", str(out / "typed.json")]  # fmt: skip
    return {
        "srbench report --json": (typed, True),
        "  again (saved report)": (typed, False),
        "end-of-run report": ([python, "-c", END_OF_RUN, str(store), RUN_ID,
                               str(out / "end.json")], True),
    }  # fmt: skip


def forget_saved_report(store: Path) -> None:
    """Remove the run's saved report (``app/saved_reports.py``), so the next command builds it."""
    saved = store / "runs" / RUN_ID / "report-saved"
    for path in saved.glob("*") if saved.is_dir() else ():
        path.unlink()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure beside this")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench-report-memory")
    args = parser.parse_args()
    checkouts = {"this": ROOT}
    if args.baseline:
        checkouts = {"baseline": args.baseline.resolve(), "this": ROOT}
    header = f"{'cells':>8}  {'command':<24}" + "".join(
        f"{name + ' wall s':>16}{'cpu s':>8}{'peak MB':>9}" for name in checkouts
    )
    print(header)
    for cells in args.cells:
        store = args.cache / f"store-{cells}"
        if not (store / "journal.sqlite3").exists():
            start = time.perf_counter()
            build_store(store, cells)
            print(f"(built a {cells:,}-cell store in {time.perf_counter() - start:.0f} s: {store})")
        for label, (argv, build) in commands(store, args.cache).items():
            line = f"{cells:>8,}  {label:<24}"
            for path in checkouts.values():
                if build:
                    forget_saved_report(store)
                line += "{:>16.2f}{:>8.2f}{:>9.0f}".format(*measured(argv, path))
            print(line, flush=True)
        for label, statement in IMPORTS.items():
            line = f"{cells:>8,}  {'(imports) ' + label[:14]:<24}"
            for path in checkouts.values():
                line += "{:>16.2f}{:>8.2f}{:>9.0f}".format(
                    *measured([sys.executable, "-c", statement], path)
                )
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
