"""The store interface the engine, reports, CLI and service depend on.

A second backend (PostgreSQL behind a URL) implements this protocol; nothing above the
store imports sqlite3.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from pytest_srbench.core.models import Manifest, Run

Row = dict[str, Any]


class StoreError(RuntimeError):
    """The store cannot do what was asked (unknown run, conflicting key, newer schema …)."""


_last_stamp: tuple[float, str] = (0.0, "")


def now_iso() -> str:
    """The current time as ISO-8601 UTC (microsecond field; reused within one millisecond)."""
    global _last_stamp
    now = time.time()
    if now - _last_stamp[0] < 0.001:
        return _last_stamp[1]
    text = datetime.fromtimestamp(now, UTC).isoformat(timespec="microseconds")
    _last_stamp = (now, text)
    return text


class Store(Protocol):
    """Durable journal of runs, results, calls and events, plus raw evidence."""

    root: Path

    def transaction(self) -> AbstractContextManager[None]: ...

    def create_run(
        self,
        run_id: str,
        manifest: Manifest,
        *,
        request_key: str | None = None,
        runner: dict[str, Any] | None = None,
    ) -> tuple[Run, bool]: ...

    def get_run(self, run_id: str) -> Run | None: ...

    def find_run_by_key(self, request_key: str) -> Run | None: ...

    def get_manifest(self, run_id: str) -> Manifest: ...

    def get_runner(self, run_id: str) -> dict[str, Any] | None: ...

    def set_runner(self, run_id: str, runner: dict[str, Any]) -> None: ...

    def list_runs(
        self, *, limit: int = 50, offset: int = 0, status: str | None = None
    ) -> list[Run]: ...

    def set_run_status(
        self, run_id: str, status: str, error: str | None = None, *, ended_at: str | None = None
    ) -> Run: ...

    def upsert_result(self, run_id: str, result: Row) -> None: ...

    def results(self, run_id: str) -> list[Row]: ...

    def insert_call(self, run_id: str, call: Row) -> None: ...

    def update_call(self, call_id: str, call: Row) -> None: ...

    def calls(self, run_id: str, *, active: bool = False) -> list[Row]: ...

    def append_event(self, run_id: str, kind: str, data: Row) -> int: ...

    def events(self, run_id: str, *, after: int = 0, limit: int = 1000) -> list[Row]: ...

    def evidence_path(self, run_id: str, case_id: str, target_id: str, call_id: str) -> Path: ...

    def register_process(self, run_id: str, process: Row) -> None: ...

    def processes(self, run_id: str) -> list[Row]: ...

    def iter_run_ids(self) -> Iterator[str]: ...
