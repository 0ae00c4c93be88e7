"""The store is sealed: callers see the ``Store`` protocol, which lists exactly the public
methods of both backends (SQLite and PostgreSQL), and no module outside ``store/`` reaches
for the connection."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest_srbench
from pytest_srbench.store.base import Store
from pytest_srbench.store.postgres import PostgresStore
from pytest_srbench.store.sqlite import SqliteStore

BACKEND_ONLY = {"db", "store_error"}  # the connection and its error mapping stay inside
POSTGRES_ONLY = {"keep_lease"}  # renewing this process's lease (``set_owner`` starts it)
SQLITE_ONLY = {"make_room"}  # merging the WAL after a full disk (the writer asks when it can)


def public_methods(cls: type) -> set[str]:
    return {
        name
        for name, value in inspect.getmembers(cls)
        if not name.startswith("_") and (callable(value) or isinstance(value, property))
    }


def test_the_protocol_lists_exactly_the_backends_public_methods():
    assert public_methods(Store) == public_methods(SqliteStore) - BACKEND_ONLY - SQLITE_ONLY
    assert public_methods(Store) == public_methods(PostgresStore) - BACKEND_ONLY - POSTGRES_ONLY


def test_both_backends_take_the_same_arguments():
    for name in public_methods(Store):
        sqlite, postgres = getattr(SqliteStore, name), getattr(PostgresStore, name)
        if callable(sqlite):
            ours = inspect.signature(sqlite).parameters
            theirs = inspect.signature(postgres).parameters
            assert list(ours) == list(theirs), name


def test_no_module_outside_the_store_touches_the_connection_or_sql():
    package = Path(pytest_srbench.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package)
        if relative.parts[0] in ("store", "notes"):  # notes: the reference engine's own index
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            # a store's connection (tau's domain "db" objects are another thing)
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "db"
                and "store" in ast.unparse(node.value)
            ):
                offenders.append(f"{relative}:{node.lineno}")
    assert not offenders
