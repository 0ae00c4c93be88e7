"""Recovery against a store: compute a parent's recovery plan (read-only, zero model requests)
and create the child run with its cell claims in one transaction (run-lifecycle.md §8).

The child is created ``queued``; pytest runs it (``--srbench-recover PLAN --srbench-run-key
KEY``), adopting the queued child of the same key, or creating it itself.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_srbench.app.heap import gc_paused
from pytest_srbench.core.models import Manifest, Run
from pytest_srbench.core.offline.recovery import (
    CallFacts,
    CallSummary,
    RecoveryError,
    check_eligibility,
    check_request,
    child_manifest,
    recovery_plan,
    same_attempt,
    selected_cells,
    summarize_calls,
    summary_of_open_cells,
)
from pytest_srbench.store.base import Store, StoreConflict
from pytest_srbench.store.corrections import latest_correction


@dataclass(frozen=True)
class RecoveryRequest:
    """A reviewed plan about to run as a child of ``parent`` with this frozen manifest."""

    plan: dict[str, Any]
    parent: str
    manifest: Manifest


def _correction_view(store: Store, run_id: str) -> tuple[dict[str, Any] | None, str | None]:
    """call id -> corrected row of the latest accounting correction (if any), and its id."""
    correction = latest_correction(store, run_id)
    if not correction:
        return None, None
    return {row["call_id"]: row for row in correction.get("calls") or []}, str(correction["id"])


def call_summary(store: Store, run_id: str) -> tuple[CallSummary, str | None]:
    """Every call of the run as recovery sees it (through the accounting-correction view),
    summed up per cell; and the correction's id, if one applies."""
    corrected, correction_id = _correction_view(store, run_id)
    if corrected is None:  # the saved receipts are the view: the store sums them up
        return summary_of_open_cells(store.open_cell_calls(run_id), store.call_costs(run_id)), None
    rows = store.call_facts(run_id)  # id, case, target, status, usage known, cost, finish
    facts = []
    for call_id, case_id, target_id, status, _, _, finish in rows:
        row = corrected.get(call_id) or {}
        verified = bool(row.get("verified"))
        usage_known = verified and row.get("usage") is not None
        cost = row.get("cost_usd") if verified else None
        cost = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
        facts.append(CallFacts(call_id, case_id, target_id, status, usage_known, cost, finish))
    return summarize_calls(facts), correction_id


def plan_for(store: Store, run_id: str, mode: str = "undispatched") -> dict[str, Any]:
    """The parent's recovery plan, freshly computed."""
    run = store.require_run(run_id)
    with gc_paused():  # ~10^5 small acyclic records: collections would only cost time
        calls, correction_id = call_summary(store, run_id)
        return recovery_plan(
            store.plan_outline(run_id),
            run,
            store.result_statuses(run_id),
            calls,
            store.claimed_cells(run_id),
            mode,
            correction_id,
        )


def read_plan_file(path: Path) -> dict[str, Any]:
    """A saved plan document (possibly edited to add ``selected_cells``)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RecoveryError(f"{path}: cannot read the recovery plan ({error.strerror})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RecoveryError(f"{path}: the recovery plan is not JSON ({error})") from None
    if not isinstance(data, dict) or not {"parent_run_id", "mode", "plan_sha256"} <= set(data):
        raise RecoveryError(f"{path}: not a recovery plan (parent_run_id, mode, plan_sha256)")
    return data


def prepare_child(
    store: Store,
    parent_run_id: str,
    plan: dict[str, Any],
    *,
    idempotency_key: str | None,
    acknowledge_new_attempt: bool = False,
) -> tuple[Manifest, list[tuple[str, str]], Run | None]:
    """Validate a recover request; returns the child manifest, its cells and the existing
    child when the same key already made this very attempt (a lost acknowledgement)."""
    cells = check_request(
        plan=plan,
        parent_run_id=parent_run_id,
        cells=selected_cells(plan),
        idempotency_key=idempotency_key,
        acknowledge_new_attempt=acknowledge_new_attempt,
    )
    mode = str(plan.get("mode"))
    assert idempotency_key is not None
    existing = store.find_run_by_key(idempotency_key)
    if existing is not None:
        manifest = store.get_manifest(existing.id)
        if not same_attempt(manifest, parent_run_id, mode, cells):
            raise RecoveryError("Idempotency key is bound to another attempt")
        return manifest, cells, existing
    fresh = plan_for(store, parent_run_id, mode)
    check_eligibility(plan, fresh, cells)
    return child_manifest(store.get_manifest(parent_run_id), fresh, cells), cells, None


def create_child(
    store: Store,
    parent_run_id: str,
    plan: dict[str, Any],
    *,
    idempotency_key: str | None,
    acknowledge_new_attempt: bool = False,
    child_run_id: str | None = None,
) -> tuple[Run, bool]:
    """Create the child run (``queued``) and claim its cells atomically; the same request
    again returns the same child (created = False)."""
    manifest, cells, existing = prepare_child(
        store,
        parent_run_id,
        plan,
        idempotency_key=idempotency_key,
        acknowledge_new_attempt=acknowledge_new_attempt,
    )
    if existing is not None:
        return existing, False
    run_id = child_run_id or "run-" + uuid.uuid4().hex[:20]
    try:
        with store.transaction():
            run, created = store.create_run(run_id, manifest, request_key=idempotency_key)
            if created:
                store.insert_claims(parent_run_id, run.id, cells)
    except StoreConflict:
        raise RecoveryError(
            "A selected cell was claimed by another recovery child; inspect a fresh recovery plan",
            "recovery_plan_required",
        ) from None
    return run, created
