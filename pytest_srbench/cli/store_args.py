"""The store an ``srbench`` command works on: it must exist; opening it sweeps runs whose
owning process died (they become ``interrupted``) and says so on stderr. A store this process
cannot write is opened read-only (listing and reading work; a writing command says the store
is read-only) and is not swept, with a note on stderr; so is a store another process holds
locked longer than the busy timeout (the sweep waits for the next command)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_srbench.store.base import Store

DEFAULT_STORE = ".srbench"


def command_store(location: str | Path | None) -> Store:
    """Open and sweep the store at ``location`` (default ``.srbench``); a missing one is an error."""
    from pytest_srbench.app.lifecycle import sweep_orphans  # a command's --help loads none of it
    from pytest_srbench.store.base import StoreError
    from pytest_srbench.store.sqlite import DB_NAME, check_location, open_store

    check_location(str(location or DEFAULT_STORE))
    path = Path(location or DEFAULT_STORE)
    if not (path / DB_NAME).exists():
        raise StoreError(f"no store at {path} (pass --store DIR)")
    store = open_store(path)
    if store.read_only:
        print(
            f"srbench: note: the store {path} is read-only; opened for reading (runs left "
            "running by a stopped process are not marked interrupted)",
            file=sys.stderr,
        )
        return store
    try:
        swept = sweep_orphans(store)
    except StoreError as error:  # locked: reading still works, writing will say so
        print(f"srbench: note: {error}; runs were not swept", file=sys.stderr)
        return store
    for run in swept:
        print(f"srbench: run {run.id} was interrupted: {run.error}", file=sys.stderr)
    return store
