"""The reads written once for both backends (``store/shared_reads.py``) answer alike on a
SQLite folder and a real PostgreSQL database: text in byte order whatever the locale, the
same owner and shard records, a run not found named with the store's location; SQLite reads
its result, event, process and runner rows with the standard library's ``json``."""

import sqlite3
import uuid

import pytest

from pytest_srbench.store import StoreError, open_store
from tests.core.helpers import case, manifest, target

# Byte order puts upper case before lower case and ASCII before "é"; a locale's order would not.
CASES = ["mmlu-pro/b", "mmlu-pro/B", "mmlu-pro/é", "mmlu-pro/a"]
BYTE_ORDER = sorted(CASES, key=lambda text: text.encode())


@pytest.fixture
def plan():
    return manifest([case("mmlu-pro", c.split("/")[1]) for c in CASES], [target("t")])


@pytest.fixture
def ordered_location(store_location, request) -> str:
    """A store whose database, on PostgreSQL, orders text by an English locale (b < B),
    so only the shared reads' byte-order collation gives SQLite's order."""
    if not store_location.startswith("postgresql"):
        return store_location
    import psycopg

    server = request.getfixturevalue("postgres_server")
    name = f"icu_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server.url(), autocommit=True) as connection:
        connection.execute(
            f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en'"
        )
    return str(server.url(name))


def _result(case_id: str, status: str = "completed") -> dict:
    return {"case_id": case_id, "target_id": "t", "status": status}


def test_results_and_snapshots_are_in_byte_order_on_both_backends(ordered_location, plan):
    store = open_store(ordered_location)
    store.create_run("r1", plan)
    for case_id in CASES:
        store.upsert_result("r1", _result(case_id))
        store.save_snapshot("r1", "index", case_id, {"of": case_id})
    assert [row["case_id"] for row in store.results("r1")] == BYTE_ORDER
    assert [row["case_id"] for row in store.results_with_status("r1", "completed")] == BYTE_ORDER
    assert list(store.snapshots("r1", "index")) == BYTE_ORDER
    paged = store.results("r1", after=0, limit=2)
    assert [row["case_id"] for row in paged] == CASES[:2]  # by row number when paging
    assert [row["case_id"] for row in store.results("r1", after=paged[-1]["_row"])] == [
        case_id for case_id in BYTE_ORDER if case_id not in CASES[:2]
    ]


def test_owner_shards_and_events_have_one_shape_on_both_backends(store_location, plan):
    store = open_store(store_location)
    store.create_run("r1", plan)
    store.set_owner("r1", {"host": "elsewhere", "pid": 41, "process_started": "7"})
    owner = store.owner("r1")
    assert owner is not None
    assert list(owner) == ["run_id", "host", "pid", "process_started", "acquired_at"]
    assert (owner["run_id"], owner["host"], owner["pid"]) == ("r1", "elsewhere", 41)
    store.save_shard(
        "r1",
        {"shard": 0, "shards": 2, "state": "finished", "host": "elsewhere", "pid": 41,
         "process_started": "7", "started_at": "2026-01-01T00:00:00+00:00", "cells": 3},
    )  # fmt: skip
    (shard,) = store.shards("r1")
    assert shard == {
        "shard": 0, "shards": 2, "state": "finished", "host": "elsewhere", "pid": 41,
        "process_started": "7", "started_at": "2026-01-01T00:00:00+00:00", "ended_at": None,
        "cells": 3,
    }  # fmt: skip
    assert [event["kind"] for event in store.events("r1", kinds=("created",))] == ["created"]
    assert store.events("r1", kinds=()) == []
    with pytest.raises(StoreError, match=r"no run 'gone' in "):
        store.require_run("gone")
    with pytest.raises(StoreError, match=r"no run 'gone' in "):
        store.plan_outline("gone")


def test_sqlite_reads_result_event_and_runner_rows_with_the_standard_json(tmp_path, plan):
    store = open_store(tmp_path / "s")
    store.create_run("r1", plan, runner={"workers": 1})
    store.close()
    huge = 2**70 + 1  # only the standard library reads an integer beyond 64 bits exactly
    db = sqlite3.connect(tmp_path / "s" / "journal.sqlite3")
    db.execute("UPDATE runs SET runner = ?", (f'{{"workers": {huge}}}',))
    db.execute(
        "INSERT INTO results(run_id, case_id, target_id, status, data, updated_at)"
        " VALUES ('r1', 'mmlu-pro/a', 't', 'failed', ?, '2026-01-01T00:00:00+00:00')",
        (f'{{"case_id": "mmlu-pro/a", "tokens": {huge}}}',),
    )
    db.execute("UPDATE events SET data = ?", (f'{{"n": {huge}}}',))
    db.commit()
    db.close()
    store = open_store(tmp_path / "s")
    assert store.get_runner("r1") == {"workers": huge}
    assert store.results("r1")[0]["tokens"] == huge
    assert store.results_with_status("r1", "failed")[0]["tokens"] == huge
    assert store.events("r1")[0]["data"] == {"n": huge}
