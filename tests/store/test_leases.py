"""Owner liveness across hosts (PostgreSQL): a running process renews its lease; once it
stops renewing (SIGKILL) its lease expires and the sweep of another host settles its calls
``sent_unknown`` and interrupts its run, exactly like the local PID sweep. Two hosts are two
processes with different ``SRBENCH_HOST_ID``s sharing the database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_srbench.app.lifecycle import sweep_orphans
from pytest_srbench.app.settle import WORKER_STOPPED
from pytest_srbench.store import StoreError, open_store
from pytest_srbench.store.liveness import lease_timing
from tests.core.helpers import case, manifest, target

OWNER = """
import sys, time
from pytest_srbench.store import open_store
from pytest_srbench.store.liveness import this_process
from tests.core.helpers import case, manifest, target

store = open_store(sys.argv[1])
plan = manifest([case("mmlu-pro", "1"), case("mmlu-pro", "2")], [target("t")])
store.create_run("run-a", plan, status="running")
store.set_owner("run-a", this_process())
store.insert_call("run-a", {"id": "c1", "case_id": "mmlu-pro/1", "target_id": "t",
                            "role": "subject", "status": "sent"})
store.upsert_result("run-a", {"case_id": "mmlu-pro/1", "target_id": "t", "status": "running"})
print("ready", flush=True)
time.sleep(600)
"""


def start_owner(location: str, host: str) -> subprocess.Popen[str]:
    env = {**os.environ, "SRBENCH_HOST_ID": host, "SRBENCH_LEASE_INTERVAL_S": "0.2",
           "SRBENCH_LEASE_EXPIRY_S": "1"}  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-c", OWNER, location],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],  # the repository: ``tests`` imports
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def test_an_expired_lease_settles_the_owners_calls_sent_unknown(postgres_url, monkeypatch):
    owner = start_owner(postgres_url, "host-a")
    monkeypatch.setenv("SRBENCH_HOST_ID", "host-b")
    store = open_store(postgres_url)
    try:
        recorded = store.owner("run-a")
        assert recorded is not None and recorded["host"] == "host-a"
        time.sleep(1.5)  # longer than the lease: only its renewals keep it
        assert store.owner_alive(recorded) is True
        assert sweep_orphans(store) == []
        assert store.require_run("run-a").status == "running"
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(30)
    assert wait_for(lambda: store.owner_alive(recorded) is False)
    (swept,) = sweep_orphans(store)
    assert swept.id == "run-a" and swept.status == "interrupted"
    assert "host-a" in (swept.error or "")
    (call,) = store.calls("run-a")
    assert call["status"] == "sent_unknown" and call["error"] == WORKER_STOPPED
    assert [r["status"] for r in store.results("run-a")] == ["sent_unknown"]
    kinds = [e["kind"] for e in store.events("run-a")]
    assert kinds[-2:] == ["case_sent_unknown", "interrupted"]


def test_an_owner_with_no_lease_is_dead_and_one_on_this_host_is_judged_by_its_pid(
    postgres_url, monkeypatch
):
    monkeypatch.setenv("SRBENCH_HOST_ID", "host-b")
    store = open_store(postgres_url)
    assert store.owner_alive({"host": "host-z", "pid": 1, "process_started": "9"}) is False
    assert store.owner_alive({"host": "host-b", "pid": os.getpid()}) is True
    assert store.owner_alive({"host": "host-b", "pid": 2**22 + 7}) is False


def test_a_sqlite_store_leaves_another_hosts_run_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("SRBENCH_HOST_ID", "host-b")
    store = open_store(tmp_path / "s")
    plan = manifest([case("mmlu-pro", "1")], [target("t")])
    store.create_run("run-a", plan, status="running")
    store.set_owner("run-a", {"host": "host-a", "pid": 1, "process_started": "1"})
    assert store.owner_alive(store.owner("run-a")) is None  # unknowable here
    assert sweep_orphans(store) == []


@pytest.mark.parametrize(
    ("interval", "expiry", "message"),
    [
        ("5", "5", "SRBENCH_LEASE_EXPIRY_S (5 s) must be longer than SRBENCH_LEASE_INTERVAL_S"),
        ("soon", "30", "SRBENCH_LEASE_INTERVAL_S must be a number of seconds"),
        ("5", "0", "SRBENCH_LEASE_EXPIRY_S must be a number of seconds"),
    ],
)
def test_bad_lease_timing_is_named(monkeypatch, interval, expiry, message):
    monkeypatch.setenv("SRBENCH_LEASE_INTERVAL_S", interval)
    monkeypatch.setenv("SRBENCH_LEASE_EXPIRY_S", expiry)
    with pytest.raises(StoreError, match=message.replace("(", r"\(").replace(")", r"\)")):
        lease_timing()


def test_leases_expired_a_week_ago_are_forgotten_and_nothing_is_judged_differently(
    postgres_url, monkeypatch
):
    monkeypatch.setenv("SRBENCH_HOST_ID", "host-b")
    store = open_store(postgres_url)
    db = store.db  # type: ignore[attr-defined]
    gone = {"host": "host-old", "pid": 11, "process_started": "1"}
    expired = {"host": "host-new", "pid": 12, "process_started": "2"}
    for owner, age in ((gone, "8 days"), (expired, "1 hour")):
        db.execute(
            "INSERT INTO leases(host, pid, process_started, renewed_at, expires_at) VALUES"
            " (%s, %s, %s, clock_timestamp() - %s::interval, clock_timestamp() - %s::interval)",
            (owner["host"], owner["pid"], owner["process_started"], age, age),
        )
    db.commit()
    before = {name: store.owner_alive(owner) for name, owner in (("gone", gone), ("x", expired))}
    plan = manifest([case("mmlu-pro", "1")], [target("t")])
    store.create_run("run-c", plan, status="running")
    store.set_owner("run-c", {"host": "host-b", "pid": os.getpid(), "process_started": "3"})
    hosts = {row["host"] for row in db.execute("SELECT host FROM leases").fetchall()}
    assert hosts == {"host-new", "host-b"}  # the week-old lease is gone, the others stay
    after = {name: store.owner_alive(owner) for name, owner in (("gone", gone), ("x", expired))}
    assert before == after == {"gone": False, "x": False}
