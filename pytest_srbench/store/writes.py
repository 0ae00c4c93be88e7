"""Write intents: what the engine asks the store to record, applied in batches.

A backend turns a batch of intents into as few statements as it can (SQLite: one
``executemany`` per kind inside one transaction). Intents are plain data, so the same
engine code drives any backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pytest_srbench.core.records import CallReceipt, CellResult

Row = dict[str, Any]


@dataclass(frozen=True)
class UpsertResult:
    """Insert or replace the one row of a cell."""

    run_id: str
    row: CellResult


@dataclass(frozen=True)
class InsertCall:
    """Journal a call (status ``sent``) before its request leaves."""

    run_id: str
    row: CallReceipt


@dataclass
class FinishCall:
    """Store a finished call's receipt and its raw response bytes (the evidence)."""

    run_id: str
    row: CallReceipt
    evidence: bytes = b""


@dataclass(frozen=True)
class AppendEvent:
    """Append one event to the run's log."""

    run_id: str
    kind: str
    data: Row = field(default_factory=dict)


@dataclass(frozen=True)
class CallProgress:
    """How far an in-flight call's stream has come (bytes so far, when they last grew)."""

    run_id: str
    call_id: str
    bytes_received: int
    last_activity_at: str
    phase: str | None = None


Write = UpsertResult | InsertCall | FinishCall | AppendEvent | CallProgress


class ByKind(NamedTuple):
    """A batch of intents split by kind, each kind in the batch's order: what a backend
    writes with one ``executemany`` each."""

    inserts: list[InsertCall]
    finishes: list[FinishCall]
    results: list[UpsertResult]
    events: list[AppendEvent]
    progress: list[CallProgress]


def by_kind(writes: list[Write]) -> ByKind:
    """``writes`` split by kind (see ``ByKind``)."""
    return ByKind(
        [w for w in writes if isinstance(w, InsertCall)],
        [w for w in writes if isinstance(w, FinishCall)],
        [w for w in writes if isinstance(w, UpsertResult)],
        [w for w in writes if isinstance(w, AppendEvent)],
        [w for w in writes if isinstance(w, CallProgress)],
    )
