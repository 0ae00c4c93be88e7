"""``store/writes.py``: a batch of write intents split by kind for the backends' one
``executemany`` per kind."""

from __future__ import annotations

from pytest_srbench.store.writes import (
    AppendEvent,
    CallProgress,
    FinishCall,
    InsertCall,
    UpsertResult,
    by_kind,
)


def test_a_batch_splits_by_kind_keeping_each_kinds_order():
    writes = [
        AppendEvent("r", "one"),
        InsertCall("r", {"id": "c1"}),
        UpsertResult("r", {"case_id": "a"}),
        CallProgress("r", "c1", 10, "t1"),
        FinishCall("r", {"id": "c1"}),
        InsertCall("r", {"id": "c2"}),
        AppendEvent("r", "two"),
        UpsertResult("r", {"case_id": "b"}),
        CallProgress("r", "c2", 20, "t2"),
        FinishCall("r", {"id": "c2"}),
    ]
    split = by_kind(writes)
    assert [w.row["id"] for w in split.inserts] == ["c1", "c2"]
    assert [w.row["id"] for w in split.finishes] == ["c1", "c2"]
    assert [w.row["case_id"] for w in split.results] == ["a", "b"]
    assert [w.kind for w in split.events] == ["one", "two"]
    assert [w.call_id for w in split.progress] == ["c1", "c2"]
    assert sum(map(len, split)) == len(writes)
