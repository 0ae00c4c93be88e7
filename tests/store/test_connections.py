"""``store/connections.py``: one connection per thread, nested write transactions and read
snapshots, the same on both backends (a SQLite folder and a real PostgreSQL database)."""

from __future__ import annotations

import threading

import pytest

from pytest_srbench.store import open_store
from tests.core.helpers import case, manifest, result, target

RUN = "run-tx"


class Stop(Exception):
    """Raised inside a block to see what is rolled back."""


@pytest.fixture
def store(store_location):
    opened = open_store(store_location)
    opened.create_run(RUN, manifest([case("mmlu-pro", "1"), case("mmlu-pro", "2")], [target("t")]))
    yield opened
    opened.close()


def statuses(store) -> dict[tuple[str, str], str]:
    return store.result_statuses(RUN)


def test_a_nested_transaction_joins_the_outer_one_and_only_the_outer_commits(store):
    with pytest.raises(Stop), store.transaction():
        with store.transaction():
            store.upsert_result(RUN, result("mmlu-pro/1", "t"))
        raise Stop  # after the inner block ended: it must not have committed on its own
    assert statuses(store) == {}
    with store.transaction():
        with store.transaction():
            store.upsert_result(RUN, result("mmlu-pro/1", "t"))
        store.upsert_result(RUN, result("mmlu-pro/2", "t"))
    assert statuses(store) == {("mmlu-pro/1", "t"): "completed", ("mmlu-pro/2", "t"): "completed"}


def test_a_raising_block_rolls_back_and_the_next_transaction_starts_afresh(store, store_location):
    with pytest.raises(Stop), store.transaction():
        store.upsert_result(RUN, result("mmlu-pro/1", "t"))
        raise Stop
    assert statuses(store) == {}
    with store.transaction():  # a new outermost transaction, not joined to the failed one
        store.upsert_result(RUN, result("mmlu-pro/2", "t"))
    other = open_store(store_location)
    assert statuses(other) == {("mmlu-pro/2", "t"): "completed"}  # committed for all to see
    other.close()


def test_a_snapshot_inside_a_transaction_joins_it(store):
    with pytest.raises(Stop), store.transaction():
        store.upsert_result(RUN, result("mmlu-pro/1", "t"))
        with store.snapshot():
            assert statuses(store) == {("mmlu-pro/1", "t"): "completed"}
        raise Stop  # the snapshot did not commit the transaction's write
    assert statuses(store) == {}


def test_a_snapshots_reads_agree_while_another_connection_commits(store, store_location):
    writer = open_store(store_location)
    with store.snapshot():
        assert statuses(store) == {}
        with writer.transaction():
            writer.upsert_result(RUN, result("mmlu-pro/1", "t"))
        assert statuses(store) == {}  # still the journal as of the snapshot's first read
    assert statuses(store) == {("mmlu-pro/1", "t"): "completed"}
    writer.close()


def test_each_thread_has_its_own_connection_and_close_closes_only_this_threads(store):
    mine = store.db
    assert store.db is mine
    theirs: list[object] = []
    thread = threading.Thread(target=lambda: (theirs.append(store.db), store.close()))
    thread.start()
    thread.join(timeout=60)
    assert theirs and theirs[0] is not mine
    assert store.db is mine  # the other thread's close left this one open
    store.close()
    assert store.db is not mine  # a closed connection is replaced on next use
    assert statuses(store) == {}
