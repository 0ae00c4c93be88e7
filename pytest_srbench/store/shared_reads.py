"""The ``Store`` reads whose SQL and logic are the same on SQLite and PostgreSQL, written once:
runs, their manifest, outline and runner, results, calls, events, recovery facts, snapshots,
claims, children, owners, shards and processes, plus where a run's local files go.

Each backend (``SqliteStore``, ``PostgresStore``) inherits ``SharedReads`` and supplies only
what differs between them:

- ``_all`` / ``_first``: a statement written with ``?`` placeholders, its rows as plain
  tuples (PostgreSQL swaps in ``%s``);
- ``_guard``: what a read of a run does first inside a write transaction (PostgreSQL locks
  the run's counter row, as SQLite's ``BEGIN IMMEDIATE`` already has; SQLite does nothing);
- ``_one_of``: a column matching any of some values (``IN (?, …)`` / ``= ANY(%s)``);
- ``_BYTE_ORDER``: the collation that orders text by bytes (PostgreSQL's ``"C"``; SQLite's
  default already does);
- ``_RESULT_ROW``: the column numbering result rows (SQLite's ``rowid``, PostgreSQL's
  ``row_id``);
- ``_loads``: how the run's runner and the result, event and process rows are decoded (the
  SQLite store has always read them with the standard library's ``json``, PostgreSQL with
  ``orjson``); everything else is decoded with ``orjson`` on both.

Writes, locks, leases and notifications are each backend's own; the connection per thread and
the transactions are ``ThreadConnections``'s (``store/connections.py``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

import orjson

from pytest_srbench.core.models import Case, Manifest, PlanOutline, ReportPlan, Run
from pytest_srbench.store import recovery_queries
from pytest_srbench.store.base import Row, StoreError
from pytest_srbench.store.shared_sql import CACHED_CALL, RUN_COLUMNS, SHARD_COLUMNS, run_of

OWNER_COLUMNS = ("run_id", "host", "pid", "process_started", "acquired_at")
SHARD_ROW = (*SHARD_COLUMNS, "data")  # the columns, then the rest of the record


class SharedReads(ABC):
    """The reads both store backends share (see the module docstring for what each backend
    supplies)."""

    root: Path
    location: str
    _BYTE_ORDER: ClassVar[str]
    _RESULT_ROW: ClassVar[str]
    # a run's frozen plan and its outline (the SQLite store keeps them apart from the run row)
    _MANIFEST_OF_RUN: ClassVar[str] = "SELECT manifest FROM runs WHERE id = ?"
    _OUTLINE_OF_RUN: ClassVar[str] = "SELECT coalesce(outline, manifest) FROM runs WHERE id = ?"

    @abstractmethod
    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row of a ``?``-placeholder statement as plain tuples, fetched at once."""

    @abstractmethod
    def _first(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of a ``?``-placeholder statement as a plain tuple (None: no row)."""

    @abstractmethod
    def _guard(self, run_id: str) -> None:
        """Inside a write transaction, serialize with the run's other writers before reading
        what the transaction decides on."""

    @abstractmethod
    def _loads(self, text: str) -> Any:
        """A runner, result, event or process row's JSON text decoded."""

    @abstractmethod
    def _one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """A condition that ``column`` is one of ``values``, and its arguments."""

    def _text(self, column: str) -> str:
        """``column`` ordered by bytes (the same order on both backends)."""
        return column + self._BYTE_ORDER

    # -- the response cache ------------------------------------------------------------
    def cached_call(self, key: str) -> Row | None:
        """The completed live call whose request had the cache key ``key`` (its receipt, with
        ``run_id``), or None: a miss."""
        row = self._first(CACHED_CALL, (key,))
        if row is None:
            return None
        call: Row = orjson.loads(row[0])
        call["run_id"] = row[1]
        return call

    def has_cached_calls(self, target_ids: Sequence[str]) -> bool:
        """Whether the cache index holds an entry for any of ``target_ids`` (a session whose
        every call would miss starts its simulator and HTTP client at once)."""
        if not target_ids:
            return False
        where, args = self._one_of("target_id", list(target_ids))
        return self._first(f"SELECT 1 FROM call_cache WHERE {where} LIMIT 1", args) is not None

    def cache_stats(self) -> Row:
        """The cache index's entries: how many, per target, the oldest and newest, and the
        cost the cached calls took when they were made live."""
        (count, oldest, newest) = self._first(
            "SELECT count(*), min(created_at), max(created_at) FROM call_cache"
        ) or (0, None, None)
        targets = {
            str(target): int(n)
            for target, n in self._all(
                "SELECT target_id, count(*) FROM call_cache GROUP BY target_id ORDER BY target_id"
            )
        }
        (cost,) = self._first(
            "SELECT sum(c.cost_usd) FROM call_cache k JOIN calls c ON c.id = k.call_id"
        ) or (None,)
        return {
            "entries": int(count or 0),
            "targets": targets,
            "oldest": oldest,
            "newest": newest,
            "live_cost_usd": float(cost) if cost is not None else 0.0,
        }

    # -- runs --------------------------------------------------------------------------
    def get_run(self, run_id: str) -> Run | None:
        self._guard(run_id)
        row = self._first("SELECT " + RUN_COLUMNS + " FROM runs WHERE id = ?", (run_id,))
        return run_of(row) if row else None

    def require_run(self, run_id: str) -> Run:
        run = self.get_run(run_id)
        if run is None:
            raise StoreError(f"no run {run_id!r} in {self.location}")
        return run

    def find_run_by_key(self, request_key: str) -> Run | None:
        row = self._first(
            "SELECT " + RUN_COLUMNS + " FROM runs WHERE request_key = ?", (request_key,)
        )
        return run_of(row) if row else None

    def get_manifest(self, run_id: str) -> Manifest:
        return Manifest.model_validate_json(self._manifest_text(run_id))

    def report_plan(self, run_id: str) -> ReportPlan:
        """The run's plan without its cases' content (``ReportPlan``): what a report reads."""
        from pytest_srbench.core.report.plan_text import report_plan_of  # (a report's only)

        return report_plan_of(self._manifest_text(run_id))

    def plan_cases(self, run_id: str) -> Iterator[Case]:
        """The run's planned cases whole, in the plan's order, read a batch at a time."""
        from pytest_srbench.core.report.plan_text import plan_cases  # (a report's only)

        return plan_cases(self._manifest_text(run_id))

    def _manifest_text(self, run_id: str) -> Any:
        row = self._first(self._MANIFEST_OF_RUN, (run_id,))
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.location}")
        return row[0]

    def plan_outline(self, run_id: str) -> PlanOutline:
        """The run's plan outline (hash, mode, targets, budget, planned cells) without validating
        every case: a fraction of ``get_manifest``'s cost on large plans."""
        row = self._first(self._OUTLINE_OF_RUN, (run_id,))
        # (a run written before outlines were kept falls back to its manifest)
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.location}")
        return PlanOutline.from_document(orjson.loads(row[0]))

    def get_runner(self, run_id: str) -> dict[str, Any] | None:
        row = self._first("SELECT runner FROM runs WHERE id = ?", (run_id,))
        runner: dict[str, Any] | None = self._loads(row[0]) if row and row[0] else None
        return runner

    def list_runs(
        self, *, limit: int = 50, offset: int = 0, status: str | None = None
    ) -> list[Run]:
        query = "SELECT " + RUN_COLUMNS + " FROM runs"
        args: list[Any] = []
        if status:
            query += " WHERE status = ?"
            args.append(status)
        query += f" ORDER BY {self._text('created_at')} DESC, {self._text('id')} DESC"
        query += " LIMIT ? OFFSET ?"
        args += [limit, offset]
        return [run_of(row) for row in self._all(query, args)]

    def iter_run_ids(self) -> Iterator[str]:
        for (run_id,) in self._all(f"SELECT id FROM runs ORDER BY {self._text('created_at')}"):
            yield run_id

    def last_activity_at(self, run_id: str) -> str | None:
        """When anything of the run was last recorded: the run row, a call, a result, an
        event or in-flight progress (what a stopped runner last did); None for no run."""
        stamps = self._first(
            "SELECT (SELECT updated_at FROM runs WHERE id = ?),"
            " (SELECT max(updated_at) FROM calls WHERE run_id = ?),"
            " (SELECT max(updated_at) FROM results WHERE run_id = ?),"
            " (SELECT max(at) FROM events WHERE run_id = ?),"
            " (SELECT max(last_activity_at) FROM call_progress WHERE run_id = ?)",
            (run_id,) * 5,
        )
        known = [stamp for stamp in stamps or () if stamp]
        return max(known, key=datetime.fromisoformat) if known else None

    def children(self, parent_run_id: str) -> list[Run]:
        rows = self._all(
            "SELECT " + RUN_COLUMNS + " FROM runs WHERE parent_run_id = ?"
            f" ORDER BY {self._text('created_at')}, {self._text('id')}",
            (parent_run_id,),
        )
        return [run_of(row) for row in rows]

    def active_runs(self) -> list[Run]:
        """Runs not yet in a terminal status (queued or running)."""
        rows = self._all(
            "SELECT " + RUN_COLUMNS + " FROM runs WHERE status IN ('queued', 'running')"
            f" ORDER BY {self._text('created_at')}"
        )
        return [run_of(row) for row in rows]

    def cancellation_requested(self, run_id: str) -> bool:
        self._guard(run_id)
        row = self._first(
            "SELECT 1 FROM events WHERE run_id = ? AND kind = 'cancellation_requested' LIMIT 1",
            (run_id,),
        )
        return row is not None

    # -- results -----------------------------------------------------------------------
    def results(self, run_id: str, *, after: int = 0, limit: int | None = None) -> list[Row]:
        number = self._RESULT_ROW
        query = f"SELECT {number}, data FROM results WHERE run_id = ? AND {number} > ?"
        if limit:
            query += f" ORDER BY {number}"
        else:
            query += f" ORDER BY {self._text('case_id')}, {self._text('target_id')}"
        args: list[Any] = [run_id, after]
        if limit:
            query += " LIMIT ?"
            args.append(limit)
        rows = []
        for row_number, data in self._all(query, args):
            result = self._loads(data)
            result["_row"] = row_number
            rows.append(result)
        return rows

    def status_counts(self, run_id: str) -> dict[str, int]:
        """Result rows per status."""
        rows = self._all(
            "SELECT status, count(*) FROM results WHERE run_id = ? GROUP BY status", (run_id,)
        )
        return {status: int(n) for status, n in rows}

    def results_with_status(self, run_id: str, status: str) -> list[Row]:
        self._guard(run_id)
        rows = self._all(
            "SELECT data FROM results WHERE run_id = ? AND status = ?"
            f" ORDER BY {self._text('case_id')}, {self._text('target_id')}",
            (run_id, status),
        )
        return [self._loads(data) for (data,) in rows]

    def result_statuses(self, run_id: str) -> dict[tuple[str, str], str]:
        """(case, target) -> status of every result row (no JSON decoding)."""
        rows = self._all(
            "SELECT case_id, target_id, status FROM results WHERE run_id = ?", (run_id,)
        )
        return {(case_id, target_id): status for case_id, target_id, status in rows}

    # -- calls -------------------------------------------------------------------------
    def calls(
        self, run_id: str, *, active: bool = False, after: int = 0, limit: int | None = None
    ) -> list[Row]:
        """Calls in journal order; ``active`` ones (still ``sent``) carry their live progress."""
        if active:
            self._guard(run_id)
            query = (
                "SELECT c.seq, c.data, p.bytes_received, p.last_activity_at, p.phase"
                " FROM calls c LEFT JOIN call_progress p ON p.call_id = c.id"
                " WHERE c.run_id = ? AND c.seq > ? AND c.status = 'sent'"
            )
        else:
            query = "SELECT seq, data, NULL, NULL, NULL FROM calls WHERE run_id = ? AND seq > ?"
        query += " ORDER BY seq"
        args: list[Any] = [run_id, after]
        if limit:
            query += " LIMIT ?"
            args.append(limit)
        rows = []
        for seq, data, received, last_activity, phase in self._all(query, args):
            call = orjson.loads(data)
            call["_seq"] = seq
            if active:
                call["bytes_received"] = received or 0
                call["last_activity_at"] = last_activity
                if phase:
                    call["phase"] = phase
            rows.append(call)
        return rows

    def get_call(self, call_id: str) -> Row | None:
        row = self._first("SELECT seq, data FROM calls WHERE id = ?", (call_id,))
        if row is None:
            return None
        data: Row = orjson.loads(row[1])
        data["_seq"] = row[0]
        return data

    def count_calls(self, run_id: str) -> int:
        row = self._first("SELECT count(*) FROM calls WHERE run_id = ?", (run_id,))
        return int(row[0]) if row else 0

    def call_facts(self, run_id: str) -> list[tuple[Any, ...]]:
        """Per call in journal order: id, case, target, status, usage known, cost, finish
        reason — plain columns, no JSON decoding."""
        return self._all(
            "SELECT id, case_id, target_id, status, usage_known, cost_usd, finish_reason"
            " FROM calls WHERE run_id = ? ORDER BY seq",
            (run_id,),
        )

    def open_cell_calls(self, run_id: str) -> list[tuple[Any, ...]]:
        """Per cell whose result is not completed: (case, target, calls, any still sent or
        sent_unknown, any unsettled or without known usage, cost or allowed finish reason)."""
        return self._all(recovery_queries.OPEN_CELL_CALLS, (run_id,))

    def call_costs(self, run_id: str) -> list[float | None]:
        """Every call's cost (None: unknown), in no particular order."""
        return [cost for (cost,) in self._all(recovery_queries.CALL_COSTS, (run_id,))]

    # -- events ------------------------------------------------------------------------
    def events(
        self,
        run_id: str,
        *,
        after: int = 0,
        limit: int = 1000,
        kinds: tuple[str, ...] | None = None,
    ) -> list[Row]:
        query = "SELECT seq, at, kind, data FROM events WHERE run_id = ? AND seq > ?"
        args: list[Any] = [run_id, after]
        if kinds is not None:
            condition, values = self._one_of("kind", kinds)
            query += " AND " + condition
            args += values
        rows = self._all(query + " ORDER BY seq LIMIT ?", (*args, limit))
        return [
            {"seq": seq, "at": at, "kind": kind, "data": self._loads(data)}
            for seq, at, kind, data in rows
        ]

    # -- run snapshots (router recipes, retrieval index descriptions) -------------------
    def snapshots(self, run_id: str, kind: str) -> dict[str, Row]:
        """target id -> snapshot of ``kind`` for the run."""
        rows = self._all(
            "SELECT target_id, data FROM run_snapshots WHERE run_id = ? AND kind = ?"
            f" ORDER BY {self._text('target_id')}",
            (run_id, kind),
        )
        return {target_id: orjson.loads(data) for target_id, data in rows}

    def recipes(self, run_id: str) -> dict[str, Row]:
        return self.snapshots(run_id, "recipe")

    # -- recovery claims, ownership, shards, processes ----------------------------------
    def claimed_cells(self, parent_run_id: str) -> set[tuple[str, str]]:
        rows = self._all(
            "SELECT case_id, target_id FROM recovery_claims WHERE parent_run_id = ?",
            (parent_run_id,),
        )
        return {(case_id, target_id) for case_id, target_id in rows}

    def owner(self, run_id: str) -> Row | None:
        self._guard(run_id)
        row = self._first(
            f"SELECT {', '.join(OWNER_COLUMNS)} FROM run_owners WHERE run_id = ?", (run_id,)
        )
        return dict(zip(OWNER_COLUMNS, row, strict=True)) if row else None

    def shards(self, run_id: str) -> list[Row]:
        """The shard rows of a run, by shard number ([] for a run that is not sharded)."""
        self._guard(run_id)
        rows = self._all(
            f"SELECT {', '.join(SHARD_ROW)} FROM run_shards WHERE run_id = ? ORDER BY shard",
            (run_id,),
        )
        result = []
        for row in rows:
            record = dict(zip(SHARD_ROW, row, strict=True))
            record["pid"] = int(record["pid"])
            record.update(orjson.loads(record.pop("data")))
            result.append(record)
        return result

    def processes(self, run_id: str) -> list[Row]:
        rows = self._all("SELECT data FROM processes WHERE run_id = ?", (run_id,))
        return [self._loads(data) for (data,) in rows]

    # -- files next to a run -------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        """The local folder of a run: its evidence packs (SQLite) and the files written next
        to it on this host (reports, simulator logs)."""
        return self.root / "runs" / run_id
