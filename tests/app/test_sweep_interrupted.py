"""What the restart sweep records for a run whose runner died, over a real SQLite store: its
wall time ends at its last recorded activity, and the cells it cut off read as interrupted."""

from __future__ import annotations

import socket
from datetime import datetime

import pytest

from pytest_srbench.app.lifecycle import open_swept_store
from pytest_srbench.app.reports import report_from_store
from pytest_srbench.app.settle import OWNER_STOPPED, WORKER_STOPPED
from pytest_srbench.core.calls.failures import INTERRUPTED, summarize_failure
from pytest_srbench.store.base import now_iso
from pytest_srbench.store.opening import open_store
from pytest_srbench.store.writes import CallProgress
from tests.app.helpers import call_row, dead_pid
from tests.core.helpers import case, manifest, result, target

CASES = [case("mmlu-pro", str(i)) for i in range(3)]


@pytest.mark.parametrize(
    "message",
    [WORKER_STOPPED, f"{WORKER_STOPPED} (lost: gw1)", OWNER_STOPPED.format(where="pid 7 on h")],
)
def test_a_cell_cut_off_by_a_crash_reads_as_interrupted(message):
    assert summarize_failure(message) == INTERRUPTED


@pytest.mark.parametrize("last", ["event", "progress"])
def test_the_sweep_ends_the_wall_time_at_the_last_recorded_activity(tmp_path, last):
    store = open_store(tmp_path / "store")
    run, _ = store.create_run("run-dead", manifest(CASES, [target("t")]))
    store.set_owner(run.id, {"host": socket.gethostname(), "pid": dead_pid()})
    store.set_run_status(run.id, "running")
    first, second = CASES[0].id, CASES[1].id
    with store.transaction():
        store.upsert_result(run.id, result(first, "t", correct=True))
        store.insert_call(run.id, call_row(first, "completed"))
        store.insert_call(run.id, call_row(second, "sent"))
        store.upsert_result(run.id, result(second, "t", status="running", correct=None))
    if last == "event":
        with store.transaction():
            store.append_event(run.id, "progress", {})
        ran_until = store.events(run.id, limit=1000)[-1]["at"]
    else:  # bytes of the in-flight call were the last sign of life
        ran_until = now_iso()
        store.write_batch([CallProgress(run.id, "call-" + second + "-sent-0", 12, ran_until)])
    store.close()

    swept_store, swept = open_swept_store(tmp_path / "store")
    assert [r.id for r in swept] == [run.id]
    swept_run = swept_store.require_run(run.id)
    assert swept_run.status == "interrupted"
    assert swept_run.updated_at == ran_until  # not the moment the sweep found it
    report = report_from_store(swept_store, run.id)
    ended, created = (datetime.fromisoformat(t) for t in (ran_until, swept_run.created_at))
    assert report["summary"]["wall_time_s"] == (ended - created).total_seconds()
    cut_off = [c for c in report["cells"] if c["status"] == "sent_unknown"]
    assert [c["case_id"] for c in cut_off] == [second]
    assert cut_off[0]["error"] == WORKER_STOPPED  # the cell's own reason; its group's below
    assert [g["reason"] for g in report["failure_groups"] if "sent_unknown" in g["statuses"]] == [
        INTERRUPTED
    ]
