"""How the report's router views read a row (pure): the routing a preview saved on a result
row (``routing_of``) and its decision (``decision_name``). The views themselves —
the per-decision breakdown of a router target and the routing distributions of a preview run
(reference/report-and-accounting.md §4.3) — are counted one cell at a time by
``core.report.running`` (``DecisionRunner``, ``MetricRunner.preview_distributions``).

A live case's decision is the ``decision`` of its last subject call that has one; a preview
case's decision is ``details.routing.decision_result.decision_name`` of its result row.
Cases without a decision (including planned cases with no row and no call) group under
decision null, labelled "unknown".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Row = Mapping[str, Any]
UNKNOWN_DECISION = "unknown"


def routing_of(result: Row) -> Mapping[str, Any]:
    """The preview response JSON saved on a result row (``{}`` when absent)."""
    routing = (result.get("details") or {}).get("routing")
    return routing if isinstance(routing, Mapping) else {}


def decision_name(routing: Mapping[str, Any]) -> str | None:
    """A preview response's decision (``decision_result.decision_name``), None without one."""
    decision = routing.get("decision_result")
    name = decision.get("decision_name") if isinstance(decision, Mapping) else None
    return str(name) if name else None
