"""Append-only accounting corrections of a run (``accounting_corrections`` table).

A correction is stored once per (run, evidence digest): recording the same evidence again
returns the stored artifact unchanged (same ``created_at``) and logs nothing. The effective
correction of a run is the most recently appended one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_srbench.core.offline.reconcile import ACCOUNTING_EVENT
from pytest_srbench.store.base import Store, now_iso
from pytest_srbench.store.sqlite import sqlite_of


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
        row = (
            sqlite_of(store)
            .db.execute(
                "SELECT data FROM accounting_corrections WHERE run_id = ? AND evidence_sha256 = ?",
                (run_id, evidence),
            )
            .fetchone()
        )
        if row is not None:
            existing: dict[str, Any] = json.loads(row["data"])
            return existing, False
        created_at = now_iso()
        stored = {**artifact, "created_at": created_at}
        data = _dumps(stored)
        sqlite_of(store).db.execute(
            "INSERT INTO accounting_corrections(id, run_id, created_at, evidence_sha256, data)"
            " VALUES (?, ?, ?, ?, ?)",
            (str(artifact["id"]), run_id, created_at, evidence, data),
        )
        store.append_event(
            run_id,
            ACCOUNTING_EVENT,
            {"id": artifact["id"], "evidence_sha256": evidence, "model_requests": 0},
        )
    appended: dict[str, Any] = json.loads(data)
    return appended, True


def latest_correction(store: Store, run_id: str) -> dict[str, Any] | None:
    """The run's effective correction (the most recently appended), or ``None``."""
    row = (
        sqlite_of(store)
        .db.execute(
            "SELECT data FROM accounting_corrections WHERE run_id = ? ORDER BY seq DESC LIMIT 1",
            (run_id,),
        )
        .fetchone()
    )
    if row is None:
        return None
    correction: dict[str, Any] = json.loads(row["data"])
    return correction
