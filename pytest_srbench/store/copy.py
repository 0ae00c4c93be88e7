"""``srbench store copy``: runs moved between stores (SQLite ⇄ PostgreSQL) losslessly.

A run is read whole (``export_run``): its row, results, calls and events with their numbers,
processes, owner, recovery claims it hands out, accounting corrections in order, in-flight
progress, snapshots, shards and every evidence byte its calls point at. ``import_run`` writes it in one
transaction of the destination: the JSON and time stamps exactly as stored, call and event
numbers kept (in a SQLite store, whose numbers are store-wide, they are renumbered in the same
order only when another run already uses them), evidence under the same locators (a pack file
slice in a folder store, a ``bytea`` row in a database). A run already in the destination is
left alone when it is identical, and refused otherwise: nothing in the destination is
overwritten.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import orjson

from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.store.dialect import execute, is_postgres, rows
from pytest_srbench.store.postgres import PostgresStore
from pytest_srbench.store.sqlite import RUN_MANIFEST_SQL, SqliteStore

Row = dict[str, Any]
RUN_FIELDS = ("id, request_key, status, created_at, updated_at, plan_sha256, manifest, error,"
              " parent_run_id, runner, outline")  # fmt: skip
# a SQLite store keeps a run's plan apart from its row (run_plans; in the row before schema 2)
SQLITE_RUN = (
    "SELECT r.id, r.request_key, r.status, r.created_at, r.updated_at, r.plan_sha256,"
    f" {RUN_MANIFEST_SQL} AS manifest, r.error, r.parent_run_id, r.runner,"
    " coalesce(p.outline, r.outline) AS outline"
    " FROM runs r LEFT JOIN run_plans p ON p.run_id = r.id WHERE r.id = ?"
)
CALL_FIELDS = ("seq, id, case_id, target_id, role, status, data, updated_at, usage_known,"
               " cost_usd, finish_reason")  # fmt: skip


@dataclass
class RunDump:
    """Everything one run has in a store, in the store's own order."""

    run: Row
    results: list[Row]
    calls: list[Row]
    events: list[Row]
    processes: list[Row]
    owner: list[Row]
    claims: list[Row]
    corrections: list[Row]
    progress: list[Row]
    snapshots: list[Row]
    shards: list[Row] = field(default_factory=list)
    evidence: dict[tuple[str, int], bytes] = field(default_factory=dict)

    def comparable(self) -> RunDump:
        """The dump without call and event numbers (their order stays): what two stores
        holding the same run agree on even when a SQLite store had to renumber."""
        return replace(
            self,
            calls=[{k: v for k, v in c.items() if k != "seq"} for c in self.calls],
            events=[{k: v for k, v in e.items() if k != "seq"} for e in self.events],
        )


def _locators(calls: Iterable[Row]) -> Iterable[Any]:
    for call in calls:
        locator = orjson.loads(call["data"]).get("evidence")
        if (isinstance(locator, dict) and int(locator.get("length", 0)) > 0) or isinstance(
            locator, str
        ):
            yield locator


def _key(locator: Any) -> tuple[str, int]:
    if isinstance(locator, str):
        return locator, 0
    return str(locator["pack"]), int(locator["offset"])


def export_run(store: Store, run_id: str) -> RunDump:
    """Read all of one run (inside one snapshot, so the parts agree)."""
    order = "row_id" if is_postgres(store) else "rowid"
    with store.snapshot():
        run_row = (
            f"SELECT {RUN_FIELDS} FROM runs WHERE id = ?" if is_postgres(store) else SQLITE_RUN
        )
        found = rows(store, run_row, (run_id,))
        if not found:
            raise StoreError(f"no run {run_id!r} in the source store")

        def of(sql: str) -> list[Row]:
            return rows(store, sql, (run_id,))

        calls = of(f"SELECT {CALL_FIELDS} FROM calls WHERE run_id = ? ORDER BY seq")
        dump = RunDump(
            run=found[0],
            results=of(
                "SELECT case_id, target_id, status, data, updated_at FROM results"
                f" WHERE run_id = ? ORDER BY {order}"
            ),
            calls=calls,
            events=of("SELECT seq, at, kind, data FROM events WHERE run_id = ? ORDER BY seq"),
            processes=of(
                "SELECT process_id, data FROM processes WHERE run_id = ? ORDER BY process_id"
            ),
            owner=of(
                "SELECT host, pid, process_started, acquired_at FROM run_owners WHERE run_id = ?"
            ),
            claims=of(
                "SELECT case_id, target_id, child_run_id FROM recovery_claims"
                " WHERE parent_run_id = ? ORDER BY case_id, target_id"
            ),
            corrections=of(
                "SELECT id, created_at, evidence_sha256, data FROM accounting_corrections"
                " WHERE run_id = ? ORDER BY seq"
            ),
            progress=of(
                "SELECT call_id, bytes_received, last_activity_at, phase FROM call_progress"
                " WHERE run_id = ? ORDER BY call_id"
            ),
            snapshots=of(
                "SELECT kind, target_id, data FROM run_snapshots WHERE run_id = ?"
                " ORDER BY kind, target_id"
            ),
            shards=of(
                "SELECT shard, shards, state, host, pid, process_started, started_at, ended_at,"
                " data FROM run_shards WHERE run_id = ? ORDER BY shard"
            ),
        )
        for locator in _locators(calls):
            dump.evidence[_key(locator)] = store.read_evidence(locator)
    return dump


def _insert(store: Store, table: str, row: Row) -> None:
    columns = ", ".join(f'"{name}"' for name in row)
    marks = ", ".join("?" for _ in row)
    execute(store, f"INSERT INTO {table}({columns}) VALUES ({marks})", list(row.values()))


def _numbers_taken(store: Store, table: str, seqs: list[int]) -> bool:
    """Whether a SQLite store already uses any of these store-wide numbers."""
    for start in range(0, len(seqs), 500):
        chunk = seqs[start : start + 500]
        marks = ", ".join("?" for _ in chunk)
        if rows(store, f"SELECT 1 FROM {table} WHERE seq IN ({marks}) LIMIT 1", chunk):
            return True
    return False


def _write_evidence(store: Store, run_id: str, evidence: dict[tuple[str, int], bytes]) -> None:
    if isinstance(store, PostgresStore):
        for (pack, offset), data in evidence.items():
            execute(
                store,
                'INSERT INTO evidence(pack, "offset", run_id, data) VALUES (?, ?, ?, ?)'
                ' ON CONFLICT (pack, "offset") DO NOTHING',
                (pack, offset, run_id, data),
            )
        return
    for (pack, offset), data in sorted(evidence.items()):
        path = store.root / pack
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            os.pwrite(fd, data, offset)
            os.fsync(fd)
        finally:
            os.close(fd)


def import_run(store: Store, dump: RunDump) -> bool:
    """Write a run into ``store``; False when an identical run is already there (a
    different one with the same id is a ``StoreError``)."""
    run_id = str(dump.run["id"])
    if store.get_run(run_id) is not None:
        if export_run(store, run_id).comparable() == dump.comparable():
            return False
        raise StoreError(
            f"run {run_id} is already in the destination with different contents; "
            "nothing was copied for it (a copy never overwrites a run)"
        )
    sqlite = isinstance(store, SqliteStore)
    keep_calls = not (sqlite and _numbers_taken(store, "calls", [c["seq"] for c in dump.calls]))
    keep_events = not (sqlite and _numbers_taken(store, "events", [e["seq"] for e in dump.events]))
    with store.transaction():
        _write_evidence(store, run_id, dump.evidence)  # before the rows that point at it
        if sqlite:  # the plan in run_plans (see SqliteStore.create_run)
            plan = {"run_id": run_id, "manifest": dump.run["manifest"],
                    "outline": dump.run["outline"]}  # fmt: skip
            _insert(store, "runs", {**dump.run, "manifest": "", "outline": None})
            _insert(store, "run_plans", plan)
        else:
            _insert(store, "runs", dump.run)
        for result in dump.results:
            _insert(store, "results", {"run_id": run_id, **result})
        for call in dump.calls:
            row = {"run_id": run_id, **call}
            if not keep_calls:
                del row["seq"]
            _insert(store, "calls", row)
        for event in dump.events:
            row = {"run_id": run_id, **event}
            if not keep_events:
                del row["seq"]
            _insert(store, "events", row)
        for table, items in (
            ("processes", dump.processes),
            ("run_owners", dump.owner),
            ("call_progress", dump.progress),
            ("run_snapshots", dump.snapshots),
            ("run_shards", dump.shards),
            ("accounting_corrections", dump.corrections),
        ):
            for item in items:
                _insert(store, table, {"run_id": run_id, **item})
        for claim in dump.claims:
            _insert(store, "recovery_claims", {"parent_run_id": run_id, **claim})
        if not sqlite:  # the run's next numbers follow the copied ones
            execute(
                store,
                "INSERT INTO run_counters(run_id, events, calls) VALUES (?, ?, ?)"
                " ON CONFLICT (run_id) DO UPDATE SET events = excluded.events,"
                " calls = excluded.calls",
                (run_id, max((e["seq"] for e in dump.events), default=0),
                 max((c["seq"] for c in dump.calls), default=0)),
            )  # fmt: skip
    return True


@dataclass(frozen=True)
class CopyOutcome:
    copied: list[str]
    identical: list[str]


def copy_runs(source: Store, destination: Store, run_ids: list[str] | None = None) -> CopyOutcome:
    """Copy ``run_ids`` (default: every run, oldest first) from ``source`` to
    ``destination``; stops at the first run that would overwrite a different one (the runs
    copied before it stay copied: each run is its own transaction)."""
    if destination.read_only:
        raise StoreError("the destination store is read-only")
    wanted = run_ids if run_ids else list(source.iter_run_ids())
    copied: list[str] = []
    identical: list[str] = []
    for run_id in dict.fromkeys(wanted):
        dump = export_run(source, run_id)
        (copied if import_run(destination, dump) else identical).append(run_id)
    return CopyOutcome(copied, identical)
