"""Faults of the store itself, with the real components: a second process holding SQLite's
write lock past the busy timeout, two pytest processes with one run key, a disk that fills up
(``RLIMIT_FSIZE``) and a PostgreSQL server stopped and started mid-run. Whatever happens, a
completed response is never dropped, and the run ends with its reason and its report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_srbench.store import open_store
from tests.plugin.durability_helpers import finish, pytest_args, wait_for_calls
from tests.plugin.helpers import project

pytestmark = pytest.mark.slow

LOCKER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=60)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
print("released", flush=True)
"""


def start(
    root: Path, *extra: str, env: dict[str, str] | None = None, **popen
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        pytest_args(*extra), cwd=root, env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen,
    )  # fmt: skip


def test_a_write_lock_held_past_the_busy_timeout_loses_no_receipt(pytester, sim):
    """Another process holds the store's write lock for 6 s with a 2 s busy timeout: every
    write waits in memory and is retried, so every call ends completed with its evidence and
    the report is complete."""
    project(pytester, sim, "slow")  # 0.3 s per answer, 18 cells one at a time: every write
    # the lock meets is one the run waits for
    root = pytester.path
    run = start(root, "--srbench-concurrency=1", "--srbench-json=out.json",
                env={"SRBENCH_BUSY_TIMEOUT_S": "2"})  # fmt: skip
    run_id = wait_for_calls(root, 2)
    locker = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(root / ".srbench" / "journal.sqlite3"), "6"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert locker.stdout is not None and locker.stdout.readline().strip() == "locked"
        out = finish(run, timeout=180)
    finally:
        locker.wait(timeout=60)
    store = open_store(str(root / ".srbench"))
    assert store.require_run(run_id).status == "completed", out[-3000:]
    calls = store.calls(run_id)
    assert len(calls) == 18, out[-3000:]
    assert {c["status"] for c in calls} == {"completed"}, [c.get("error") for c in calls]
    for call in calls:
        assert call["evidence_bytes"] > 0
        assert len(store.read_evidence(call["evidence"])) == call["evidence_bytes"]
    report = json.loads((root / "out.json").read_text())
    assert report["status"] == "completed"
    targets = report["summary"]["targets"]
    assert all(t["cost_complete"] and t["total_spend_usd"] for t in targets), targets
    assert run.returncode == 0, out[-3000:]


def file_size_limit(limit: int):
    """A child's ``preexec_fn``: files it writes cannot grow past ``limit`` bytes (a full disk
    for the store); SIGXFSZ ignored, so a write past it fails with EFBIG instead of killing."""

    def limit_files() -> None:
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_files


def test_a_full_disk_ends_the_run_interrupted_with_its_reason(pytester, sim):
    """The store's files cannot grow past 600 kB (RLIMIT_FSIZE): dispatch stops at the first
    write that does not fit, the writes waiting in memory go in once the store makes room, and
    the run ends interrupted with "disk full", its terminal saying what was recorded."""
    project(pytester, sim, "slow")
    root = pytester.path
    run = start(root, "--srbench-concurrency=1", env={"SRBENCH_STORE_OUTAGE_S": "10"},
                preexec_fn=file_size_limit(600_000))  # fmt: skip
    out = finish(run, timeout=180)
    store = open_store(str(root / ".srbench"))
    (listed,) = store.list_runs(limit=5)
    run_row = store.require_run(listed.id)
    assert run_row.status == "interrupted", out[-3000:]
    assert (run_row.error or "").startswith("disk full"), run_row.error
    calls = store.calls(listed.id)
    assert calls and "sent" not in {c["status"] for c in calls}
    assert all(c["status"] == "completed" and c["evidence_bytes"] for c in calls)
    line = next(x for x in out.splitlines() if "was interrupted: disk full" in x)
    assert "recorded:" in line
    assert "INTERNALERROR" not in out and "Traceback" not in out


@pytest.fixture
def own_postgres():
    """A PostgreSQL server of this test alone (it is stopped and started mid-run)."""
    from tests.postgres_server import start_server

    server = start_server()
    try:
        yield server
    finally:
        server.stop()


def pg_ctl(server, *args: str) -> None:
    subprocess.run([*server.as_user, server.pg_ctl, *args, "-D", str(server.folder / "data")],
                   check=True, capture_output=True, timeout=120)  # fmt: skip


def stop_and_start(server, down_s: float) -> None:
    """Stop the server (its connections die), keep it down ``down_s``, start it again."""
    pg_ctl(server, "stop", "-m", "fast", "-w")
    time.sleep(down_s)
    options = (f"-c listen_addresses='' -c unix_socket_directories={server.socket_dir}"
               " -c max_connections=100 -c shared_buffers=32MB -c fsync=off"
               " -c synchronous_commit=off")  # fmt: skip
    pg_ctl(
        server, "start", "-w", "-t", "60", "-l", str(server.folder / "server.log"), "-o", options
    )


@pytest.mark.parametrize(
    ("window_s", "down_s"), [("60", 3.0), ("3", 4.0)], ids=["within-window", "past-window"]
)
def test_a_postgresql_restart_mid_run(pytester, sim, own_postgres, window_s, down_s):
    """A restart within SRBENCH_STORE_OUTAGE_S: the writes wait in memory, the process
    reconnects and the run completes with every receipt. Down for longer: the run stops like
    a cancellation and ends interrupted with its reason and its report; nothing is lost."""
    project(pytester, sim, "slow")
    root = pytester.path
    url = own_postgres.create_database("faults")
    run = start(root, "--srbench-concurrency=1", f"--srbench-store={url}",
                env={"SRBENCH_STORE_OUTAGE_S": window_s})  # fmt: skip
    run_id = wait_for_calls(root, 2, location=url)
    stop_and_start(own_postgres, down_s)
    out = finish(run, timeout=240)
    assert "INTERNALERROR" not in out and "Traceback" not in out, out[-3000:]
    store = open_store(url)
    row = store.require_run(run_id)
    calls = store.calls(run_id)
    assert calls and "sent" not in {c["status"] for c in calls}, out[-3000:]
    assert "sent_unknown" not in {c["status"] for c in calls}, [c.get("error") for c in calls]
    assert "srbench report" in out
    if down_s < float(window_s):
        assert row.status == "completed", out[-3000:]
        assert len(calls) == 18 and {c["status"] for c in calls} == {"completed"}
        assert run.returncode == 0, out[-3000:]
    else:
        assert row.status == "interrupted", out[-3000:]
        assert "the store could not be written for 3 s" in (row.error or ""), row.error
        assert f"run {run_id} was interrupted: the store could not be written" in out
