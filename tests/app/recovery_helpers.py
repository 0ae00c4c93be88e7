"""Shared by test_recovery and the tests that build on it (a test module never imports another)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_srbench.store.opening import open_store
from pytest_srbench.store.sqlite import SqliteStore
from tests.app.helpers import call_row, dead_pid
from tests.core.helpers import case, manifest, result, target

CASES = [case("mmlu-pro", str(i)) for i in range(6)]


@pytest.fixture
def interrupted(tmp_path: Path) -> tuple[SqliteStore, str]:
    """A run left `running` by a process that died: case 0 completed, case 1 a call `sent`
    (ambiguous), case 2 a result `running`, case 3 failed after a completed call, case 4 a
    failed call with unknown cost, case 5 never dispatched."""
    store = open_store(tmp_path / "store")
    plan = manifest(CASES, [target("t")])
    run, _ = store.create_run("run-parent", plan)
    store.set_owner(run.id, {"host": __import__("socket").gethostname(), "pid": dead_pid()})
    store.set_run_status(run.id, "running")
    ids = [c.id for c in CASES]
    with store.transaction():
        store.upsert_result(run.id, result(ids[0], "t", correct=True))
        store.insert_call(run.id, call_row(ids[0], "completed"))
        store.insert_call(run.id, call_row(ids[1], "sent"))
        store.upsert_result(run.id, result(ids[1], "t", status="running", correct=None))
        store.upsert_result(run.id, result(ids[2], "t", status="running", correct=None))
        store.upsert_result(run.id, result(ids[3], "t", status="failed", correct=None, error="x"))
        store.insert_call(run.id, call_row(ids[3], "failed", finish_reason="stop"))
        store.upsert_result(run.id, result(ids[4], "t", status="failed", correct=None, error="x"))
        store.insert_call(run.id, call_row(ids[4], "failed", cost_usd=None, finish_reason=None))
    return store, run.id
