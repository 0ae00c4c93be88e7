"""The store an ``srbench`` command works on: it must exist; opening it sweeps runs whose
owning process died (they become ``interrupted``) and says so on stderr."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_srbench.lifecycle import open_swept_store
from pytest_srbench.store.base import StoreError
from pytest_srbench.store.sqlite import DB_NAME, SqliteStore

DEFAULT_STORE = ".srbench"


def command_store(location: str | Path | None) -> SqliteStore:
    """Open and sweep the store at ``location`` (default ``.srbench``); a missing one is an error."""
    path = Path(location or DEFAULT_STORE)
    if not (path / DB_NAME).exists():
        raise StoreError(f"no store at {path} (pass --store DIR)")
    store, swept = open_swept_store(path)
    for run in swept:
        print(f"srbench: run {run.id} was interrupted: {run.error}", file=sys.stderr)
    return store
