"""A run's rows for its report, one cell at a time (PostgreSQL): the same ``CellRows``
sequence as ``cell_reader.py`` gives for SQLite — every planned cell in planned order, then
the rows outside the plan — read a page at a time from one repeatable-read snapshot.

The planned (case, target) pairs go to the server as two arrays (``unnest … WITH
ORDINALITY``), so nothing is written, not even a temporary table (a read-only store reads the
same); result rows and the (planned position, call number) pairs stream from server-side
cursors, and receipts are fetched by call number a page at a time. Text is ordered with the
``C`` collation, byte order like SQLite's, whatever the database's locale."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from pytest_srbench.core.report.rows import CellRows
from pytest_srbench.store.cell_reader import planned_cells

if TYPE_CHECKING:
    from pytest_srbench.store.postgres import PostgresStore

Row = dict[str, Any]
PLANNED = "unnest(%s::text[], %s::text[]) WITH ORDINALITY AS p(case_id, target_id, idx)"
_cursors = itertools.count(1)


def _stream(store: PostgresStore, query: str, args: tuple[Any, ...], page: int) -> Iterator[Any]:
    from psycopg.rows import tuple_row

    cursor = store.db.cursor(name=f"srbench_cells_{next(_cursors)}", row_factory=tuple_row)
    cursor.itersize = page
    try:
        cursor.execute(query, args)
        while rows := cursor.fetchmany(page):
            yield from rows
    finally:
        cursor.close()


def cell_rows(
    store: PostgresStore,
    run_id: str,
    planned: Iterable[tuple[str, str]],
    *,
    page: int = 500,
    start: int = 0,
    outside: bool = True,
) -> Iterator[CellRows]:
    """See ``Store.cell_rows``."""
    cases: list[str] = []
    targets: list[str] = []
    for case_id, target_id in planned:
        cases.append(case_id)
        targets.append(target_id)
    with store.snapshot():
        yield from _planned(store, run_id, cases, targets, page, start)
        if outside:
            yield from _outside(store, run_id, cases, targets, page)


def _receipts(store: PostgresStore, run_id: str, seqs: list[int], page: int) -> dict[int, Row]:
    found: dict[int, Row] = {}
    cursor = store._tuples()
    for start in range(0, len(seqs), page):
        batch = seqs[start : start + page]
        for seq, data in cursor.execute(
            "SELECT seq, data FROM calls WHERE run_id = %s AND seq = ANY(%s)", (run_id, batch)
        ):
            call = orjson.loads(data)
            call["_seq"] = seq
            found[seq] = call
    return found


def _planned(
    store: PostgresStore, run_id: str, cases: list[str], targets: list[str], page: int, start: int
) -> Iterator[CellRows]:
    results = _stream(
        store,
        f"SELECT p.idx, p.case_id, p.target_id, r.data FROM {PLANNED} LEFT JOIN results r"
        " ON r.run_id = %s AND r.case_id = p.case_id AND r.target_id = p.target_id"
        " WHERE p.idx > %s ORDER BY p.idx",
        (cases, targets, run_id, start),
        page,
    )
    pairs = _stream(
        store,
        f"SELECT p.idx, c.seq FROM calls c JOIN {PLANNED}"
        " ON p.case_id = c.case_id AND p.target_id = c.target_id"
        " WHERE c.run_id = %s AND p.idx > %s ORDER BY p.idx, c.seq",
        (cases, targets, run_id, start),
        page,
    )
    pages = iter(lambda: list(itertools.islice(results, page)), [])
    yield from planned_cells(pages, pairs, lambda seqs: _receipts(store, run_id, seqs, page))


def _outside_plan(alias: str) -> str:
    return (
        "NOT EXISTS (SELECT 1 FROM unnest(%s::text[], %s::text[]) AS p(case_id, target_id)"
        f" WHERE p.case_id = {alias}.case_id AND p.target_id = {alias}.target_id)"
    )


def _outside(
    store: PostgresStore, run_id: str, cases: list[str], targets: list[str], page: int
) -> Iterator[CellRows]:
    """Result rows outside the plan (each alone), then calls outside it grouped by (target,
    case), like ``cell_reader._outside``."""
    results = _stream(
        store,
        "SELECT r.case_id, r.target_id, r.data FROM results r WHERE r.run_id = %s AND "
        + _outside_plan("r")
        + ' ORDER BY r.case_id COLLATE "C", r.target_id COLLATE "C"',
        (run_id, cases, targets),
        page,
    )
    for case_id, target_id, data in results:
        yield CellRows(case_id, target_id, False, orjson.loads(data), (case_id, target_id), [])
    calls = _stream(
        store,
        "SELECT c.target_id, c.case_id, c.seq FROM calls c WHERE c.run_id = %s AND "
        + _outside_plan("c")
        + ' ORDER BY c.target_id COLLATE "C", c.case_id COLLATE "C", c.seq',
        (run_id, cases, targets),
        page,
    )
    for (target_id, case_id), group in itertools.groupby(calls, key=lambda row: (row[0], row[1])):
        seqs = [seq for *_, seq in group]
        receipts = _receipts(store, run_id, seqs, page)
        yield CellRows(case_id, target_id, False, None, None, [(s, receipts[s]) for s in seqs])
