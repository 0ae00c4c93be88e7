"""A run's rows for its report, one cell at a time (SQLite): ``CellRows`` of every planned
cell in planned order, then the rows outside the plan — read a page at a time, so the
process holds one page of result rows and their calls, never the run's.

The planned (case, target) pairs go to a temporary table of the connection, so SQLite does
the joining and ordering: result rows are looked up by their primary key in planned order;
each planned cell's calls with their receipts by the journal's cell index (journal order
within the cell; one statement, the cell's result row beside each call), or, in a store
without that index, ordered by (planned position, journal position) — a sort of two integers
per call — and their receipts then read by journal position in batches.
Nothing is written to the journal itself (a read-only store allows temporary tables)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import orjson

from pytest_srbench.core.report.rows import CellRows

if TYPE_CHECKING:
    from pytest_srbench.store.sqlite import SqliteStore

Row = dict[str, Any]
PAGE = 500  # planned cells per read; also the most receipts read by one statement
_tables = itertools.count(1)


@contextmanager
def _scratch(store: SqliteStore) -> Iterator[None]:
    """Writes to the connection's temporary tables, also on a read-only (query_only) store."""
    if not store.read_only:
        yield
        return
    store.db.execute("PRAGMA query_only=OFF")
    try:
        yield
    finally:
        store.db.execute("PRAGMA query_only=ON")


def cell_rows(
    store: SqliteStore,
    run_id: str,
    planned: Iterable[tuple[str, str]],
    *,
    page: int = PAGE,
    start: int = 0,
    outside: bool = True,
) -> Iterator[CellRows]:
    """See ``Store.cell_rows``."""
    table = f"temp.report_cells_{next(_tables)}"
    db = store.db
    with store.snapshot():
        with _scratch(store):
            db.execute(
                f"CREATE TABLE {table}(idx INTEGER PRIMARY KEY, case_id TEXT NOT NULL,"
                " target_id TEXT NOT NULL)"
            )
            db.executemany(f"INSERT INTO {table}(case_id, target_id) VALUES (?, ?)", planned)
            by_cell = _has_cell_index(store)
            if outside or not by_cell:
                db.execute(
                    f"CREATE INDEX {table}_cell ON {table.removeprefix('temp.')}"
                    "(case_id, target_id)"
                )
        try:
            yield from _planned(store, run_id, table, page, start, by_cell)
            if outside:
                yield from _outside(store, run_id, table, page)
        finally:
            with _scratch(store):
                db.execute(f"DROP TABLE {table}")


def _receipts(store: SqliteStore, seqs: list[int], page: int) -> dict[int, Row]:
    """Calls by journal position, read ``page`` at a time."""
    found: dict[int, Row] = {}
    cursor = store.db.cursor()
    cursor.row_factory = None
    loads = orjson.loads
    for start in range(0, len(seqs), page):
        batch = seqs[start : start + page]
        marks = ", ".join("?" * len(batch))
        for seq, data in cursor.execute(
            f"SELECT seq, data FROM calls WHERE seq IN ({marks})", batch
        ):
            call = loads(data)
            call["_seq"] = seq
            found[seq] = call
    return found


def _has_cell_index(store: SqliteStore) -> bool:
    """Whether the journal indexes calls by cell (a store last written by an older version
    may not: a read-only one is never upgraded)."""
    found = store.db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'calls_cell'"
    ).fetchone()
    return found is not None


def _planned(
    store: SqliteStore, run_id: str, table: str, page: int, start: int, by_cell: bool
) -> Iterator[CellRows]:
    if by_cell:
        yield from _joined_cells(store, run_id, table, page, start)
        return
    results = store.db.cursor()
    results.row_factory = None
    results.execute(
        f"SELECT p.idx, p.case_id, p.target_id, r.data FROM {table} p LEFT JOIN results r"
        " ON r.run_id = ? AND r.case_id = p.case_id AND r.target_id = p.target_id"
        " WHERE p.idx > ? ORDER BY p.idx",
        (run_id, start),
    )
    pages = iter(lambda: results.fetchmany(page), [])
    order = store.db.cursor()
    order.row_factory = None
    order.execute(
        f"SELECT p.idx, c.seq FROM calls c JOIN {table} p"
        " ON p.case_id = c.case_id AND p.target_id = c.target_id"
        " WHERE c.run_id = ? AND p.idx > ? ORDER BY p.idx, c.seq",
        (run_id, start),
    )
    pairs = _fetched(order, page)  # (planned position, journal position), in that order
    yield from planned_cells(pages, pairs, lambda seqs: _receipts(store, seqs, page))


def _joined_cells(
    store: SqliteStore, run_id: str, table: str, page: int, start: int
) -> Iterator[CellRows]:
    """The planned cells from one statement: a row per call of each cell (one without a call
    for a cell that has none), in (planned position, journal position) order; a cell's result
    row is decoded from its first."""
    cursor = store.db.cursor()
    cursor.row_factory = None
    cursor.execute(
        f"SELECT p.idx, p.case_id, p.target_id, r.data, c.seq, c.data FROM {table} p"
        " LEFT JOIN results r"
        " ON r.run_id = ? AND r.case_id = p.case_id AND r.target_id = p.target_id"
        " LEFT JOIN calls c"
        " ON c.run_id = ? AND c.case_id = p.case_id AND c.target_id = p.target_id"
        " WHERE p.idx > ? ORDER BY p.idx, c.seq",
        (run_id, run_id, start),
    )
    loads = orjson.loads
    cell: CellRows | None = None
    last = None
    while rows := cursor.fetchmany(page):
        for idx, case_id, target_id, data, seq, text in rows:
            if idx != last:
                if cell is not None:
                    yield cell
                last = idx
                key = (case_id, target_id)
                result = None if data is None else loads(data)
                cell = CellRows(case_id, target_id, True, result, key, [])
            if seq is not None:
                call = loads(text)
                call["_seq"] = seq
                cell.calls.append((seq, call))  # type: ignore[union-attr]
    if cell is not None:
        yield cell


def planned_cells(
    pages: Iterator[list[Any]],
    pairs: Iterator[tuple[int, int]],
    receipts_of: Callable[[list[int]], dict[int, Row]],
) -> Iterator[CellRows]:
    """The planned cells in planned order, from pages of (position, case, target, result
    data or None) rows and the (position, call seq) pairs in the same order: a page's calls
    are read at once (``receipts_of`` their seqs). Shared by both backends' readers."""
    pending = next(pairs, None)
    loads = orjson.loads
    for rows in pages:
        last = rows[-1][0]
        calls_of: dict[int, list[int]] = {}
        seqs: list[int] = []
        while pending is not None and pending[0] <= last:
            calls_of.setdefault(pending[0], []).append(pending[1])
            seqs.append(pending[1])
            pending = next(pairs, None)
        receipts = receipts_of(seqs)
        for idx, case_id, target_id, data in rows:
            own = calls_of.get(idx)
            yield CellRows(
                case_id,
                target_id,
                True,
                None if data is None else loads(data),
                (case_id, target_id),
                [(seq, receipts[seq]) for seq in own] if own else [],
            )


def _outside_plan(alias: str, table: str) -> str:
    return (
        f"NOT EXISTS (SELECT 1 FROM {table} p"
        f" WHERE p.case_id = {alias}.case_id AND p.target_id = {alias}.target_id)"
    )


def _fetched(cursor: Any, page: int) -> Iterator[Any]:
    while rows := cursor.fetchmany(page):
        yield from rows


def _outside(store: SqliteStore, run_id: str, table: str, page: int) -> Iterator[CellRows]:
    """Result rows outside the plan (each alone), then calls outside it grouped by (target,
    case): a cell outside the plan may come twice, once with its row and once with its calls."""
    results = store.db.cursor()
    results.row_factory = None
    results.execute(
        "SELECT r.case_id, r.target_id, r.data FROM results r WHERE r.run_id = ? AND "
        + _outside_plan("r", table)
        + " ORDER BY r.case_id, r.target_id",
        (run_id,),
    )
    for case_id, target_id, data in _fetched(results, page):
        yield CellRows(case_id, target_id, False, orjson.loads(data), (case_id, target_id), [])
    calls = store.db.cursor()
    calls.row_factory = None
    calls.execute(
        "SELECT c.target_id, c.case_id, c.seq FROM calls c WHERE c.run_id = ? AND "
        + _outside_plan("c", table)
        + " ORDER BY c.target_id, c.case_id, c.seq",
        (run_id,),
    )
    for (target_id, case_id), group in itertools.groupby(
        _fetched(calls, page), key=lambda row: (row[0], row[1])
    ):
        seqs = [seq for *_, seq in group]
        receipts = _receipts(store, seqs, page)
        yield CellRows(case_id, target_id, False, None, None, [(s, receipts[s]) for s in seqs])
