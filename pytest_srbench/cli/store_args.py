"""The store an ``srbench`` command works on: it must exist; opening it sweeps runs whose
owning process died (they become ``interrupted``) and says so on stderr. A store this process
cannot write is opened read-only (listing and reading work; a writing command says the store
is read-only) and is not swept, with a note on stderr; so is a store another process holds
locked longer than the busy timeout (the sweep waits for the next command)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_srbench.store.base import Store

DEFAULT_STORE = ".srbench"


def command_store(location: str | os.PathLike[str] | None) -> Store:
    """Open and sweep the store at ``location`` (a folder, default ``.srbench``, or a
    ``postgresql://`` URL); a missing folder store is an error."""
    from pytest_srbench.app.lifecycle import sweep_orphans  # a command's --help loads none of it
    from pytest_srbench.store.base import StoreError
    from pytest_srbench.store.opening import (
        check_location,
        describe_location,
        open_store,
        store_exists,
    )

    text = str(location or DEFAULT_STORE)
    check_location(text)
    if not store_exists(text):
        raise StoreError(f"no store at {text} (pass --store DIR or --store postgresql://…)")
    store = open_store(text)
    if store.read_only:
        print(
            f"srbench: note: the store {describe_location(text)} is read-only; opened for reading (runs left "
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
