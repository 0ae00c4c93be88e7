"""What the report's metrics share (pure): the meaning of a result row's latency
(``answer_latency``) and of a call's cache-read observation (``cache_read_observation``), the
fields of an accuracy interval over cases (``interval_fields``) and the accuracy's stated
denominator.

Input rows are plain dicts as the store returns them (results: one per cell; calls: one per
HTTP request in stored order). The metric rows themselves are computed one cell at a time by
``core.report.running``, with sr-bench's null-versus-zero rules: nothing unknown becomes 0
except ``known_cost_usd`` (a lower bound) and ``evaluation_cost_usd`` when there are no
auxiliary calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_srbench.core.stats import case_interval, coverage_caveat, effective_cases

ACCURACY_DENOMINATOR = "all_planned_cases; failures and unanswered count as incorrect"
# The unit of sampling of every accuracy interval: the repeats of one case are one case.
INTERVAL_UNIT = "case"
Row = dict[str, Any]


def answer_latency(row: Row) -> float | None:
    """A cell's answer latency, as the report shows and summarises it: the sum of its subject
    call latencies, else (a completed cell without receipts) its wall time; None for a cell
    that ended without an answer, or one answered from the response cache without a live
    subject call (a cached answer has no latency: never the source's)."""
    if row.get("subject_latency_s") is not None:
        return float(row["subject_latency_s"])
    if row.get("cached_calls"):
        return None
    if row.get("status") == "completed" and row.get("latency_s") is not None:
        return float(row["latency_s"])
    return None


def interval_fields(clusters: Sequence[tuple[int, int]]) -> dict[str, Any]:
    """The accuracy interval's fields from (correct cells, cells) per case."""
    size = effective_cases(clusters)
    return {
        "cases": len(clusters),
        "accuracy_interval_unit": INTERVAL_UNIT,
        "accuracy_ci95": case_interval(clusters),
        "accuracy_effective_cases": float(size) if size is not None else None,
        "accuracy_ci95_worst_coverage": coverage_caveat(len(clusters)) if clusters else None,
    }


def cache_read_observation(call: Row) -> Any:
    """The usage a call's cache-read metrics read: the kept cache-read observation.

    The results guide: in a stream, a later usage event without cache fields does not erase an
    earlier cache-read observation. The receipt keeps that event's buckets as
    ``cache_read_usage``; the call's ``usage`` is the last event's (it prices the call). A call
    whose usage is unknown (an unverified accounting correction too) stays unknown; a receipt
    without the kept observation (an older run) falls back to its usage."""
    usage = call.get("usage")
    if usage is None:
        return None
    kept = call.get("cache_read_usage")
    return kept if isinstance(kept, dict) else usage
