"""Oracle of the report's router views (reference/report-and-accounting.md §4.3):
``decision_breakdown`` (accuracy, spend and selected models per routing decision of a router
target) and ``preview_distributions`` (a preview run's routing counts), from whole lists.

The report computes them one cell at a time (``core.report.running.DecisionRunner`` and
``MetricRunner.preview_distributions``); the rules are stated in ``core/calls/routing.py``,
whose reading of a row (``routing_of``, ``decision_name``) both forms share.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_srbench.core.calls.routing import UNKNOWN_DECISION, Row, decision_name, routing_of
from pytest_srbench.core.calls.usage import is_known_cost
from pytest_srbench.core.stats import case_interval, coverage_caveat
from tests.oracles.metrics import case_clusters


def _counter(values: Iterable[Any]) -> dict[str, int]:
    return dict(Counter(str(value) for value in values if value))


def preview_distributions(results: Sequence[Row]) -> dict[str, dict[str, int]]:
    """Routing counters of a preview run's result rows; they replace the call-based values."""
    routings = [routing_of(r) for r in results]
    return {
        "selection_statuses": _counter(r.get("selection_status") for r in routings),
        "selection_reasons": _counter(r.get("selection_reason") for r in routings),
        "selected_models": _counter(r.get("selected_model") for r in routings),
        "decisions": _counter(decision_name(r) for r in routings),
    }


def _case_decisions(
    results: Sequence[Row], subject: Sequence[Row], preview: bool
) -> dict[str, str | None]:
    decisions: dict[str, str | None] = {}
    if preview:
        for r in results:
            decisions[str(r["case_id"])] = decision_name(routing_of(r))
    else:
        for r in results:
            decisions.setdefault(str(r["case_id"]), None)
        for call in subject:
            case_id = str(call["case_id"])
            if call.get("decision"):
                decisions[case_id] = str(call["decision"])
            else:
                decisions.setdefault(case_id, None)
    return decisions


def decision_breakdown(
    results: Sequence[Row],
    calls: Sequence[Row],
    total_planned: int,
    *,
    preview: bool = False,
    planned_ids: Sequence[str] | None = None,
    case_of: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Accuracy, spend and selected models per routing decision of one router target.

    ``total_planned`` is the target's planned denominator: planned cases with neither a
    result row nor a subject call count under the unknown decision (as incorrect, and with
    an unknown cost). A preview run has null ``correct`` / ``accuracy`` / ``accuracy_ci95``.
    Empty when no case has a decision.

    ``accuracy_ci95`` is taken over cases: a decision's cells of one original case
    (``case_of`` maps a repeat's id to it) are one cluster (``core.stats.case_interval``);
    ``planned_ids`` names the unobserved planned cells, else each is its own case.
    """
    subject = [c for c in calls if c.get("role") == "subject" and c.get("case_id")]
    decisions = _case_decisions(results, subject, preview)
    if not any(decisions.values()):
        return []
    unobserved = max(0, total_planned - len(decisions))
    by_case: dict[str, Row] = {str(r["case_id"]): r for r in results}
    calls_of: dict[str, list[Row]] = {}
    for call in subject:
        calls_of.setdefault(str(call["case_id"]), []).append(call)
    groups: dict[str | None, list[str]] = {}
    for case_id, decision in decisions.items():
        groups.setdefault(decision, []).append(case_id)
    if unobserved:
        groups.setdefault(None, [])
    original = case_of or {}
    unseen: list[object] = [i for i in planned_ids or () if i not in decisions]
    if len(unseen) != unobserved:
        unseen = [(None, n) for n in range(unobserved)]
    rows = []
    for decision, case_ids in groups.items():
        cases = len(case_ids) + (unobserved if decision is None else 0)
        completed = [
            by_case[i] for i in case_ids if by_case.get(i, {}).get("status") == "completed"
        ]
        correct = sum(1 for r in completed if r.get("correct") is True)
        right = {str(r["case_id"]) for r in completed if r.get("correct") is True}
        clusters = case_clusters(
            [(original.get(i, i), i in right) for i in case_ids]
            + [
                (original.get(i, i) if isinstance(i, str) else i, False)
                for i in (unseen if decision is None else [])
            ]
        )
        group_calls = [c for i in case_ids for c in calls_of.get(i, [])]
        costs: list[Any] = [c.get("cost_usd") for c in group_calls]
        known = [float(c) for c in costs if is_known_cost(c)]
        receipted = all(i in calls_of for i in case_ids) and cases == len(case_ids)
        cost_known = receipted and bool(costs) and len(known) == len(costs)
        if preview:
            models = _counter(
                routing_of(by_case.get(i, {})).get("selected_model") for i in case_ids
            )
        else:
            models = _counter(c.get("selected_model") for c in group_calls)
        rows.append(
            {
                "decision": decision,
                "label": decision if decision is not None else UNKNOWN_DECISION,
                "cases": cases,
                "completed": len(completed),
                "correct": None if preview else correct,
                "accuracy": None if preview else correct / cases,
                "accuracy_ci95": None if preview else case_interval(clusters),
                "accuracy_ci95_worst_coverage": None if preview else coverage_caveat(len(clusters)),
                "cost_usd": math.fsum(known) if cost_known else None,
                "known_cost_usd": math.fsum(known),
                "selected_models": models,
            }
        )
    return sorted(rows, key=lambda r: (-r["cases"], r["decision"] is None, r["decision"] or ""))
