"""The store interface the engine, reports, CLI and service depend on.

Two backends implement this protocol: SQLite in a folder (``store/sqlite.py``) and PostgreSQL
behind a ``postgresql://`` URL (``store/postgres.py``); ``store/opening.py`` picks one from
the location. Nothing above the store imports sqlite3 or psycopg.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_srbench.core.errors import SrbenchError
from pytest_srbench.core.models import Case, Manifest, PlanOutline, ReportPlan, Run
from pytest_srbench.core.report.rows import CellRows

if TYPE_CHECKING:
    from pytest_srbench.store.writes import Write

Row = dict[str, Any]


class StoreError(SrbenchError, RuntimeError):
    """The store cannot do what was asked (unknown run, conflicting key, newer schema …)."""


class StoreUnavailable(StoreError):
    """The store refused a write for a reason that can pass: another process holds its write
    lock (``kind`` "locked"), the connection to its server was lost ("connection lost") or
    its disk is full ("disk full"). The engine's writer keeps such writes in memory and
    retries them (``store/writer.py``)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class ProgressCounts:
    """A run in progress, as its journal shows it: result rows per status (the meaning of
    each is ``core/progress.py``'s), calls in flight and the known spend."""

    statuses: dict[str, int]
    in_flight: int
    spend_usd: float


class StoreConflict(StoreError):
    """A write conflicts with what is recorded (a cell another recovery child has claimed)."""


_last_stamp: tuple[float, str] = (0.0, "")


def check_same_plan(existing: Any, run_id: str, request_key: str | None, plan_sha256: str) -> None:
    """A run found by ``run_id`` or ``request_key`` is reused only for the same plan: else a
    ``StoreError`` naming what is bound and both plan hashes (every backend's ``create_run``)."""
    if existing["plan_sha256"] == plan_sha256:
        return
    what = f"run key {request_key!r}" if existing["id"] != run_id else f"run {run_id}"
    raise StoreError(
        f"{what} is already bound to a different plan "
        f"({existing['plan_sha256'][:12]}… ≠ {plan_sha256[:12]}…)"
    )


def now_iso() -> str:
    """The current time as ISO-8601 UTC (microsecond field; reused within one millisecond)."""
    global _last_stamp
    now = time.time()
    if now - _last_stamp[0] < 0.001:
        return _last_stamp[1]
    text = datetime.fromtimestamp(now, UTC).isoformat(timespec="microseconds")
    _last_stamp = (now, text)
    return text


EVENT_PAGE = 10_000


def every_event(
    store: Store, run_id: str, kinds: tuple[str, ...] | None = None, page: int = EVENT_PAGE
) -> Iterator[Row]:
    """All of a run's events (of ``kinds``), oldest first, read a page at a time: no ceiling
    on how many a run may have."""
    after = 0
    while True:
        rows = store.events(run_id, after=after, limit=page, kinds=kinds)
        yield from rows
        if len(rows) < page:
            return
        after = rows[-1]["seq"]


class EventWaiter(Protocol):
    """Wakes a reader of a run's events when a writer commits some (PostgreSQL's
    ``LISTEN``/``NOTIFY``); entered before the reader's first read, so nothing committed
    after that read is missed."""

    async def __aenter__(self) -> EventWaiter: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def wait(self, run_id: str, timeout_s: float) -> bool: ...


class Store(Protocol):
    """Durable journal of runs, results, calls and events, plus raw evidence: what every
    caller outside ``store/`` may use. Both backends implement exactly this (a test keeps
    their public methods and this protocol in step)."""

    root: Path  # a local folder: the store itself (SQLite), or files next to a run (PostgreSQL)
    location: str  # where the store is, as it may be shown (a folder, or a URL without secrets)
    read_only: bool

    def close(self) -> None: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def snapshot(self) -> AbstractContextManager[None]: ...

    def create_run(
        self,
        run_id: str,
        manifest: Manifest,
        *,
        request_key: str | None = None,
        runner: dict[str, Any] | None = None,
        status: str = "queued",
    ) -> tuple[Run, bool]: ...

    def get_run(self, run_id: str) -> Run | None: ...

    def require_run(self, run_id: str) -> Run: ...

    def find_run_by_key(self, request_key: str) -> Run | None: ...

    def get_manifest(self, run_id: str) -> Manifest: ...

    def report_plan(self, run_id: str) -> ReportPlan: ...

    def plan_cases(self, run_id: str) -> Iterator[Case]: ...

    def plan_outline(self, run_id: str) -> PlanOutline: ...

    def get_runner(self, run_id: str) -> dict[str, Any] | None: ...

    def set_runner(self, run_id: str, runner: dict[str, Any]) -> None: ...

    def list_runs(
        self, *, limit: int = 50, offset: int = 0, status: str | None = None
    ) -> list[Run]: ...

    def iter_run_ids(self) -> Iterator[str]: ...

    def set_run_status(
        self, run_id: str, status: str, error: str | None = None, *, ended_at: str | None = None
    ) -> Run: ...

    def start_queued_run(self, run_id: str) -> bool: ...

    def progress_counts(self, run_id: str) -> ProgressCounts: ...

    def last_activity_at(self, run_id: str) -> str | None: ...

    def upsert_result(self, run_id: str, result: Row) -> None: ...

    def results(self, run_id: str, *, after: int = 0, limit: int | None = None) -> list[Row]: ...

    def insert_call(self, run_id: str, call: Row) -> None: ...

    def update_call(self, call_id: str, call: Row) -> None: ...

    def calls(
        self, run_id: str, *, active: bool = False, after: int = 0, limit: int | None = None
    ) -> list[Row]: ...

    def cell_rows(
        self,
        run_id: str,
        planned: Iterable[tuple[str, str]],
        *,
        page: int = ...,
        start: int = ...,
        outside: bool = ...,
    ) -> Iterator[CellRows]: ...

    def get_call(self, call_id: str) -> Row | None: ...

    def status_counts(self, run_id: str) -> dict[str, int]: ...

    def results_with_status(self, run_id: str, status: str) -> list[Row]: ...

    def count_calls(self, run_id: str) -> int: ...

    def append_event(self, run_id: str, kind: str, data: Row) -> int: ...

    def event_waiter(self) -> EventWaiter | None: ...

    def events(
        self,
        run_id: str,
        *,
        after: int = 0,
        limit: int = 1000,
        kinds: tuple[str, ...] | None = None,
    ) -> list[Row]: ...

    def result_statuses(self, run_id: str) -> dict[tuple[str, str], str]: ...

    def call_facts(self, run_id: str) -> list[tuple[Any, ...]]: ...

    def open_cell_calls(self, run_id: str) -> list[tuple[Any, ...]]: ...

    def call_costs(self, run_id: str) -> list[float | None]: ...

    def save_snapshot(self, run_id: str, kind: str, target_id: str, data: Row) -> None: ...

    def snapshots(self, run_id: str, kind: str) -> dict[str, Row]: ...

    def save_recipe(self, run_id: str, snapshot: Row) -> None: ...

    def recipes(self, run_id: str) -> dict[str, Row]: ...

    def claimed_cells(self, parent_run_id: str) -> set[tuple[str, str]]: ...

    def insert_claims(
        self, parent_run_id: str, child_run_id: str, cells: list[tuple[str, str]]
    ) -> None: ...

    def children(self, parent_run_id: str) -> list[Run]: ...

    def cancellation_requested(self, run_id: str) -> bool: ...

    def set_owner(self, run_id: str, owner: Row) -> None: ...

    def owner(self, run_id: str) -> Row | None: ...

    def save_shard(self, run_id: str, shard: Row) -> None: ...

    def shards(self, run_id: str) -> list[Row]: ...

    def owner_alive(self, owner: Row) -> bool | None: ...

    def active_runs(self) -> list[Run]: ...

    def register_process(self, run_id: str, process: Row) -> None: ...

    def cached_call(self, key: str) -> Row | None: ...

    def has_cached_calls(self, target_ids: Sequence[str]) -> bool: ...

    def cache_stats(self) -> Row: ...

    def clear_cache(self, older_than: str | None = None) -> int: ...

    def processes(self, run_id: str) -> list[Row]: ...

    def write_batch(self, writes: list[Write]) -> None: ...

    def run_dir(self, run_id: str) -> Path: ...

    def append_evidence(self, run_id: str, data: bytes) -> dict[str, Any]: ...

    def read_evidence(self, locator: Any) -> bytes: ...

    def close_evidence(self) -> None: ...
