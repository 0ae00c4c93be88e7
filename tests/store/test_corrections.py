"""Accounting corrections in either store (SQLite, PostgreSQL): appended once per evidence digest, one event
per append, the latest one is effective."""

from __future__ import annotations

from pytest_srbench.core.offline.reconcile import build_artifact
from pytest_srbench.store import open_store
from pytest_srbench.store.corrections import latest_correction, record_correction
from pytest_srbench.store.dialect import rows
from tests.accounting_helpers import single_plan


def artifact(run_id: str, plan_sha256: str, reason: str | None = None) -> dict:
    row = {
        "call_id": "call-1",
        "original_receipt_sha256": "0" * 64,
        "original_usage": None,
        "original_cost_usd": 0.5,
        "usage": None,
        "cost_usd": None,
        "verified": False,
        "unknown_reason": reason or "Saved stream evidence could not be verified",
    }
    return build_artifact(run_id, plan_sha256, [row])


def accounting_events(store, run_id: str) -> list[dict]:
    return [e["data"] for e in store.events(run_id, kinds=("accounting_reconciled",))]


def test_recording_twice_returns_the_stored_artifact_and_logs_once(store_location):
    store = open_store(store_location)
    plan = single_plan()
    store.create_run("run-1", plan)
    first, appended = record_correction(store, artifact("run-1", plan.plan_sha256))
    assert appended is True
    assert first["created_at"] and first["id"].startswith("accounting-")
    assert {k: v for k, v in first.items() if k != "created_at"} == artifact(
        "run-1", plan.plan_sha256
    )
    again, appended_again = record_correction(store, artifact("run-1", plan.plan_sha256))
    assert appended_again is False
    assert again == first  # same created_at, same content
    assert list(again) == list(first)  # same key order too
    assert accounting_events(store, "run-1") == [
        {"id": first["id"], "evidence_sha256": first["evidence_sha256"], "model_requests": 0}
    ]
    assert latest_correction(store, "run-1") == first
    assert rows(store, "SELECT COUNT(*) AS n FROM accounting_corrections")[0]["n"] == 1


def test_new_evidence_appends_a_new_version_that_becomes_effective(store_location):
    store = open_store(store_location)
    plan = single_plan()
    store.create_run("run-1", plan)
    store.create_run("run-2", plan.model_copy(update={"plan_sha256": "other"}))
    assert latest_correction(store, "run-1") is None
    old, _ = record_correction(store, artifact("run-1", plan.plan_sha256))
    new, appended = record_correction(store, artifact("run-1", plan.plan_sha256, "changed"))
    assert appended is True and new["id"] != old["id"]
    assert latest_correction(store, "run-1") == new
    assert [e["id"] for e in accounting_events(store, "run-1")] == [old["id"], new["id"]]
    # the same evidence digest on another run is that run's own correction
    other, appended_other = record_correction(store, artifact("run-2", plan.plan_sha256))
    assert appended_other is True and other["run_id"] == "run-2"
    assert latest_correction(store, "run-2") == other
    assert latest_correction(store, "run-1") == new
    # re-recording the older evidence does not make it effective again
    again, appended_again = record_correction(store, artifact("run-1", plan.plan_sha256))
    assert appended_again is False and again == old
    assert latest_correction(store, "run-1") == new


def test_a_second_store_handle_sees_the_same_correction(store_location):
    plan = single_plan()
    one = open_store(store_location)
    one.create_run("run-1", plan)
    stored, _ = record_correction(one, artifact("run-1", plan.plan_sha256))
    two = open_store(store_location)
    assert latest_correction(two, "run-1") == stored
    assert record_correction(two, artifact("run-1", plan.plan_sha256)) == (stored, False)
