"""The durable store: runs, cell results, call receipts, append-only events and evidence files.

``GroupCommitWriter`` (and with it asyncio) loads on first use: commands that only read a
store never pay for it.
"""

from typing import TYPE_CHECKING, Any

from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.store.opening import open_store
from pytest_srbench.store.sqlite import SqliteStore

if TYPE_CHECKING:
    from pytest_srbench.store.writer import GroupCommitWriter

__all__ = ["GroupCommitWriter", "SqliteStore", "Store", "StoreError", "open_store"]


def __getattr__(name: str) -> Any:
    if name == "GroupCommitWriter":
        from pytest_srbench.store.writer import GroupCommitWriter

        return GroupCommitWriter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
