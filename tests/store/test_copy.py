"""``store/copy.py``: a run with every kind of row copied SQLite → PostgreSQL → SQLite comes
back identical (numbers, stamps, JSON, evidence bytes and locators); an identical run in the
destination is skipped, a different one refused; a SQLite destination whose numbers are taken
renumbers in order."""

from __future__ import annotations

import pytest

from pytest_srbench.core.offline.reconcile import build_artifact
from pytest_srbench.store import GroupCommitWriter, StoreError, open_store
from pytest_srbench.store.copy import copy_runs, export_run
from pytest_srbench.store.corrections import latest_correction, record_correction
from pytest_srbench.store.writes import (
    AppendEvent,
    CallProgress,
    FinishCall,
    InsertCall,
    UpsertResult,
)
from tests.core.helpers import case, manifest, target


def full_run(store, run_id: str = "run-1", evidence: bytes = b"data: {}\n\n") -> None:
    """A run with rows in every table a run has."""
    plan = manifest([case("mmlu-pro", "1"), case("mmlu-pro", "2")], [target("t")])
    store.create_run(run_id, plan, request_key=f"key-{run_id}", runner={"source": "test"})
    store.set_owner(run_id, {"host": "h", "pid": 1, "process_started": "5"})
    store.register_process(run_id, {"process_id": "h:1", "role": "single"})
    store.save_recipe(run_id, {"target_id": "t", "rules": [1, 2]})
    writer = GroupCommitWriter(store)
    rows = [{"id": f"{run_id}-c{i}", "case_id": f"mmlu-pro/{i}", "target_id": "t",
             "role": "subject"} for i in (1, 2)]  # fmt: skip
    writer.post([InsertCall(run_id, {**row, "status": "sent"}) for row in rows])
    writer.post([
        FinishCall(run_id, {**rows[0], "status": "completed", "cost_usd": 0.25,
                            "usage": {"input_tokens": 3}, "finish_reason": "stop"}, evidence),
        UpsertResult(run_id, {"case_id": "mmlu-pro/1", "target_id": "t", "status": "completed",
                              "correct": True}),
        UpsertResult(run_id, {"case_id": "mmlu-pro/2", "target_id": "t", "status": "running"}),
        CallProgress(run_id, rows[1]["id"], 12, "2026-01-01T00:00:00+00:00", "streaming"),
        AppendEvent(run_id, "case_completed", {"case_id": "mmlu-pro/1"}),
    ])  # fmt: skip
    with store.transaction():
        store.insert_claims(run_id, f"{run_id}-child", [("mmlu-pro/2", "t")])
    row = {"call_id": rows[0]["id"], "original_receipt_sha256": "0" * 64,
           "original_usage": None, "original_cost_usd": 0.25, "usage": None, "cost_usd": None,
           "verified": False, "unknown_reason": "Saved stream evidence could not be verified"}  # fmt: skip
    record_correction(store, build_artifact(run_id, plan.plan_sha256, [row]))
    store.set_run_status(run_id, "interrupted", "stopped")


def test_a_run_goes_to_postgres_and_back_unchanged(tmp_path, postgres_url):
    first = open_store(tmp_path / "a")
    full_run(first)
    original = export_run(first, "run-1")
    assert original.evidence and original.claims and original.corrections and original.progress
    database = open_store(postgres_url)
    assert copy_runs(first, database).copied == ["run-1"]
    assert export_run(database, "run-1") == original  # numbers kept, bytes kept
    back = open_store(tmp_path / "b")
    assert copy_runs(database, back).copied == ["run-1"]
    assert export_run(back, "run-1") == original
    (call, _) = back.calls("run-1")
    assert back.read_evidence(call["evidence"]) == b"data: {}\n\n"
    assert latest_correction(back, "run-1") == latest_correction(first, "run-1")
    assert back.claimed_cells("run-1") == {("mmlu-pro/2", "t")}
    # the copied run goes on with its own next numbers in the database
    assert database.append_event("run-1", "note", {}) == original.events[-1]["seq"] + 1
    with database.transaction():
        database.insert_call("run-1", {"id": "late", "case_id": "x", "target_id": "t",
                                       "role": "subject", "status": "sent"})  # fmt: skip
    assert database.get_call("late")["_seq"] == original.calls[-1]["seq"] + 1


def test_an_identical_run_is_skipped_and_a_different_one_refused(tmp_path, store_location):
    source = open_store(tmp_path / "a")
    full_run(source)
    destination = open_store(store_location)
    assert copy_runs(source, destination, ["run-1"]).copied == ["run-1"]
    again = copy_runs(source, destination, ["run-1"])
    assert again.copied == [] and again.identical == ["run-1"]
    other = open_store(tmp_path / "c")
    full_run(other, evidence=b"data: other\n\n")  # the same run id, different bytes
    before = export_run(destination, "run-1")
    with pytest.raises(StoreError, match="run run-1 is already in the destination"):
        copy_runs(other, destination, ["run-1"])
    assert export_run(destination, "run-1") == before  # nothing overwritten


def test_a_sqlite_destination_renumbers_in_order_when_its_numbers_are_taken(tmp_path, postgres_url):
    database = open_store(postgres_url)
    full_run(database, "run-9")  # numbers 1.. in the database
    folder = open_store(tmp_path / "f")
    full_run(folder, "run-0")  # numbers 1.. taken by another run here
    copy_runs(database, folder, ["run-9"])
    copied = export_run(folder, "run-9")
    assert copied.comparable() == export_run(database, "run-9").comparable()
    seqs = [e["seq"] for e in copied.events]
    assert seqs == sorted(seqs) and min(seqs) > max(
        e["seq"] for e in export_run(folder, "run-0").events
    )


def test_an_unknown_run_is_named(tmp_path, postgres_url):
    with pytest.raises(StoreError, match="no run 'nope' in the source store"):
        copy_runs(open_store(tmp_path / "a"), open_store(postgres_url), ["nope"])
