"""Append-only accounting corrections of a run (``accounting_corrections`` table), on
either backend.

A correction is stored once per (run, evidence digest), also when two processes record it at
once (a unique key, ``ON CONFLICT DO NOTHING``): recording the same evidence again returns the
stored artifact unchanged (same ``created_at``) and logs nothing. The effective correction of
a run is the most recently appended one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_srbench.core.offline.reconcile import ACCOUNTING_EVENT
from pytest_srbench.store.base import Store, now_iso
from pytest_srbench.store.dialect import execute, rows


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def record_correction(store: Store, artifact: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """Store ``artifact`` unless this run already has one with the same evidence digest.

    Returns (the stored artifact with its ``created_at``, whether it was appended now). A new
    append also logs ``accounting_reconciled`` in the same transaction.
    """
    run_id = str(artifact["run_id"])
    evidence = str(artifact["evidence_sha256"])
    with store.transaction():
        found = rows(
            store,
            "SELECT data FROM accounting_corrections WHERE run_id = ? AND evidence_sha256 = ?",
            (run_id, evidence),
        )
        if not found:
            created_at = now_iso()
            stored = {**artifact, "created_at": created_at}
            data = _dumps(stored)
            inserted = execute(
                store,
                "INSERT INTO accounting_corrections(id, run_id, created_at, evidence_sha256,"
                " data) VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, evidence_sha256) DO NOTHING",
                (str(artifact["id"]), run_id, created_at, evidence, data),
            )
            if not inserted:  # another process recorded it between the read and the write
                found = rows(
                    store,
                    "SELECT data FROM accounting_corrections"
                    " WHERE run_id = ? AND evidence_sha256 = ?",
                    (run_id, evidence),
                )
        if found:
            existing: dict[str, Any] = json.loads(found[0]["data"])
            return existing, False
        store.append_event(
            run_id,
            ACCOUNTING_EVENT,
            {"id": artifact["id"], "evidence_sha256": evidence, "model_requests": 0},
        )
    appended: dict[str, Any] = json.loads(data)
    return appended, True


def latest_correction(store: Store, run_id: str) -> dict[str, Any] | None:
    """The run's effective correction (the most recently appended), or ``None``."""
    found = rows(
        store,
        "SELECT data FROM accounting_corrections WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
        (run_id,),
    )
    if not found:
        return None
    correction: dict[str, Any] = json.loads(found[0]["data"])
    return correction
