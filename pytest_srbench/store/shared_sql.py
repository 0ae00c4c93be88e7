"""The journal's row encodings and the write statements both backends run unchanged: a dict
as JSON text, a receipt's accounting columns, a ``Run`` from the run columns, and the upserts
of results, call progress, shards, owners and processes. Statements are written with ``?``
placeholders; ``postgres_sql`` gives a PostgreSQL store its ``%s`` form. How each backend
orders, locks and commits these writes stays in its own module."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from pytest_srbench.core.models import Run
from pytest_srbench.store.writes import CallProgress

RUN_FIELDS = (
    "id", "status", "created_at", "updated_at", "plan_sha256", "request_key", "error",
    "parent_run_id",
)  # fmt: skip
RUN_COLUMNS = ", ".join(RUN_FIELDS)

UPDATE_CALL = (
    "UPDATE calls SET status = ?, data = ?, updated_at = ?, usage_known = ?, cost_usd = ?,"
    " finish_reason = ? WHERE id = ?"
)
UPSERT_RESULT = (
    "INSERT INTO results(run_id, case_id, target_id, status, data, updated_at)"
    " VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id, case_id, target_id) DO UPDATE SET"
    " status = excluded.status, data = excluded.data, updated_at = excluded.updated_at"
)
UPSERT_PROGRESS = (
    "INSERT INTO call_progress(call_id, run_id, bytes_received, last_activity_at, phase)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (call_id) DO UPDATE SET"
    " bytes_received = excluded.bytes_received,"
    " last_activity_at = excluded.last_activity_at, phase = excluded.phase"
)
UPSERT_OWNER = (
    "INSERT INTO run_owners(run_id, host, pid, process_started, acquired_at)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id) DO UPDATE SET host = excluded.host,"
    " pid = excluded.pid, process_started = excluded.process_started,"
    " acquired_at = excluded.acquired_at"
)
UPSERT_SHARD = (
    "INSERT INTO run_shards(run_id, shard, shards, state, host, pid, process_started,"
    " started_at, ended_at, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id, shard) DO UPDATE SET shards = excluded.shards,"
    " state = excluded.state, host = excluded.host, pid = excluded.pid,"
    " process_started = excluded.process_started, started_at = excluded.started_at,"
    " ended_at = excluded.ended_at, data = excluded.data"
)
UPSERT_PROCESS = (
    "INSERT INTO processes(run_id, process_id, data) VALUES (?, ?, ?)"
    " ON CONFLICT (run_id, process_id) DO UPDATE SET data = excluded.data"
)
# the response cache's index: a request's key -> the completed live call that answered it
# (core/calls/cache.py); the newest completed call of a key wins
UPSERT_CACHE = (
    "INSERT INTO call_cache(key, call_id, run_id, target_id, created_at)"
    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET call_id = excluded.call_id,"
    " run_id = excluded.run_id, target_id = excluded.target_id,"
    " created_at = excluded.created_at"
)
CACHED_CALL = (
    "SELECT c.data, c.run_id FROM call_cache k JOIN calls c ON c.id = k.call_id"
    " WHERE k.key = ? AND c.status = 'completed'"
)
SHARD_COLUMNS = (
    "shard", "shards", "state", "host", "pid", "process_started", "started_at", "ended_at",
)  # fmt: skip


def postgres_sql(sql: str) -> str:
    """A statement written with ``?`` placeholders, as PostgreSQL (psycopg) takes it."""
    return sql.replace("?", "%s")


def dumps(value: Any) -> str:
    """A dict (or list) as the JSON text a ``data`` column holds."""
    return orjson.dumps(value).decode("utf-8")


def run_of(values: Iterable[Any]) -> Run:
    """A ``Run`` from one row's values of ``RUN_COLUMNS``, in that order."""
    return Run(**dict(zip(RUN_FIELDS, values, strict=True)))


def accounting(call: Mapping[str, Any]) -> tuple[int, float | None, str | None]:
    """Usage known, cost in USD (None when unknown) and finish reason of a receipt."""
    cost = call.get("cost_usd")
    finish = call.get("finish_reason")
    return (
        int(isinstance(call.get("usage"), dict)),
        float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
        finish if isinstance(finish, str) else None,
    )


def update_call_args(call_id: str, call: Mapping[str, Any], now: str) -> tuple[Any, ...]:
    """The arguments of ``UPDATE_CALL``."""
    return (call["status"], dumps(call), now, *accounting(call), call_id)


def cache_args(finishes: Iterable[Any], now: str) -> list[tuple[Any, ...]]:
    """The arguments of ``UPSERT_CACHE`` for the finished calls that completed live with a
    cache key (a ``FinishCall`` each)."""
    return [
        (w.row["cache_key"], w.row["id"], w.run_id, w.row["target_id"], now)
        for w in finishes
        if w.row.get("status") == "completed" and w.row.get("cache_key")
    ]


def result_args(run_id: str, row: Mapping[str, Any], now: str) -> tuple[Any, ...]:
    """The arguments of ``UPSERT_RESULT``."""
    return (run_id, row["case_id"], row["target_id"], row["status"], dumps(row), now)


def owner_args(run_id: str, owner: Mapping[str, Any], now: str) -> tuple[Any, ...]:
    """The arguments of ``UPSERT_OWNER``."""
    return (run_id, owner["host"], owner["pid"], owner.get("process_started"), now)


def shard_args(run_id: str, shard: Mapping[str, Any]) -> tuple[Any, ...]:
    """The arguments of ``UPSERT_SHARD``: the owner, state and times as columns, the rest of
    ``shard`` (cells, attempt …) as data."""
    data = {key: value for key, value in shard.items() if key not in SHARD_COLUMNS}
    return (run_id, shard["shard"], shard["shards"], shard["state"], shard["host"],
            shard["pid"], shard.get("process_started"), shard["started_at"],
            shard.get("ended_at"), dumps(data))  # fmt: skip


def process_args(run_id: str, process: Mapping[str, Any]) -> tuple[Any, ...]:
    """The arguments of ``UPSERT_PROCESS``."""
    return (run_id, process["process_id"], dumps(process))


def progress_args(progress: CallProgress) -> tuple[Any, ...]:
    """The arguments of ``UPSERT_PROGRESS``."""
    return (progress.call_id, progress.run_id, progress.bytes_received,
            progress.last_activity_at, progress.phase)  # fmt: skip
