"""Durability with real processes and a real simulator: SIGKILL of a whole pytest run and of
one xdist worker, cancellation by `srbench cancel` and by SIGINT, run keys, and a recovery
child that finishes what a killed run left undispatched — each on both stores (a SQLite folder
and a real PostgreSQL database) where the store decides the outcome."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_srbench.app.lifecycle import open_swept_store
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store
from tests.plugin.durability_helpers import (
    finish,
    pytest_args,
    wait_for_calls,
    wait_for_in_flight,
)
from tests.plugin.helpers import project, settle_simulator

pytestmark = pytest.mark.slow


# Ctrl-C delivers to the run, as in a terminal: a process inherits an ignored SIGINT (a
# background job, a parent that ignores it) and Python then leaves it ignored, so the test
# would send a signal nobody hears. The default disposition survives the exec.
INTERRUPTIBLE = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def start(root: Path, *extra: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", INTERRUPTIBLE, *pytest_args(*extra)[1:]]
    return subprocess.Popen(
        command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def accounting(store, run_id: str) -> tuple[int, int, int]:
    """(receipts, sent_unknown, still sent) over the run's calls."""
    calls = store.calls(run_id)
    unknown = sum(1 for c in calls if c["status"] == "sent_unknown")
    sent = sum(1 for c in calls if c["status"] == "sent")
    return len(calls) - unknown - sent, unknown, sent


BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgres"])


def store_of(backend: str, root: Path, request) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """Where the run's store is (the project's SQLite folder, or a fresh PostgreSQL database),
    the pytest option that chooses it and the ``srbench`` option that opens it."""
    location = (
        request.getfixturevalue("postgres_url") if backend == "postgres" else str(root / ".srbench")
    )
    return location, (f"--srbench-store={location}",), ("--store", location)


@BACKENDS
def test_sigkill_of_the_whole_run_then_sweep_then_recovery(pytester, sim, backend, request):
    """The same guarantees on both stores: every request journaled first, the sweep settles
    in-flight calls sent_unknown, recovery sends exactly the never-dispatched cells once."""
    project(pytester, sim, "slow")  # 0.3 s per answer
    root = pytester.path
    location, where, cli = store_of(backend, root, request)
    proc = start(root, "--srbench-concurrency=2", *where)
    run_id = wait_for_calls(root, 4, location=location)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    stats = settle_simulator(sim)

    raw = open_store(location)
    assert raw.require_run(run_id).status == "running"  # nobody has looked yet
    receipts, unknown, sent = accounting(raw, run_id)
    assert stats["requests"] <= receipts + unknown + sent  # every request was journaled first
    assert receipts <= stats["completed"]  # every receipt is a finished response
    raw.close()

    store, swept = open_swept_store(location)
    assert [run.id for run in swept] == [run_id]
    run = store.require_run(run_id)
    assert run.status == "interrupted" and f"pid {proc.pid}" in (run.error or "")
    receipts2, unknown2, sent2 = accounting(store, run_id)
    assert sent2 == 0 and receipts2 == receipts and unknown2 == unknown + sent
    assert stats["requests"] <= receipts2 + unknown2

    # the report of the interrupted run is honest: full denominator, pending counted
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "pytest_srbench", *cli, "report", run_id, "--format", "json"],
            cwd=root, capture_output=True, text=True, check=True,
        ).stdout
    )  # fmt: skip
    target = report["summary"]["targets"][0]
    assert report["status"] == "interrupted" and target["total"] == 18
    assert target["completed"] + target["failed"] + target["pending"] == 18
    assert target["pending"] > 0 and target["complete"] is False
    assert sim_client.stats(sim.admin_url)["requests"] == stats["requests"]  # nothing re-sent

    plan_path = root / "plan.json"
    listed = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", *cli, "recover-plan", run_id, "--output",
         str(plan_path)],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    plan = json.loads(plan_path.read_text())
    assert plan["counts"]["eligible"] + plan["counts"]["excluded"] == 18  # every cell classified
    assert {e["reason"] for e in plan["excluded"]} <= {
        "completed_evidence_is_preserved",
        "ambiguous_dispatch_requires_reconciliation",
        "ambiguous_saved_result_requires_reconciliation",
    }
    eligible = plan["counts"]["eligible"]
    assert eligible == target["pending"]  # exactly the never-dispatched cells

    child = subprocess.run(
        pytest_args("--srbench-recover=plan.json", "--srbench-run-key=recover-1",
                    "--srbench-json=child.json", *where),
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert child.returncode == 0, child.stdout[:3000]
    child_report = json.loads((root / "child.json").read_text())
    assert child_report["status"] == "completed"
    assert child_report["recovery"]["parent_run_id"] == run_id
    assert child_report["summary"]["planned_cells"] == eligible
    assert child_report["summary"]["targets"][0]["sr_bench_score"] is None
    after = sim_client.stats(sim.admin_url)["requests"]
    assert after == stats["requests"] + eligible  # exactly one new request per eligible cell
    # the same recovery again: the same child, not a single new request
    again = subprocess.run(
        pytest_args("--srbench-recover=plan.json", "--srbench-run-key=recover-1", *where),
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert again.returncode == 0, again.stdout[-2000:]
    assert sim_client.stats(sim.admin_url)["requests"] == after
    assert open_store(location).require_run(run_id).status == "interrupted"  # untouched


@BACKENDS
def test_sigkill_of_one_xdist_worker(pytester, sim, backend, request):
    project(pytester, sim, "slow")
    root = pytester.path
    location, where, _ = store_of(backend, root, request)
    proc = start(root, "-n", "2", "--srbench-concurrency=2", "--srbench-json=report.json", *where)
    run_id = wait_for_calls(root, 3, location=location)
    store = open_store(location)
    workers = []
    for _ in range(50):
        workers = [p["pid"] for p in store.processes(run_id) if p.get("role") == "worker"]
        if len(workers) == 2:
            break
        time.sleep(0.1)
    os.kill(workers[0], signal.SIGKILL)
    out, _ = proc.communicate(timeout=120)
    stats = settle_simulator(sim)
    report = json.loads((root / "report.json").read_text())
    receipts, unknown, sent = accounting(store, run_id)
    assert sent == 0  # the controller settled what the dead worker left in flight
    assert stats["requests"] <= receipts + unknown and receipts <= stats["completed"]
    cells = [(c["case_id"], c["target_id"]) for c in store.calls(run_id)]
    assert len(cells) == len(set(cells))  # the replacement worker re-dispatched nothing
    target = report["summary"]["targets"][0]
    assert target["total"] == 18
    assert target["completed"] + target["failed"] + target["pending"] == 18
    assert "crashed" in out  # xdist saw the worker die
    # the dead worker's unfinished cells were never re-dispatched, so the run is interrupted
    assert target["completed"] < 18
    assert report["status"] == "interrupted"
    run = store.require_run(run_id)
    assert run.status == "interrupted" and "Worker stopped" in (run.error or "")
    assert "gw" in (run.error or "")


@BACKENDS
def test_srbench_cancel_stops_a_running_run(pytester, sim, backend, request):
    # the target answers after ten minutes: the run ends within the minute below only because
    # cancellation aborts the calls in flight (no wall-clock threshold on the machine's speed)
    project(pytester, sim, "glacial")
    root = pytester.path
    location, where, cli = store_of(backend, root, request)
    proc = start(root, "--srbench-concurrency=2", *where)
    run_id = wait_for_in_flight(root, 2, location=location)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", *cli, "cancel", run_id],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0 and "cancellation requested" in done.stdout
    finish(proc)
    store = open_store(location)
    run = store.require_run(run_id)
    assert run.status == "cancelled"
    assert (root / ".srbench" / "runs" / run_id / "report.json").exists()
    statuses = [r["status"] for r in store.results(run_id)]
    assert len(statuses) < 18  # unstarted cells stay pending
    again = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", *cli, "cancel", run_id],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert "already cancelled" in again.stdout


@BACKENDS
def test_sigint_cancels_and_still_writes_the_report(pytester, sim, backend, request):
    project(pytester, sim, "glacial")  # the run cannot finish before the signal arrives
    root = pytester.path
    location, where, _ = store_of(backend, root, request)
    proc = start(root, "--srbench-concurrency=2", "--srbench-json=report.json", *where)
    run_id = wait_for_in_flight(root, 2, location=location)
    proc.send_signal(signal.SIGINT)
    out = finish(proc)
    report = json.loads((root / "report.json").read_text())
    # (it ended "failed" when pytest could not describe the interrupt: test_keyboard_interrupt)
    assert report["run_id"] == run_id and report["status"] == "cancelled", (
        f"exit {proc.returncode}, error {report.get('error')!r}\n{out[-4000:]}"
    )
    target = report["summary"]["targets"][0]
    assert target["total"] == 18 and target["pending"] > 0


@BACKENDS
def test_run_key_reuses_the_run_without_a_single_call(pytester, sim, backend, request):
    project(pytester, sim, "always-right")
    root = pytester.path
    _, where, _ = store_of(backend, root, request)
    first = subprocess.run(pytest_args("--srbench-run-key=nightly", "--srbench-json=a.json", *where),
                           cwd=root, capture_output=True, text=True)  # fmt: skip
    assert first.returncode == 0, first.stdout[-2000:]
    requests = sim_client.stats(sim.admin_url)["requests"]
    second = subprocess.run(pytest_args("--srbench-run-key=nightly", "--srbench-json=b.json", *where),
                            cwd=root, capture_output=True, text=True)  # fmt: skip
    assert second.returncode == 0, second.stdout[-2000:]
    assert sim_client.stats(sim.admin_url)["requests"] == requests
    a = json.loads((root / "a.json").read_text())
    b = json.loads((root / "b.json").read_text())
    assert a["run_id"] == b["run_id"] and b["summary"]["targets"][0]["correct"] == 18
    other = subprocess.run(
        pytest_args("--srbench-run-key=nightly", "--srbench-limit=1", *where),
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert other.returncode == pytest.ExitCode.USAGE_ERROR
    assert "already bound to a different plan" in other.stderr + other.stdout
    assert sim_client.stats(sim.admin_url)["requests"] == requests


@BACKENDS
def test_sigkill_of_a_run_of_test_defined_cells_then_recovery(pytester, sim, backend, request):
    """A benchmark written as a test keeps the engine's promise: every request the endpoint
    received has a journal row, and recovery sends only the cells that never ran."""
    project(pytester, sim, "slow")  # 0.3 s per answer
    pytester.makepyfile(
        test_mine="""
        import pytest

        @pytest.mark.srbench("mmlu-pro")
        async def test_mmlu(srbench_case, srbench_target):
            return (await srbench_target.ask(srbench_case.messages)).final_text
        """
    )
    root = pytester.path
    location, where, cli = store_of(backend, root, request)
    command = [sys.executable, "-c", INTERRUPTIBLE, "-m", "pytest", "-p", "no:cacheprovider",
               "-q", "--srbench-profile=smoke", "--srbench-concurrency=2", "test_mine.py", *where]  # fmt: skip
    proc = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    run_id = wait_for_calls(root, 3, location=location)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    stats = settle_simulator(sim)
    store, swept = open_swept_store(location)
    assert [run.id for run in swept] == [run_id]
    receipts, unknown, sent = accounting(store, run_id)
    assert sent == 0 and stats["requests"] <= receipts + unknown  # journaled before sent
    store.close()
    planned = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", *cli, "recover-plan", run_id, "--output",
         "plan.json"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    eligible = json.loads((root / "plan.json").read_text())["counts"]["eligible"]
    assert 0 < eligible < 14
    child = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_mine.py",
         "--srbench-recover=plan.json", "--srbench-run-key=recover-1", *where],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert child.returncode == 0, child.stdout[-3000:]
    assert sim_client.stats(sim.admin_url)["requests"] == stats["requests"] + eligible


@BACKENDS
def test_two_processes_with_one_run_key_at_once_leave_the_run_to_its_owner(
    pytester, sim, backend, request
):
    """The second process finds the run its twin is executing: it changes nothing, waits for
    the owner to end the run (--srbench-wait-s) and then reports it and exits as the owner
    does, so a retried CI job is as green as the first."""
    project(pytester, sim, "slow")  # 0.3 s per answer, 18 cells one at a time: ~5 s
    root = pytester.path
    location, where, _ = store_of(backend, root, request)
    first = start(root, "--srbench-run-key=twins", "--srbench-concurrency=1", *where)
    run_id = wait_for_calls(root, 1, location=location)
    second = subprocess.run(
        pytest_args("--srbench-run-key=twins", "--srbench-json=second.json", *where),
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = finish(first, timeout=120)
    said = second.stdout + second.stderr
    assert "already bound" not in said and "FAILED" not in said, said[-3000:]
    assert "being executed by another process; waiting" in said
    assert second.returncode == first.returncode == 0, said[-3000:]
    assert "18 correct" in said and "srbench report" in said
    snapshot = json.loads((root / "second.json").read_text())
    assert snapshot["run_id"] == run_id and snapshot["status"] == "completed"
    store = open_store(location)
    run = store.require_run(run_id)
    assert run.status == "completed", out[-2000:]
    calls = store.calls(run_id)
    assert len(calls) == 18 and {c["status"] for c in calls} == {"completed"}
    assert len({(c["case_id"], c["target_id"]) for c in calls}) == 18  # nothing ran twice


def test_a_twin_that_waits_too_long_says_so_in_one_line(pytester, sim):
    """--srbench-wait-s bounds the wait: then one line, no failed items, exit status 75, and
    the owner's run goes on untouched."""
    project(pytester, sim, "slow")
    root = pytester.path
    first = start(root, "--srbench-run-key=twins", "--srbench-concurrency=1")
    run_id = wait_for_calls(root, 1)
    second = subprocess.run(
        pytest_args("--srbench-run-key=twins", "--srbench-wait-s=1"),
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    out = finish(first, timeout=120)
    said = second.stdout + second.stderr
    assert second.returncode == 75, said[-3000:]
    assert "FAILED" not in said and "Traceback" not in said
    held = [line for line in said.splitlines() if "is held by another live process" in line]
    assert len(held) == 1 and run_id in held[0] and "--srbench-wait-s" in held[0]
    store = open_store(str(root / ".srbench"))
    assert store.require_run(run_id).status == "completed", out[-2000:]
    assert {c["status"] for c in store.calls(run_id)} == {"completed"}


CAPITALS = """
import pytest

import pytest_srbench

CASES = [{"id": f"c{i}", "question": f"Capital number {i}? One word.", "answer": "Paris"}
         for i in range(8)]
pytest_srbench.benchmark("capitals", cases=CASES, version="1",
                         grade=lambda answer, case: case["answer"].lower() in answer.lower())


@pytest.mark.srbench("capitals")
async def test_capitals(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.prompt)).final_text
"""

STYLED = """
import pytest


@pytest.mark.parametrize("style", ["plain", "terse"])
@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target, style):
    prefix = "" if style == "plain" else "Answer with the letter only. "
    return (await srbench_target.ask(prefix + srbench_case.prompt)).final_text
"""


@pytest.mark.parametrize(("source", "planned"), [(CAPITALS, 8), (STYLED, 28)])
def test_sigkill_then_recovery_run_exactly_as_srbench_recover_prints_it(
    pytester, sim, source, planned
):
    """A benchmark defined in Python, and one whose test is parametrized (variants), recover
    after SIGKILL like the shipped suites: ``srbench recover`` creates the child and prints the
    pytest command that runs it, which runs as printed and sends exactly the missing cells."""
    project(pytester, sim, "slow")  # 0.3 s per answer
    pytester.makepyfile(test_mine=source)
    root = pytester.path
    command = [sys.executable, "-c", INTERRUPTIBLE, "-m", "pytest", "-p", "no:cacheprovider",
               "-q", "--srbench-profile=smoke", "--srbench-concurrency=1"]  # fmt: skip
    proc = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    run_id = wait_for_calls(root, 2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    stats = settle_simulator(sim)
    srbench = [sys.executable, "-m", "pytest_srbench"]
    planned_run = subprocess.run([*srbench, "recover-plan", run_id, "--output", "plan.json"],
                                 cwd=root, capture_output=True, text=True)  # fmt: skip
    assert planned_run.returncode == 0, planned_run.stderr
    plan = json.loads((root / "plan.json").read_text())
    eligible = plan["counts"]["eligible"]
    assert 0 < eligible < planned, plan["counts"]
    recovered = subprocess.run(
        [*srbench, "recover", run_id, "--plan", "plan.json", "--idempotency-key", "again-1"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert recovered.returncode == 0, recovered.stderr
    printed = next(
        line.removeprefix("run it with: ")
        for line in recovered.stdout.splitlines()
        if line.startswith("run it with: ")
    )
    assert printed == "pytest --srbench-recover=plan.json --srbench-run-key=again-1"
    child = subprocess.run(
        [sys.executable, "-m", *shlex.split(printed), "-p", "no:cacheprovider"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert child.returncode in (0, 1), child.stdout[-3000:]  # wrong answers never fail it
    assert "INTERNALERROR" not in child.stdout + child.stderr
    assert sim_client.stats(sim.admin_url)["requests"] == stats["requests"] + eligible
    store = open_store(root / ".srbench")
    children = [run for run in store.list_runs(limit=10) if run.parent_run_id == run_id]
    assert len(children) == 1 and children[0].status == "completed", children
    chosen = {(cell["case_id"], cell["target_id"]) for cell in plan["eligible_cells"]}
    done = {(row["case_id"], row["target_id"]) for row in store.results(children[0].id)}
    assert done == chosen  # exactly the reviewed cells: variants included
