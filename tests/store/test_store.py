"""Every store guarantee, on both backends (a SQLite folder and a real PostgreSQL database):
runs and run keys, results, calls, events with their sequence numbers, group commit, several
processes writing one store, paging without ceilings, the restart sweep."""

import asyncio
import json
import multiprocessing

import pytest

from pytest_srbench.app.lifecycle import sweep_orphans
from pytest_srbench.app.settle import OWNER_STOPPED, WORKER_STOPPED
from pytest_srbench.store import GroupCommitWriter, StoreError, open_store
from pytest_srbench.store.base import every_event
from pytest_srbench.store.liveness import host_id
from pytest_srbench.store.writes import AppendEvent, FinishCall, InsertCall
from tests.core.helpers import case, manifest, target


@pytest.fixture
def plan():
    return manifest([case("mmlu-pro", "1"), case("mmlu-pro", "2")], [target("t")])


def test_create_run_is_idempotent_per_plan(store_location, plan):
    store = open_store(store_location)
    run, created = store.create_run("run-1", plan, request_key="k")
    assert created and run.status == "queued"
    again, created_again = store.create_run("run-1", plan, request_key="k")
    assert not created_again and again.id == "run-1"
    by_key, _ = store.create_run("run-2", plan, request_key="k")
    assert by_key.id == "run-1"
    other = manifest([case("mmlu-pro", "9")], [target("t")])
    with pytest.raises(StoreError, match="already bound to a different plan"):
        store.create_run("run-3", other, request_key="k")
    assert store.get_manifest("run-1") == plan
    assert [e["kind"] for e in store.events("run-1")] == ["created"]


def test_results_upsert_calls_and_events(store_location, plan):
    store = open_store(store_location)
    store.create_run("run-1", plan)
    with store.transaction():
        store.upsert_result(
            "run-1", {"case_id": "mmlu-pro/1", "target_id": "t", "status": "running"}
        )
        store.upsert_result(
            "run-1",
            {"case_id": "mmlu-pro/1", "target_id": "t", "status": "completed", "correct": True},
        )
        store.insert_call(
            "run-1",
            {
                "id": "call-a",
                "case_id": "mmlu-pro/1",
                "target_id": "t",
                "role": "subject",
                "status": "sent",
            },
        )
    assert [r["status"] for r in store.results("run-1")] == ["completed"]
    assert [c["id"] for c in store.calls("run-1", active=True)] == ["call-a"]
    store.update_call(
        "call-a",
        {
            "id": "call-a",
            "case_id": "mmlu-pro/1",
            "target_id": "t",
            "role": "subject",
            "status": "completed",
        },
    )
    assert store.calls("run-1", active=True) == []
    run = store.set_run_status("run-1", "completed")
    assert run.status == "completed"
    assert [e["kind"] for e in store.events("run-1")][-1] == "completed"
    with pytest.raises(StoreError, match="no run"):
        store.set_run_status("run-missing", "completed")


def test_failed_write_is_isolated_and_the_rest_commits(store_location, plan):
    store = open_store(store_location)
    store.create_run("run-1", plan)
    writer = GroupCommitWriter(store)
    row = {"id": "dup", "case_id": "c", "target_id": "t", "role": "subject", "status": "sent"}

    async def scenario():
        ok = writer.run([AppendEvent("run-1", "ok", {}), InsertCall("run-1", dict(row))])
        clash = writer.run([InsertCall("run-1", dict(row))])
        await ok
        with pytest.raises(Exception, match=r"(?i)unique"):  # the backend's own integrity error
            await clash

    asyncio.run(scenario())
    assert [e["kind"] for e in store.events("run-1")] == ["created", "ok"]
    assert [c["id"] for c in store.calls("run-1")] == ["dup"]
    assert writer.errors and writer.commits >= 1


def test_group_commit_batches_one_iteration(store_location, plan):
    store = open_store(store_location)
    store.create_run("run-1", plan)
    writer = GroupCommitWriter(store)

    async def scenario():
        waiters = [writer.run([AppendEvent("run-1", f"e{i}", {})]) for i in range(50)]
        writer.post([AppendEvent("run-1", "lazy", {})])
        await asyncio.gather(*waiters)

    asyncio.run(scenario())
    assert writer.commits == 1 and writer.writes == 51
    assert len(store.events("run-1")) == 52


def _write_many(root, worker, count):
    store = open_store(root)
    writer = GroupCommitWriter(store)
    for i in range(count):
        row = {
            "id": f"call-{worker}-{i}",
            "case_id": f"c{i}",
            "target_id": "t",
            "role": "subject",
            "status": "sent",
        }
        writer.post([InsertCall("run-1", row)])


def test_several_processes_write_one_store_without_losing_rows(store_location, plan):
    root = store_location
    open_store(root).create_run("run-1", plan)
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_many, args=(root, w, 400)) for w in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    store = open_store(root)
    assert store.count_calls("run-1") == 1200
    assert len({c["id"] for c in store.calls("run-1")}) == 1200


def test_paging_cursors(store_location, plan):
    store = open_store(store_location)
    store.create_run("run-1", plan)
    with store.transaction():
        for i in range(5):
            store.insert_call(
                "run-1",
                {
                    "id": f"c{i}",
                    "case_id": "x",
                    "target_id": "t",
                    "role": "subject",
                    "status": "sent",
                },
            )
    first = store.calls("run-1", limit=2)
    second = store.calls("run-1", after=first[-1]["_seq"], limit=2)
    assert [c["id"] for c in first + second] == ["c0", "c1", "c2", "c3"]
    assert json.loads(json.dumps(first))  # rows are plain JSON data


def test_every_event_pages_through_all_of_a_run_with_no_ceiling(store_location, plan):
    store = open_store(store_location)
    store.create_run("run-1", plan)  # journals its "created" event
    with store.transaction():
        for i in range(23):
            store.append_event("run-1", "dispatch_stopped" if i % 2 else "call_sent", {"i": i})
    every = list(every_event(store, "run-1", page=5))  # 24 events: five pages of 5, 5, 5, 5, 4
    assert len(every) == 24 and [e["seq"] for e in every] == sorted({e["seq"] for e in every})
    stops = list(every_event(store, "run-1", kinds=("dispatch_stopped",), page=3))
    assert [e["data"]["i"] for e in stops] == list(range(1, 23, 2))  # 11 of them, in order
    exact = list(every_event(store, "run-1", kinds=("dispatch_stopped",), page=11))
    assert exact == stops  # a last page that is exactly full ends on the empty one after it


def test_plan_outline_matches_the_manifest(store_location, plan):
    from pytest_srbench.core.models import Cell, PlanOutline

    store = open_store(store_location)
    store.create_run("run-1", plan)
    assert store.plan_outline("run-1") == PlanOutline.of(plan)
    assert store.plan_outline("run-1").cells == [("mmlu-pro/1", "t"), ("mmlu-pro/2", "t")]
    subset = plan.model_copy(
        update={"execution_cells": [Cell(case_id="mmlu-pro/2", target_id="t")]}
    )
    assert PlanOutline.of(subset).cells == [("mmlu-pro/2", "t")]
    assert PlanOutline.from_document(subset.model_dump(mode="json")) == PlanOutline.of(subset)


def test_report_plan_is_the_manifest_without_case_content(store_location, plan):
    store = open_store(store_location)
    store.create_run("run-1", plan)
    full, outline = store.get_manifest("run-1"), store.report_plan("run-1")
    assert any(case.messages for case in full.cases)
    assert [case.messages for case in outline.cases] == [[] for _ in full.cases]
    assert all(case.answer is None for case in outline.cases)
    kept = ("id", "benchmark", "metadata")
    assert [case.model_dump(include=set(kept)) for case in outline.cases] == [
        case.model_dump(include=set(kept)) for case in full.cases
    ]
    assert outline.model_dump(exclude={"cases"}) == full.model_dump(exclude={"cases"})
    assert outline.planned_keys() == full.planned_keys()


def test_a_finished_call_keeps_its_evidence_readable_by_its_locator(store_location, plan):
    store = open_store(store_location)
    store.create_run("run-1", plan)
    writer = GroupCommitWriter(store)
    rows = [{"id": f"c{i}", "case_id": "mmlu-pro/1", "target_id": "t", "role": "subject"}
            for i in range(3)]  # fmt: skip
    writer.post([InsertCall("run-1", {**row, "status": "sent"}) for row in rows])
    blobs = [b"data: one\n\n", b"", b"data: three \xe2\x9c\x93\n\n"]
    writer.post([FinishCall("run-1", {**row, "status": "completed"}, blob)
                 for row, blob in zip(rows, blobs, strict=True)])  # fmt: skip
    store.close_evidence()
    again = open_store(store_location)  # another handle (as another process would read)
    calls = again.calls("run-1")
    assert [again.read_evidence(c["evidence"]) for c in calls] == blobs
    assert [c["evidence"]["length"] for c in calls] == [len(b) for b in blobs]
    with pytest.raises(StoreError):
        again.read_evidence(None)


def test_the_call_row_is_committed_before_run_returns(store_location, plan):
    """What ``await writer.run([...])`` wrote is visible to another connection at once: the
    engine sends the request only after that."""
    store = open_store(store_location)
    store.create_run("run-1", plan)
    writer = GroupCommitWriter(store)
    other = open_store(store_location)
    row = {"id": "c1", "case_id": "mmlu-pro/1", "target_id": "t", "role": "subject",
           "status": "sent"}  # fmt: skip

    async def scenario():
        await writer.run([InsertCall("run-1", row)])
        return [c["id"] for c in other.calls("run-1", active=True)]

    assert asyncio.run(scenario()) == ["c1"]


def _append_and_create(location, worker, count, plan, ready, go):
    store = open_store(location)
    ready.wait()
    go.wait(30)
    created = []
    for i in range(count):
        run, made = store.create_run(f"run-{worker}-{i}", plan, request_key="one-key")
        created.append(made)
        with store.transaction():
            store.append_event(run.id, "tick", {"worker": worker, "i": i})
    writer = GroupCommitWriter(store)
    writer.post([AppendEvent(run.id, "batch", {"worker": worker, "j": j}) for j in range(5)])
    assert sum(created) <= 1


def test_concurrent_writers_get_one_run_per_key_and_gap_free_event_numbers(store_location, plan):
    """Three processes create the same run key and append events at once: exactly one run,
    every event kept, numbered 1..N with no gap and no repeat."""
    context = multiprocessing.get_context("spawn")
    open_store(store_location)  # the schema, before the race
    ready, go = context.Barrier(4), context.Event()
    workers = [
        context.Process(target=_append_and_create, args=(store_location, w, 15, plan, ready, go))
        for w in range(3)
    ]
    for worker in workers:
        worker.start()
    ready.wait()
    go.set()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    store = open_store(store_location)
    runs = store.list_runs(limit=100)
    assert len(runs) == 1 and runs[0].request_key == "one-key"
    events = list(every_event(store, runs[0].id, page=37))
    assert [e["seq"] for e in events] == list(range(1, 1 + 1 + 3 * 15 + 3 * 5))
    assert sorted((e["data"]["worker"], e["data"]["i"]) for e in events if e["kind"] == "tick") == [
        (w, i) for w in range(3) for i in range(15)
    ]


def test_recovery_claims_are_unique_across_children(store_location, plan):
    from pytest_srbench.store.base import StoreConflict

    store = open_store(store_location)
    store.create_run("parent", plan)
    with store.transaction():
        store.insert_claims("parent", "child-1", [("mmlu-pro/1", "t")])
    with pytest.raises(StoreConflict), store.transaction():
        store.insert_claims("parent", "child-2", [("mmlu-pro/2", "t"), ("mmlu-pro/1", "t")])
    assert store.claimed_cells("parent") == {("mmlu-pro/1", "t")}  # the loser's rolled back


def test_the_sweep_settles_a_dead_owners_run(store_location, plan):
    store = open_store(store_location)
    store.create_run("run-1", plan, status="running")
    gone = {"host": host_id(), "pid": 2**22 + 7, "process_started": "1"}  # no such pid
    store.set_owner("run-1", gone)
    store.insert_call("run-1", {"id": "c1", "case_id": "mmlu-pro/1", "target_id": "t",
                                "role": "subject", "status": "sent"})  # fmt: skip
    store.upsert_result("run-1", {"case_id": "mmlu-pro/1", "target_id": "t", "status": "running"})
    (swept,) = sweep_orphans(store)
    assert swept.status == "interrupted" and swept.error.startswith(OWNER_STOPPED.split("(")[0])
    (call,) = store.calls("run-1")
    assert call["status"] == "sent_unknown" and call["error"] == WORKER_STOPPED
    assert store.results("run-1")[0]["status"] == "sent_unknown"
    assert sweep_orphans(store) == []  # settled once
