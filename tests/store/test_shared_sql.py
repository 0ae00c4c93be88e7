"""The statements and row encodings both backends share (``store/shared_sql.py``)."""

import pytest

from pytest_srbench.store.shared_sql import (
    RUN_FIELDS,
    UPSERT_SHARD,
    accounting,
    postgres_sql,
    run_of,
    shard_args,
)


def test_postgres_sql_swaps_every_placeholder():
    assert postgres_sql("SELECT a FROM t WHERE b = ? AND c IN (?, ?)") == (
        "SELECT a FROM t WHERE b = %s AND c IN (%s, %s)"
    )
    assert "?" not in postgres_sql(UPSERT_SHARD)
    assert postgres_sql(UPSERT_SHARD).count("%s") == UPSERT_SHARD.count("?") == 10


def test_run_of_maps_the_run_columns_in_order_and_refuses_a_short_row():
    values = ("r1", "running", "c", "u", "abc", None, None, "parent")
    run = run_of(values)
    assert [getattr(run, field) for field in RUN_FIELDS] == list(values)
    with pytest.raises(ValueError):
        run_of(values[:-1])


def test_shard_args_keep_the_columns_apart_from_the_data():
    shard = {"shard": 1, "shards": 2, "state": "running", "host": "h", "pid": 3,
             "started_at": "s", "cells": 4, "attempt": 2}  # fmt: skip
    args = shard_args("r1", shard)
    assert args[:9] == ("r1", 1, 2, "running", "h", 3, None, "s", None)
    assert args[9] == '{"cells":4,"attempt":2}'


def test_accounting_knows_a_cost_only_when_it_is_a_number():
    assert accounting({"usage": {}, "cost_usd": 0, "finish_reason": "stop"}) == (1, 0.0, "stop")
    assert accounting({"cost_usd": True, "finish_reason": 3}) == (0, None, None)
