"""What a stopped process leaves in flight, settled (run-lifecycle.md §6): calls still ``sent``
and cells still ``running`` become ``sent_unknown``. A stopped worker or a lost
acknowledgement is never permission to re-send; nothing settled here is dispatched again.

The bottom of the run's lifecycle: the restart sweep (``lifecycle.py``), a dead shard
(``shards.py``) and the end of a run (``run_end.py``) all settle through it.
"""

from __future__ import annotations

from collections.abc import Collection

from pytest_srbench.core.case_events import case_event_data
from pytest_srbench.store.base import Store

WORKER_STOPPED = "Worker stopped; dispatched requests are not retried"
OWNER_STOPPED = "Runner process stopped ({where}); inspect saved calls before a new run"


def settle_in_flight(
    store: Store, run_id: str, cells: Collection[tuple[str, str]] | None = None
) -> int:
    """Calls still ``sent`` and cells still ``running`` become ``sent_unknown`` (only those of
    ``cells`` when given: a dead shard's share, while the other shards go on)."""
    changed = 0
    with store.transaction():
        for call in store.calls(run_id, active=True):
            if cells is not None and (call["case_id"], call["target_id"]) not in cells:
                continue
            for key in ("_seq", "bytes_received", "last_activity_at"):
                call.pop(key, None)
            call["status"] = "sent_unknown"
            call["error"] = WORKER_STOPPED
            store.update_call(call["id"], call)
            changed += 1
        for row in store.results_with_status(run_id, "running"):
            if cells is not None and (row["case_id"], row["target_id"]) not in cells:
                continue
            row.update(status="sent_unknown", error=WORKER_STOPPED)
            store.upsert_result(run_id, row)
            store.append_event(run_id, "case_sent_unknown", case_event_data(row, None))
            changed += 1
    return changed
