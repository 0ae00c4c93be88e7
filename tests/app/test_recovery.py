"""Recovery and the restart sweep over a real SQLite store (run-lifecycle.md §16 items 8-12)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_srbench.app.lifecycle import claim_ownership, open_swept_store, request_cancel
from pytest_srbench.app.recovery import create_child, plan_for
from pytest_srbench.core.offline.recovery import RecoveryError
from pytest_srbench.store.opening import open_store
from tests.app.recovery_helpers import CASES
from tests.core.helpers import manifest, target


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.name.endswith(("-wal", "-shm")):
            h.update(str(path.relative_to(folder)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def test_item_8_restart_sweep_interrupts_and_resends_nothing(interrupted):
    store, run_id = interrupted
    calls_before = store.count_calls(run_id)
    again, swept = open_swept_store(store.root)
    assert [run.id for run in swept] == [run_id]
    run = again.require_run(run_id)
    assert run.status == "interrupted"
    assert "Runner process stopped (pid" in (run.error or "")
    statuses = {c["case_id"]: c["status"] for c in again.calls(run_id)}
    assert statuses[CASES[1].id] == "sent_unknown"
    results = {r["case_id"]: r["status"] for r in again.results(run_id)}
    assert results[CASES[1].id] == results[CASES[2].id] == "sent_unknown"
    assert again.count_calls(run_id) == calls_before  # nothing re-sent, nothing added
    assert open_swept_store(store.root)[1] == []  # a second sweep finds nothing


def test_a_live_owner_or_a_queued_unowned_run_is_not_swept(tmp_path):
    store = open_store(tmp_path / "s")
    live, _ = store.create_run("run-live", manifest(CASES, [target("t")]))
    assert claim_ownership(store, live.id)
    store.set_run_status(live.id, "running")
    waiting, _ = store.create_run("run-waiting", manifest(CASES[:2], [target("t")]))
    assert open_swept_store(store.root)[1] == []
    assert store.require_run(waiting.id).status == "queued"


def test_item_9_recover_plan_reasons_in_order(interrupted):
    store, run_id = interrupted
    open_swept_store(store.root)
    before = tree_digest(store.root)
    plan = plan_for(store, run_id, "undispatched")
    assert tree_digest(store.root) == before  # read-only
    reasons = {e["case_id"]: e["reason"] for e in plan["excluded"]}
    ids = [c.id for c in CASES]
    assert reasons == {
        ids[0]: "completed_evidence_is_preserved",
        ids[1]: "ambiguous_dispatch_requires_reconciliation",
        ids[2]: "ambiguous_saved_result_requires_reconciliation",
        ids[3]: "already_dispatched_requires_explicit_new_attempt",
        ids[4]: "already_dispatched_requires_explicit_new_attempt",
    }
    assert plan["eligible_cells"] == [{"case_id": ids[5], "target_id": "t"}]
    assert plan["counts"] == {"eligible": 1, "excluded": 5}
    assert plan["parent_snapshot"]["progress"]["total"] == 6
    assert plan["parent_snapshot"]["spend_complete"] is False
    failed = plan_for(store, run_id, "failed")
    reasons = {e["case_id"]: e["reason"] for e in failed["excluded"]}
    assert failed["eligible_cells"] == [{"case_id": ids[3], "target_id": "t"}]
    assert reasons[ids[4]] == "unfinished_or_unknown_accounting_requires_reconciliation"
    assert reasons[ids[5]] == "never_dispatched_use_undispatched_mode"
    assert failed["requires_new_attempt_acknowledgment"] is True
    with pytest.raises(RecoveryError, match="Unknown recovery mode"):
        plan_for(store, run_id, "everything")


def test_recover_plan_needs_a_terminal_parent(tmp_path):
    store = open_store(tmp_path / "s")
    run, _ = store.create_run("run-q", manifest(CASES, [target("t")]))
    claim_ownership(store, run.id)
    with pytest.raises(RecoveryError, match="terminal live parent"):
        plan_for(store, run.id)


def test_item_10_plan_for_another_parent_and_stale_plans_are_refused(interrupted, tmp_path):
    store, run_id = interrupted
    open_swept_store(store.root)
    plan = plan_for(store, run_id)
    with pytest.raises(RecoveryError, match="another parent run"):
        create_child(store, "run-other", plan, idempotency_key="k")
    stale = {**plan, "plan_sha256": "0" * 64}
    with pytest.raises(RecoveryError, match="Recovery eligibility changed") as info:
        create_child(store, run_id, stale, idempotency_key="k")
    assert info.value.code == "recovery_plan_required"
    picked = {**plan, "selected_cells": [{"case_id": CASES[0].id, "target_id": "t"}]}
    with pytest.raises(RecoveryError, match="not eligible"):
        create_child(store, run_id, picked, idempotency_key="k")
    with pytest.raises(RecoveryError, match="idempotency key is required"):
        create_child(store, run_id, plan, idempotency_key=" ")
    # the CLI refuses a plan for another parent before touching anything
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    done = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "--store", str(store.root), "recover", "run-other",
         "--plan", str(path), "--idempotency-key", "k"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "Recovery plan belongs to another parent run" in done.stderr


def test_item_11_failed_mode_needs_acknowledgement_and_makes_a_child(interrupted):
    store, run_id = interrupted
    open_swept_store(store.root)
    parent_before = (store.require_run(run_id), store.results(run_id), store.calls(run_id))
    plan = plan_for(store, run_id, "failed")
    with pytest.raises(RecoveryError, match="explicit new-attempt"):
        create_child(store, run_id, plan, idempotency_key="k1")
    child, created = create_child(
        store, run_id, plan, idempotency_key="k1", acknowledge_new_attempt=True
    )
    assert created and child.status == "queued" and child.parent_run_id == run_id
    child_plan = store.get_manifest(child.id)
    assert len(child_plan.planned_cells()) == 1
    assert child_plan.recovery["parent_run_id"] == run_id
    assert child_plan.recovery["mode"] == "failed"
    assert len(child_plan.recovery["selected_cells_sha256"]) == 64
    assert child_plan.name.startswith("Recovery subset: ")
    assert (store.require_run(run_id), store.results(run_id), store.calls(run_id)) == parent_before


def test_item_12_same_request_same_child_and_claims_conflict(interrupted):
    store, run_id = interrupted
    open_swept_store(store.root)
    plan = plan_for(store, run_id)
    first, created = create_child(store, run_id, plan, idempotency_key="k")
    again, created_again = create_child(store, run_id, plan, idempotency_key="k")
    assert created and not created_again and again.id == first.id
    other = {**plan, "selected_cells": []}
    with pytest.raises(RecoveryError):
        create_child(store, run_id, other, idempotency_key="k")
    fresh = plan_for(store, run_id)  # the cell is claimed now
    assert fresh["eligible_cells"] == []
    assert {"already_claimed_by_child_attempt"} <= {e["reason"] for e in fresh["excluded"]}
    with pytest.raises(RecoveryError, match=r"eligibility changed|not eligible"):
        create_child(store, run_id, plan, idempotency_key="k-new")


def test_item_15_cancel(tmp_path):
    store = open_store(tmp_path / "s")
    done, _ = store.create_run("run-done", manifest(CASES, [target("t")]))
    store.set_run_status(done.id, "completed")
    events = len(store.events(done.id))
    assert request_cancel(store, done.id).status == "completed"
    assert len(store.events(done.id)) == events  # a no-op
    active, _ = store.create_run("run-active", manifest(CASES[:2], [target("t")]))
    claim_ownership(store, active.id)
    store.set_run_status(active.id, "running")
    request_cancel(store, active.id)
    request_cancel(store, active.id)
    kinds = [e["kind"] for e in store.events(active.id)]
    assert kinds.count("cancellation_requested") == 1
    assert store.cancellation_requested(active.id)
