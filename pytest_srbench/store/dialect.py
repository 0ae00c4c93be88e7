"""Plain SQL on either backend, for this package's query modules (``run_listing.py``,
``corrections.py``, ``copy.py``): statements are written with ``?`` placeholders and standard
SQL both backends share; a PostgreSQL store gets them with ``%s``. Nothing outside ``store/``
uses it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.store.postgres import PostgresStore
from pytest_srbench.store.shared_sql import postgres_sql
from pytest_srbench.store.sqlite import SqliteStore

Row = dict[str, Any]


def is_postgres(store: Store) -> bool:
    return isinstance(store, PostgresStore)


def _backend(store: Store) -> SqliteStore | PostgresStore:
    if isinstance(store, SqliteStore | PostgresStore):
        return store
    raise StoreError(f"this query needs a SQLite or PostgreSQL store, not {type(store).__name__}")


def rows(store: Store, sql: str, args: Sequence[Any] = ()) -> list[Row]:
    """The statement's rows as dicts."""
    backend = _backend(store)
    if isinstance(backend, SqliteStore):
        return [dict(row) for row in backend.db.execute(sql, tuple(args))]
    found: list[Row] = backend.db.execute(postgres_sql(sql), tuple(args)).fetchall()
    return found


def execute(store: Store, sql: str, args: Sequence[Any] = ()) -> int:
    """Run one statement; the number of rows it changed."""
    backend = _backend(store)
    if isinstance(backend, SqliteStore):
        return int(backend.db.execute(sql, tuple(args)).rowcount)
    return int(backend.db.execute(postgres_sql(sql), tuple(args)).rowcount)
