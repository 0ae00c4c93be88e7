"""What a report reads of a run, one cell at a time (pure): ``CellRows`` — a cell's result row
and its calls — first for every planned cell in planned order, then for the cases outside the
plan that have rows. The store streams the same records a page at a time
(``Store.cell_rows``); ``cells_in_memory`` makes them from lists already in memory.

Each row carries a *rank*, its position in the order the rows are stored in, which orders the
keys of the metrics' counts (``core.report.running``): a call's journal position, a result's
(case, target) in the store and its index in a list."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, cast

Row = dict[str, Any]


class CellRows(NamedTuple):
    """One (case, target): its result row (None without one), its calls in stored order as
    (rank, call) pairs, and whether the plan holds the cell."""

    case_id: Any
    target_id: Any
    planned: bool
    result: Row | None
    result_rank: Any
    calls: list[tuple[Any, Row]]


def cells_in_memory(
    planned: Iterable[tuple[str, str]],
    results: Sequence[Mapping[str, Any]],
    calls: Sequence[Mapping[str, Any]],
) -> Iterator[CellRows]:
    """``CellRows`` of lists of result rows and calls: a row's rank is its index in its list.
    A cell with two result rows keeps the later one."""
    by_cell: dict[tuple[Any, Any], tuple[int, Row]] = {}
    for index, row in enumerate(results):
        by_cell[(row["case_id"], row["target_id"])] = (index, cast(Row, row))
    calls_of: dict[tuple[Any, Any], list[tuple[Any, Row]]] = defaultdict(list)
    for index, call in enumerate(calls):
        calls_of[(call.get("case_id"), call.get("target_id"))].append((index, cast(Row, call)))
    for key in planned:
        found = by_cell.pop(key, None)
        yield CellRows(
            key[0],
            key[1],
            True,
            None if found is None else found[1],
            -1 if found is None else found[0],
            calls_of.pop(key, []),
        )
    for key in sorted(set(by_cell) | set(calls_of), key=lambda k: (str(k[1]), str(k[0]))):
        found = by_cell.get(key)
        yield CellRows(
            key[0],
            key[1],
            False,
            None if found is None else found[1],
            -1 if found is None else found[0],
            calls_of.get(key, []),
        )
