"""The report's running metrics (``MetricRunner``, ``DecisionRunner``) fed from lists of rows the
way the report feeds them: one target's planned cells in planned order (``cells_in_memory``),
then, as calls outside the plan, its other cases' calls. Tests that state a metric's rules on
a handful of rows read the product's numbers through it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pytest_srbench.core.report.rows import cells_in_memory
from pytest_srbench.core.report.running import DecisionRunner, MetricRunner

Row = dict[str, Any]


def no_neutral_cost(call: Row) -> float | None:
    """A cache-neutral cost of 0 for every call (the tests that use it do not read it)."""
    return 0.0


def fed(
    planned: Sequence[str],
    results: Sequence[Row],
    calls: Sequence[Row],
    target_id: str = "t",
    *,
    case_of: Mapping[str, str] | None = None,
    preview: bool = False,
    unplanned: bool = True,
    neutral: Callable[[Row], float | None] = no_neutral_cost,
) -> tuple[MetricRunner, DecisionRunner]:
    """``target_id``'s metric and decision runners fed its cells of ``planned`` (case ids, in
    order) under their original cases (``case_of`` maps a repeat to it) and, when
    ``unplanned``, the calls of its cases outside ``planned``."""
    original = case_of or {}
    grouped = any(original.get(case_id, case_id) != case_id for case_id in planned)
    metric = MetricRunner(neutral, grouped=grouped)
    decisions = DecisionRunner(preview=preview, grouped=grouped)
    keys = [(case_id, target_id) for case_id in planned]
    for cell in cells_in_memory(keys, results, calls):
        if cell.target_id != target_id:
            continue
        if cell.planned:
            case = original.get(cell.case_id, cell.case_id)
            metric.add_cell(case, cell.result, cell.result_rank, cell.calls)
            decisions.add_cell(case, cell.result, cell.result_rank, cell.calls)
        elif unplanned and cell.calls:
            metric.add_unplanned(cell.calls)
    return metric, decisions


def metric_of(
    planned: Sequence[str], results: Sequence[Row], calls: Sequence[Row], target_id: str = "t"
) -> dict[str, Any]:
    """The metric row the report gives ``target_id`` over these rows."""
    return fed(planned, results, calls, target_id)[0].metric(target_id)
