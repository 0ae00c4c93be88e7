"""SQLite backend of the store: one ``journal.sqlite3`` in WAL mode under the store folder;
raw stream evidence in append-only pack files (``store/evidence.py``) addressed by locators
on the call rows. Every SQL statement on the journal lives in this package: the reads and
statements both backends share in ``store/shared_reads.py`` and ``store/shared_sql.py``, what
is SQLite's own (schema, pragmas, transactions, call and event writes, claims) here.

Each thread uses its own connection. Writes happen in ``BEGIN IMMEDIATE`` transactions
with a generous busy timeout (``SRBENCH_BUSY_TIMEOUT_S``, default 60 s), so several processes
(xdist workers) can share one store. A store the process cannot write is opened read-only:
reading works, and a write says the store is read-only. Every SQLite failure a user can cause
(a read-only or locked store, a folder that cannot be created) is a one-line ``StoreError``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_srbench.core.models import Manifest, Run
from pytest_srbench.core.plan.build import manifest_json_chunks, outline_json
from pytest_srbench.core.report.rows import CellRows
from pytest_srbench.store import cell_reader, shared_sql
from pytest_srbench.store.base import (
    EventWaiter,
    ProgressCounts,
    Row,
    StoreConflict,
    StoreError,
    StoreUnavailable,
    check_same_plan,
    now_iso,
)
from pytest_srbench.store.cell_reader import PAGE as CELL_PAGE
from pytest_srbench.store.connections import ThreadConnections
from pytest_srbench.store.evidence import EvidencePacks
from pytest_srbench.store.liveness import pid_alive
from pytest_srbench.store.shared_reads import SharedReads
from pytest_srbench.store.writes import FinishCall, Write, by_kind

SCHEMA_VERSION = 3  # 2: a run's plan and outline live in run_plans, not in its row;
# 3: the response cache's index (call_cache)
DB_NAME = "journal.sqlite3"
BUSY_TIMEOUT_ENV = "SRBENCH_BUSY_TIMEOUT_S"
DEFAULT_BUSY_TIMEOUT_S = 60.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    request_key TEXT UNIQUE,
    status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    plan_sha256 TEXT NOT NULL,
    manifest TEXT NOT NULL,
    error TEXT,
    parent_run_id TEXT,
    runner TEXT,
    outline TEXT
);
CREATE INDEX IF NOT EXISTS runs_created ON runs(created_at);
CREATE TABLE IF NOT EXISTS run_plans (
    run_id TEXT PRIMARY KEY,
    outline TEXT,
    manifest TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    status TEXT NOT NULL,
    data TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (run_id, case_id, target_id)
);
CREATE TABLE IF NOT EXISTS calls (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    run_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    role TEXT NOT NULL,
    status TEXT NOT NULL,
    data TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    usage_known INTEGER NOT NULL DEFAULT 0,
    cost_usd REAL,
    finish_reason TEXT
);
CREATE INDEX IF NOT EXISTS results_status ON results(run_id, case_id, target_id, status);
CREATE INDEX IF NOT EXISTS calls_run ON calls(run_id, seq);
CREATE INDEX IF NOT EXISTS calls_run_status ON calls(run_id, status);
CREATE INDEX IF NOT EXISTS calls_cell ON calls(run_id, case_id, target_id, seq);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_run ON events(run_id, seq);
CREATE INDEX IF NOT EXISTS events_kind ON events(run_id, kind, seq);
CREATE TABLE IF NOT EXISTS processes (
    run_id TEXT NOT NULL,
    process_id TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, process_id)
);
CREATE TABLE IF NOT EXISTS run_owners (
    run_id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    process_started TEXT,
    acquired_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS recovery_claims (
    parent_run_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    child_run_id TEXT NOT NULL,
    PRIMARY KEY (parent_run_id, case_id, target_id)
);
CREATE INDEX IF NOT EXISTS recovery_claims_child ON recovery_claims(child_run_id);
CREATE TABLE IF NOT EXISTS accounting_corrections (
    id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    evidence_sha256 TEXT NOT NULL,
    data TEXT NOT NULL,
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    UNIQUE (run_id, evidence_sha256)
);
CREATE TABLE IF NOT EXISTS call_progress (
    call_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    bytes_received INTEGER NOT NULL,
    last_activity_at TEXT NOT NULL,
    phase TEXT
);
CREATE INDEX IF NOT EXISTS call_progress_run ON call_progress(run_id);
CREATE TABLE IF NOT EXISTS run_shards (
    run_id TEXT NOT NULL,
    shard INTEGER NOT NULL,
    shards INTEGER NOT NULL,
    state TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    process_started TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, shard)
);
CREATE TABLE IF NOT EXISTS run_snapshots (
    run_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    target_id TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, kind, target_id)
);
CREATE TABLE IF NOT EXISTS call_cache (
    key TEXT PRIMARY KEY,
    call_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    target_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS call_cache_created ON call_cache(created_at);
"""

# Columns added after the first stores were written: (table, column, statements that add and
# fill it). The accounting facts recovery reads per call are columns as well as part of
# ``data``, and each run keeps its plan outline, so a 100,000-cell recovery plan reads no JSON
# blobs (see ``call_facts`` and ``plan_outline``).
ADDED_COLUMNS = (
    ("calls", "cost_usd", (
        "ALTER TABLE calls ADD COLUMN usage_known INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE calls ADD COLUMN cost_usd REAL",
        "ALTER TABLE calls ADD COLUMN finish_reason TEXT",
        "UPDATE calls SET usage_known = coalesce(json_type(data, '$.usage') = 'object', 0),"
        " cost_usd = CASE WHEN json_type(data, '$.cost_usd') IN ('integer', 'real')"
        " THEN json_extract(data, '$.cost_usd') END,"
        " finish_reason = json_extract(data, '$.finish_reason')",
    )),
    ("runs", "outline", ("ALTER TABLE runs ADD COLUMN outline TEXT",)),
)  # fmt: skip
# the known spend of a run's calls: a ``replayed`` call (response cache, offline replay) spent
# nothing, whatever cost its row carries
SPEND = (
    "SELECT COALESCE(SUM(CASE WHEN status = 'replayed' THEN 0"
    " ELSE json_extract(data, '$.cost_usd') END), 0) AS s FROM calls WHERE run_id = ?"
)
INSERT_CALL = (
    "INSERT INTO calls(id, run_id, case_id, target_id, role, status, data, updated_at,"
    " usage_known, cost_usd, finish_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _insert_call_args(run_id: str, call: Mapping[str, Any], now: str) -> tuple[Any, ...]:
    return (call["id"], run_id, call["case_id"], call["target_id"], call["role"],
            call["status"], shared_sql.dumps(call), now, *shared_sql.accounting(call))  # fmt: skip


def busy_timeout_s() -> float:
    """How long a write waits for another process's lock: ``SRBENCH_BUSY_TIMEOUT_S`` or 60."""
    text = os.environ.get(BUSY_TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_BUSY_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86400:
        raise StoreError(f"{BUSY_TIMEOUT_ENV} must be a number of seconds in 0..86400")
    return value


def _writable(root: Path, db_path: Path) -> bool:
    """Whether this process may write an existing store (its folder and its database)."""
    return os.access(root, os.W_OK) and os.access(db_path, os.W_OK)


# A run's manifest as its readers read it: from run_plans, where it is written as a blob (see
# ``SqliteStore._insert_plan``; SQLite's JSON functions would take a blob for JSONB), or from
# the run's row (schema 1). Queries join ``runs r LEFT JOIN run_plans p``.
RUN_MANIFEST_SQL = "coalesce(CAST(p.manifest AS TEXT), r.manifest)"


class SqliteStore(ThreadConnections[sqlite3.Connection], SharedReads):
    """The default store: SQLite (WAL, synchronous=FULL) plus evidence files. The connection
    per thread and the transactions are ``ThreadConnections``'s (``store/connections.py``), the
    reads both backends share ``SharedReads``'s (``store/shared_reads.py``)."""

    _BEGIN_WRITE = "BEGIN IMMEDIATE"  # takes the write lock at once
    _BYTE_ORDER = ""  # SQLite's default collation already orders text by bytes
    _RESULT_ROW = "rowid"
    # a run from before run_plans (schema 1) keeps its plan in its own row
    _MANIFEST_OF_RUN = (
        f"SELECT {RUN_MANIFEST_SQL} FROM runs r"
        " LEFT JOIN run_plans p ON p.run_id = r.id WHERE r.id = ?"
    )
    _OUTLINE_OF_RUN = (
        f"SELECT coalesce(p.outline, r.outline, {RUN_MANIFEST_SQL}) FROM runs r"
        " LEFT JOIN run_plans p ON p.run_id = r.id WHERE r.id = ?"
    )

    def __init__(self, root: Path, *, read_only: bool = False) -> None:
        super().__init__()
        self.root = Path(root)
        self.location = str(self.root)
        self.db_path = self.root / DB_NAME
        self._evidence = EvidencePacks(self.root)
        self.busy_timeout_s = busy_timeout_s()
        self.read_only = read_only or (
            self.db_path.is_file() and not _writable(self.root, self.db_path)
        )
        if self.read_only:
            if not self.db_path.is_file():
                raise StoreError(f"no store at {self.root}")
        else:
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise StoreError(
                    f"cannot create the store {self.root}: {error.strerror or error}"
                ) from None
            with contextlib.suppress(OSError):
                os.chmod(self.root, 0o700)
        self._migrate()

    # -- connections -------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        timeout = self.busy_timeout_s
        try:
            if self.read_only:
                connection = self._connect_read_only()
            else:
                connection = sqlite3.connect(
                    self.db_path, timeout=timeout, isolation_level=None, check_same_thread=False
                )
            connection.row_factory = sqlite3.Row
            if self.read_only:
                connection.execute("PRAGMA query_only=ON")
            else:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=FULL")
            connection.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
            connection.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as error:
            raise self.store_error(error) from None
        return connection

    def _connect_read_only(self) -> sqlite3.Connection:
        """A read-only connection. In a folder this process cannot write, SQLite cannot make
        the WAL index (``-shm``) a reader needs; with no WAL content left to read, the
        database file alone is the whole store and is opened as immutable."""
        uri = self.db_path.absolute().as_uri()

        def connect(query: str) -> sqlite3.Connection:
            return sqlite3.connect(
                uri + query,
                uri=True,
                timeout=self.busy_timeout_s,
                isolation_level=None,
                check_same_thread=False,
            )

        connection = connect("?mode=ro")
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError as error:
            connection.close()
            wal = self.db_path.with_name(DB_NAME + "-wal")
            if not str(getattr(error, "sqlite_errorname", "")).startswith(
                ("SQLITE_READONLY", "SQLITE_CANTOPEN")
            ):
                raise
            if wal.exists() and wal.stat().st_size > 0:
                raise StoreError(
                    f"the store {self.root} is read-only and holds changes not yet merged into "
                    "its database (a -wal file); open it once with write access"
                ) from None
            connection = connect("?mode=ro&immutable=1")
        return connection

    def store_error(self, error: Exception) -> Exception:
        """The one-line ``StoreError`` for a failure the user can cause (locked, read-only,
        unopenable store); any other SQLite error is returned unchanged (a bug to see)."""
        name = str(getattr(error, "sqlite_errorname", "") or "")
        text = str(error)
        if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in text:
            return StoreUnavailable(
                f"the store {self.root} is locked by another process (waited "
                f"{self.busy_timeout_s:g} s for it); try again when that process is done, or "
                f"wait longer with {BUSY_TIMEOUT_ENV}=SECONDS",
                "locked",
            )
        if name.startswith(("SQLITE_FULL", "SQLITE_IOERR_WRITE")) or "disk is full" in text:
            # a file that cannot grow (ENOSPC is SQLITE_FULL; a size limit, EFBIG, a failed write)
            return StoreUnavailable(
                f"disk full: the store {self.root} cannot grow ({text})", "disk full"
            )
        if name.startswith("SQLITE_READONLY") or "readonly database" in text:
            return StoreError(
                f"the store {self.root} is read-only: listing and reading runs work, but this "
                "needs to write to it (use a writable copy, or --store / --srbench-store DIR)"
            )
        if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or (
            "file is not a database" in text or "disk image is malformed" in text
        ):
            return StoreError(
                f"the store file {self.db_path} is damaged or truncated ({text}): move it "
                "aside (or restore it from a copy) and run again to start a new store"
            )
        if name.startswith(("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_IOERR", "SQLITE_FULL")) or (
            "unable to open database" in text
        ):
            return StoreError(f"the store {self.root} cannot be used: {text}")
        return error

    def _tuples(self) -> sqlite3.Cursor:
        cursor = self.db.cursor()
        cursor.row_factory = None
        return cursor

    def _all(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._tuples().execute(sql, tuple(args)).fetchall()

    def _first(self, sql: str, args: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self._tuples().execute(sql, tuple(args)).fetchone()
        return row

    def _guard(self, run_id: str) -> None:
        """Nothing: a write transaction (``BEGIN IMMEDIATE``) already holds the write lock."""

    def _loads(self, text: str) -> Any:
        return json.loads(text)

    def _one_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        return f"{column} IN ({', '.join('?' for _ in values)})", list(values)

    # -- transactions (``ThreadConnections``) ----------------------------------------------
    @property
    def _driver_error(self) -> type[Exception]:
        return sqlite3.OperationalError

    def _in_transaction(self, connection: sqlite3.Connection) -> bool:
        return connection.in_transaction

    def _rollback(self, connection: sqlite3.Connection) -> None:
        if connection.in_transaction:
            connection.execute("ROLLBACK")

    def _begin_snapshot(self, connection: sqlite3.Connection) -> None:
        """A read transaction, which sees the journal as it was at its first read while other
        processes go on writing."""
        try:
            connection.execute("BEGIN")
        except sqlite3.OperationalError as error:
            raise self.store_error(error) from None

    def _end_snapshot(self, connection: sqlite3.Connection) -> None:
        if connection.in_transaction:
            connection.execute("COMMIT")

    def _migrate(self) -> None:
        """Create or upgrade the schema. An up-to-date store is only read, so opening it
        never waits for another process's write lock; a read-only store is only checked."""
        try:
            if self.read_only:
                self._check_schema()
                return
            if not os.path.exists(self.db_path):
                try:
                    fd = os.open(self.db_path, os.O_CREAT | os.O_WRONLY, 0o600)
                except OSError as error:
                    raise StoreError(
                        f"cannot create the store {self.root}: {error.strerror or error}"
                    ) from None
                os.close(fd)
            self.db.executescript(SCHEMA)
            for table, column, statements in ADDED_COLUMNS:
                present = {row["name"] for row in self.db.execute(f"PRAGMA table_info({table})")}
                if column not in present:  # a store written before the column existed
                    with self.transaction():
                        for statement in statements:
                            self.db.execute(statement)
            version = self._check_schema()
            if version is None or version < SCHEMA_VERSION:  # (the tables are there now)
                with self.transaction():
                    self.db.execute(
                        "INSERT INTO meta(key, value) VALUES ('schema_version', ?)"
                        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                        (str(SCHEMA_VERSION),),
                    )
        except sqlite3.OperationalError as error:
            raise self.store_error(error) from None

    def _columns(self, table: str) -> set[str]:
        return {row["name"] for row in self.db.execute(f"PRAGMA table_info({table})")}

    def _check_schema(self) -> int | None:
        """The store's schema version (None before it is written); a newer one is an error,
        and so is a read-only store that would need an upgrade."""
        tables = {row["name"] for row in self.db.execute("SELECT name FROM sqlite_master")}
        row = (
            self.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if "meta" in tables
            else None
        )
        if row is not None and int(row["value"]) > SCHEMA_VERSION:
            raise StoreError(
                f"{self.db_path}: store schema version {row['value']} is newer than this "
                f"pytest-srbench supports ({SCHEMA_VERSION}); upgrade pytest-srbench"
            )
        if self.read_only:
            missing = [
                f"{table}.{column}"
                for table, column, _ in ADDED_COLUMNS
                if table not in tables or column not in self._columns(table)
            ]
            if "run_plans" not in tables:
                missing.append("run_plans")
            if row is None or missing:
                raise StoreError(
                    f"the store {self.root} is read-only and was written by an older "
                    "pytest-srbench; open it once with write access to upgrade it"
                )
        return None if row is None else int(row["value"])

    # -- runs --------------------------------------------------------------------------
    def create_run(
        self,
        run_id: str,
        manifest: Manifest,
        *,
        request_key: str | None = None,
        runner: dict[str, Any] | None = None,
        status: str = "queued",
    ) -> tuple[Run, bool]:
        """Insert a run with its frozen manifest; an existing id or key with the same plan is
        returned unchanged (created = False), a different plan is an error."""
        with self.transaction():
            existing = self.db.execute(
                "SELECT " + shared_sql.RUN_COLUMNS + " FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            if existing is None and request_key is not None:
                existing = self.db.execute(
                    "SELECT " + shared_sql.RUN_COLUMNS + " FROM runs WHERE request_key = ?",
                    (request_key,),
                ).fetchone()
            if existing is not None:
                check_same_plan(existing, run_id, request_key, manifest.plan_sha256)
                return shared_sql.run_of(existing), False
            now = now_iso()
            parent = (manifest.recovery or {}).get("parent_run_id")
            # the plan apart from the run's row: SQLite rewrites a whole row on any update,
            # and a run's status and runner change several times (a 100,000-case plan is
            # 35 MB of text, read and written again each time)
            self.db.execute(
                "INSERT INTO runs(id, request_key, status, created_at, updated_at, plan_sha256,"
                " manifest, parent_run_id, runner) VALUES (?, ?, ?, ?, ?, ?, '', ?, ?)",
                (
                    run_id,
                    request_key,
                    status,
                    now,
                    now,
                    manifest.plan_sha256,
                    parent,
                    shared_sql.dumps(runner) if runner is not None else None,
                ),
            )
            self._insert_plan(run_id, manifest)
            self.append_event(run_id, "created", {"plan_sha256": manifest.plan_sha256})
            row = self.db.execute(
                "SELECT " + shared_sql.RUN_COLUMNS + " FROM runs WHERE id = ?", (run_id,)
            ).fetchone()
            return shared_sql.run_of(row), True

    def _insert_plan(self, run_id: str, manifest: Manifest) -> None:
        """The run's plan written into its row in pieces (``sqlite3`` binds a text parameter
        by copying it, and the row is built in memory from it: a 35 MB plan cost three times
        its size at once). Its place is reserved as a zero blob, which SQLite does not
        allocate when it is the row's last column, then filled a megabyte at a time; its
        readers cast it back to text."""
        chunks = list(manifest_json_chunks(manifest))
        cursor = self.db.execute(
            "INSERT INTO run_plans(run_id, outline, manifest) VALUES (?, ?, zeroblob(?))",
            (run_id, outline_json(manifest), sum(map(len, chunks))),
        )
        assert cursor.lastrowid is not None
        with self.db.blobopen("run_plans", "manifest", cursor.lastrowid) as blob:
            for chunk in chunks:
                blob.write(chunk)

    def set_runner(self, run_id: str, runner: dict[str, Any]) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE runs SET runner = ? WHERE id = ?", (shared_sql.dumps(runner), run_id)
            )

    def set_run_status(
        self, run_id: str, status: str, error: str | None = None, *, ended_at: str | None = None
    ) -> Run:
        """Move a run to ``status`` (appending the status event) and set ``updated_at`` (the
        end of its wall time) to ``ended_at``, default now."""
        with self.transaction():
            run = self.require_run(run_id)
            self.db.execute(
                "UPDATE runs SET status = ?, updated_at = ?, error = COALESCE(?, error) WHERE id = ?",
                (status, ended_at or now_iso(), error, run_id),
            )
            if status != run.status:
                self.append_event(run_id, status, {"error": error} if error else {})
            return self.require_run(run_id)

    def start_queued_run(self, run_id: str) -> bool:
        """Move a ``queued`` run to ``running`` (with its status event); False when another
        process of the run already did, or the run is past ``queued``."""
        with self.transaction():
            moved = self.db.execute(
                "UPDATE runs SET status = 'running', updated_at = ? WHERE id = ? AND status = 'queued'",
                (now_iso(), run_id),
            ).rowcount
            if moved:
                self.append_event(run_id, "running", {})
        return bool(moved)

    def progress_counts(self, run_id: str) -> ProgressCounts:
        """Result rows per status, calls in flight and the known spend so far, for a run in
        progress (every process of a distributed run writes here, so any of them can read).
        A ``replayed`` call (a cache hit, or a call of an offline replay, which keeps its
        source's cost as the report's estimate) spent nothing."""
        in_flight = self.db.execute(
            "SELECT COUNT(*) AS n FROM calls WHERE run_id = ? AND status = 'sent'", (run_id,)
        ).fetchone()["n"]
        spend = self.db.execute(SPEND, (run_id,)).fetchone()["s"]
        return ProgressCounts(self.status_counts(run_id), int(in_flight), float(spend or 0))

    # -- results -----------------------------------------------------------------------
    def upsert_result(self, run_id: str, result: Row) -> None:
        """Write the one row of a cell (insert or replace its data)."""
        self.db.execute(shared_sql.UPSERT_RESULT, shared_sql.result_args(run_id, result, now_iso()))

    # -- calls -------------------------------------------------------------------------
    def insert_call(self, run_id: str, call: Row) -> None:
        """Journal a call (normally with status ``sent``) before its request leaves."""
        self.db.execute(INSERT_CALL, _insert_call_args(run_id, call, now_iso()))

    def update_call(self, call_id: str, call: Row) -> None:
        """Replace a call's receipt (status and data) once it finished."""
        self.db.execute(
            shared_sql.UPDATE_CALL, shared_sql.update_call_args(call_id, call, now_iso())
        )

    def cell_rows(
        self,
        run_id: str,
        planned: Iterable[tuple[str, str]],
        *,
        page: int = CELL_PAGE,
        start: int = 0,
        outside: bool = True,
    ) -> Iterator[CellRows]:
        """Every planned (case, target) of a run in planned order with its result row and its
        calls (journal order), then the rows outside the plan; read ``page`` cells at a time
        inside one snapshot (``store/cell_reader.py``). ``start``: the first ``start`` planned
        cells are left out (they still belong to the plan); ``outside=False``: no rows outside
        the plan."""
        return cell_reader.cell_rows(self, run_id, planned, page=page, start=start, outside=outside)

    # -- events ------------------------------------------------------------------------
    def append_event(self, run_id: str, kind: str, data: Row) -> int:
        cursor = self.db.execute(
            "INSERT INTO events(run_id, at, kind, data) VALUES (?, ?, ?, ?)",
            (run_id, now_iso(), kind, shared_sql.dumps(data)),
        )
        return int(cursor.lastrowid or 0)

    def event_waiter(self) -> EventWaiter | None:
        """None: SQLite has no notifications, a reader of events polls."""
        return None

    # -- run snapshots (router recipes, retrieval index descriptions) -------------------
    def save_snapshot(self, run_id: str, kind: str, target_id: str, data: Row) -> None:
        """Keep what a target looked like when the run was created (a router recipe, a
        retrieval index); the first one written stays (a run never borrows a later one)."""
        self.db.execute(
            "INSERT OR IGNORE INTO run_snapshots(run_id, kind, target_id, data) VALUES (?, ?, ?, ?)",
            (run_id, kind, target_id, shared_sql.dumps(data)),
        )

    def save_recipe(self, run_id: str, snapshot: Row) -> None:
        self.save_snapshot(run_id, "recipe", snapshot["target_id"], snapshot)

    # -- recovery claims ---------------------------------------------------------------
    def insert_claims(
        self, parent_run_id: str, child_run_id: str, cells: list[tuple[str, str]]
    ) -> None:
        """Claim cells for a child (``StoreConflict`` when one is taken)."""
        try:
            self.db.executemany(
                "INSERT INTO recovery_claims(parent_run_id, case_id, target_id, child_run_id)"
                " VALUES (?, ?, ?, ?)",
                [(parent_run_id, case_id, target_id, child_run_id) for case_id, target_id in cells],
            )
        except sqlite3.IntegrityError:
            raise StoreConflict("a selected cell is claimed by another recovery child") from None

    # -- ownership ---------------------------------------------------------------------
    def set_owner(self, run_id: str, owner: Row) -> None:
        """Record the process that runs ``run_id`` (host, pid, process start stamp)."""
        self.db.execute(shared_sql.UPSERT_OWNER, shared_sql.owner_args(run_id, owner, now_iso()))

    # -- shards of a run sharded across invocations ---------------------------------------
    def save_shard(self, run_id: str, shard: Row) -> None:
        """Insert or replace the row of shard ``shard["shard"]`` of ``run_id``: its owner
        (host, pid, process start), ``state`` (running / finalizing / finished / interrupted),
        times, and the rest of ``shard`` (cells, attempt …) kept as data."""
        self.db.execute(shared_sql.UPSERT_SHARD, shared_sql.shard_args(run_id, shard))

    def owner_alive(self, owner: Row) -> bool | None:
        """Whether a run's owner still runs: its PID on this host says (True / False); on
        another host it is unknowable to a SQLite store (None), and such a run is left alone."""
        return pid_alive(owner)

    # -- processes ---------------------------------------------------------------------
    def register_process(self, run_id: str, process: Row) -> None:
        self.db.execute(shared_sql.UPSERT_PROCESS, shared_sql.process_args(run_id, process))

    # -- the response cache ------------------------------------------------------------
    def clear_cache(self, older_than: str | None = None) -> int:
        """Forget cache entries (those made before ``older_than``, an ISO time; all without
        it); the calls and their evidence stay. The number forgotten."""
        with self.transaction():
            if older_than is None:
                cursor = self.db.execute("DELETE FROM call_cache")
            else:
                cursor = self.db.execute(
                    "DELETE FROM call_cache WHERE created_at < ?", (older_than,)
                )
            return int(cursor.rowcount)

    # -- batched writes ----------------------------------------------------------------
    def write_batch(self, writes: list[Write]) -> None:
        """Apply intents with one ``executemany`` per kind (inside the caller's transaction).

        Calls are inserted before they are finished, results and events keep their order.
        """
        now = now_iso()
        inserts, finishes, results, events, progress = by_kind(writes)
        db = self.db
        if inserts:
            db.executemany(INSERT_CALL, [_insert_call_args(w.run_id, w.row, now) for w in inserts])
        if finishes:
            self._append_evidence_of(finishes)
            db.executemany(
                shared_sql.UPDATE_CALL,
                [shared_sql.update_call_args(w.row["id"], w.row, now) for w in finishes],
            )
            cached = shared_sql.cache_args(finishes, now)
            if cached:
                db.executemany(shared_sql.UPSERT_CACHE, cached)
        if results:
            db.executemany(
                shared_sql.UPSERT_RESULT,
                [shared_sql.result_args(w.run_id, w.row, now) for w in results],
            )
        if events:
            db.executemany(
                "INSERT INTO events(run_id, at, kind, data) VALUES (?, ?, ?, ?)",
                [(w.run_id, now, w.kind, shared_sql.dumps(w.data)) for w in events],
            )
        if progress:
            db.executemany(
                shared_sql.UPSERT_PROGRESS, [shared_sql.progress_args(w) for w in progress]
            )

    def _append_evidence_of(self, finishes: list[FinishCall]) -> None:
        """Each finished call's evidence, one write per run's pack for the whole batch (every
        finished row gets a locator, an empty one for a call that received nothing)."""
        by_run: dict[str, list[FinishCall]] = {}
        for w in finishes:
            if w.evidence or "evidence" not in w.row:
                by_run.setdefault(w.run_id, []).append(w)
        for run_id, pending in by_run.items():
            locators = self._evidence.append_many(
                self.run_dir(run_id), [w.evidence for w in pending]
            )
            for w, locator in zip(pending, locators, strict=True):
                w.row["evidence"] = locator

    def make_room(self) -> None:
        """After a write failed on a full disk: merge the WAL into the database and truncate
        it, so that the writes waiting in memory may fit again."""
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    # -- evidence ----------------------------------------------------------------------
    def append_evidence(self, run_id: str, data: bytes) -> dict[str, Any]:
        """Append a call's raw bytes to this process's evidence pack (see ``EvidencePacks``)."""
        return self._evidence.append(self.run_dir(run_id), data)

    def read_evidence(self, locator: Any) -> bytes:
        """The raw bytes a call's ``evidence`` locator points at."""
        return self._evidence.read(locator)

    def close_evidence(self) -> None:
        self._evidence.close()
