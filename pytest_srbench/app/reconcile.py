"""``reconcile_usage``: the offline, append-only accounting correction of a finished live run.

Reads the frozen manifest, every saved call (all roles, stored order) and each call's raw SSE
evidence, verifies them with ``core.reconcile`` and appends the artifact to the store. It makes
zero model requests and never edits call rows, result rows or the manifest
(reference/report-and-accounting.md §6).
"""

from __future__ import annotations

from typing import Any

from pytest_srbench.core.offline.reconcile import (
    EvidenceUnavailable,
    TargetResolver,
    build_artifact,
    byte_bound,
    check_preconditions,
    verify_call,
)
from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.store.corrections import record_correction


def read_saved_evidence(store: Store, locator: Any, bound: int) -> bytes | EvidenceUnavailable:
    """A call's saved bytes; a pack slice longer than ``bound`` is not read at all."""
    if locator is None:
        return EvidenceUnavailable.MISSING
    if isinstance(locator, dict):
        try:
            length = int(locator["length"])
        except (KeyError, TypeError, ValueError):
            return EvidenceUnavailable.MISSING
        if length > bound:
            return EvidenceUnavailable.TOO_LARGE
    try:
        return store.read_evidence(locator)
    except (OSError, StoreError, KeyError, TypeError, ValueError):
        return EvidenceUnavailable.MISSING


def reconcile_usage(store: Store, run_id: str) -> dict[str, Any]:
    """Verify every saved call of ``run_id`` against its evidence and record the correction.

    Raises ``ReconcileError`` when the run is not a terminal live run or has no saved calls,
    and ``StoreError`` for an unknown run. Re-running on identical evidence returns the stored
    artifact unchanged.
    """
    run = store.require_run(run_id)
    manifest = store.get_manifest(run_id)
    check_preconditions(run.status, manifest.mode, store.count_calls(run_id))
    calls = store.calls(run_id)
    bound = byte_bound(manifest.limits)
    resolve = TargetResolver(manifest)
    rows = [
        verify_call(
            call,
            resolve(call),
            read_saved_evidence(store, call.get("evidence"), bound),
            bound=bound,
        )
        for call in calls
    ]
    artifact = build_artifact(run_id, manifest.plan_sha256, rows)
    stored, _ = record_correction(store, artifact)
    return stored
