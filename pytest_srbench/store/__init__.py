"""The durable store: runs, cell results, call receipts, append-only events and evidence files."""

from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.store.sqlite import SqliteStore, open_store
from pytest_srbench.store.writer import GroupCommitWriter

__all__ = ["GroupCommitWriter", "SqliteStore", "Store", "StoreError", "open_store"]
