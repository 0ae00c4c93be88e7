"""Which backend a store location means: ``postgresql://…`` / ``postgres://…`` is a
PostgreSQL database (``store/postgres.py``, psycopg loaded only then), anything else a local
SQLite folder. Every entry point (``--srbench-store``, ``[tool.srbench] store``, the CLI's
``--store``, ``srbench serve``) opens its store here."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_srbench.store.base import Store, StoreError

DATABASE_SCHEMES = ("postgresql://", "postgres://")
DEFAULT_LOCAL_DIR = ".srbench"  # a database store's folder for files next to a run


def is_database_url(text: str) -> bool:
    """Whether a store location names a PostgreSQL database rather than a folder."""
    return str(text).startswith(DATABASE_SCHEMES)


def check_location(text: str) -> None:
    """A location is a folder or a PostgreSQL URL without a password; any other URL is
    refused without repeating it (it may hold a password), before a path turns
    ``scheme://user:pw@host`` into folders."""
    if is_database_url(text):
        from pytest_srbench.store.postgres import check_url

        check_url(text)
    elif "://" in text:
        scheme = text.split("://", 1)[0][:20]
        raise StoreError(
            f"store URL {scheme}://…: a store is a local folder or a postgresql:// database"
        )


def describe_location(location: str | os.PathLike[str]) -> str:
    """The location as it may be shown or recorded (never a password)."""
    text = str(location)
    if is_database_url(text):
        from pytest_srbench.store.postgres import safe_location

        return safe_location(text)
    return text


def open_store(
    location: str | os.PathLike[str],
    *,
    read_only: bool = False,
    local_dir: str | os.PathLike[str] | None = None,
) -> Store:
    """Open (creating if needed) the store at a folder or a ``postgresql://`` URL.

    ``read_only`` (or a SQLite store this process cannot write) opens it for reading only.
    ``local_dir`` is where a database store keeps files written next to a run on this host
    (default ``.srbench``); a folder store keeps them in itself.
    """
    text = str(location)
    check_location(text)
    if is_database_url(text):
        from pytest_srbench.store.postgres import PostgresStore

        root = Path(local_dir) if local_dir is not None else Path(DEFAULT_LOCAL_DIR)
        return PostgresStore(text, read_only=read_only, root=root)
    from pytest_srbench.store.sqlite import SqliteStore

    return SqliteStore(Path(location), read_only=read_only)


def store_exists(location: str | os.PathLike[str]) -> bool:
    """Whether a store is there to open (a database URL is assumed to be: opening says)."""
    text = str(location)
    if is_database_url(text):
        return True
    from pytest_srbench.store.sqlite import DB_NAME

    return (Path(location) / DB_NAME).exists()
