"""Oracle of the report's metric row: ``target_metric`` computes one target's (or one benchmark
row's) metrics from the lists of its result rows and calls, the accuracy interval over cases
and the grouping of cells into cases (``case_clusters``) included.

The report computes the same row one cell at a time (``core.report.running.MetricRunner``);
``tests/core/report/test_running.py`` holds the two equal. The rules (null versus zero,
reference/report-and-accounting.md §3 and §9) are stated once, in the product's docstrings;
this module only counts them again from whole lists. It shares with the product what a single
row or call means (``answer_latency``, ``cache_read_observation``, ``interval_fields``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from typing import Any

from pytest_srbench.core.calls.usage import (
    CACHE_NEUTRAL_BASIS,
    add_buckets,
    is_known_cost,
    sum_cost,
)
from pytest_srbench.core.report.metrics import (
    ACCURACY_DENOMINATOR,
    Row,
    answer_latency,
    cache_read_observation,
    interval_fields,
)
from pytest_srbench.core.stats import percentile
from tests.oracles.continuity import continuity


def case_clusters(outcomes: Iterable[tuple[Hashable, bool]]) -> list[tuple[int, int]]:
    """(correct cells, cells) per case, in first-seen order, from (case key, correct) per cell."""
    counts: dict[Hashable, list[int]] = {}
    for key, correct in outcomes:
        cell = counts.setdefault(key, [0, 0])
        cell[0] += bool(correct)
        cell[1] += 1
    return [(right, cells) for right, cells in counts.values()]


def _percentiles(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """p50, p90 and p95 (linear interpolation); None for no values."""
    return percentile(values, 0.5), percentile(values, 0.9), percentile(values, 0.95)


def output_diagnostics(
    results: Sequence[Row], subject: Sequence[Row], total: int
) -> dict[str, Any]:
    """Counts of recorded output-limit flags, strict-format checks and finish reasons."""
    checked = [
        r for r in results if isinstance((r.get("details") or {}).get("strict_format"), bool)
    ]
    failed = [r for r in checked if (r.get("details") or {}).get("strict_format") is False]
    reasons = Counter(str(c["finish_reason"]) for c in subject if c.get("finish_reason"))
    return {
        "planned_cases": total,
        "result_cases": len(results),
        "output_limit_cases": sum(
            1 for r in results if (r.get("details") or {}).get("quality_failure") == "output_limit"
        ),
        "strict_format": {
            "checked_cases": len(checked),
            "failed_cases": len(failed),
            "unassessed_cases": total - len(checked),
        },
        "subject_calls": {
            "total": len(subject),
            "finish_reasons": dict(sorted(reasons.items())),
            "unknown_finish_reason": len(subject) - sum(reasons.values()),
        },
    }


def accuracy_interval(
    results: Sequence[Row],
    total: int,
    planned_ids: Collection[str] | None,
    case_of: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The accuracy interval over cases: every planned cell is one outcome of its case
    (``case_of`` maps a repeat's case id to its original; failed, unanswered and pending cells
    are wrong), and the Wilson interval is taken at the Kish effective number of cases
    (``core.stats.case_interval``): without repeats, Wilson on correct / total.

    Without ``planned_ids`` the cells are the result rows plus ``total`` − rows pending cells,
    each its own case.
    """
    right = {
        str(r["case_id"])
        for r in results
        if r.get("status") == "completed" and r.get("correct") is True
    }
    if planned_ids is not None:
        cells: list[tuple[object, bool]] = [(case_id, case_id in right) for case_id in planned_ids]
    else:
        cells = [(str(r["case_id"]), str(r["case_id"]) in right) for r in results]
        cells += [((None, i), False) for i in range(max(0, total - len(results)))]
    original = case_of or {}
    clusters = case_clusters(
        (original.get(key, key) if isinstance(key, str) else key, correct) for key, correct in cells
    )
    return interval_fields(clusters)


def cache_read_metrics(subject: Sequence[Row]) -> dict[str, Any]:
    """Cache-read observations over subject calls whose provider reported cache fields."""
    sample = [c for c in subject if c.get("cache_read_reported") is True]
    tokens = 0
    prompt = 0
    ratio_known = True
    for call in sample:
        usage = cache_read_observation(call)
        if usage is None:
            ratio_known = False
            continue
        tokens += usage["cached_input_tokens"]
        prompt += usage["input_tokens"] + usage["cached_input_tokens"] + usage["cache_write_tokens"]
    ratio = tokens / prompt if sample and ratio_known and prompt > 0 else None
    return {
        "cache_read_call_count": len(sample),
        "cache_read_tokens": tokens,
        "cache_read_prompt_tokens": prompt,
        "cache_read_ratio": ratio,
    }


def target_metric(
    target_id: str,
    results: Sequence[Row],
    calls: Sequence[Row],
    total: int,
    planned_ids: Collection[str] | None,
    neutral_cost: Callable[[Row], float | None],
    *,
    session_mode: str = "stateless",
    case_of: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One metric row (reference/report-and-accounting.md §3.3) for one target or benchmark row.

    ``selection_statuses`` / ``selection_reasons`` are null here: only a preview run observes
    them (``tests.oracles.routing.preview_distributions``). ``continuity`` is §5.1 under
    ``session_mode``. ``case_of`` maps a repeat's case id to its original case: the accuracy
    interval's unit (``accuracy_interval``).
    """
    completed = [r for r in results if r.get("status") == "completed"]
    scored = [r for r in completed if isinstance(r.get("correct"), bool)]
    correct = sum(1 for r in scored if r["correct"] is True)
    subject = [c for c in calls if c.get("role") == "subject"]
    overhead = [c for c in calls if c.get("role") != "subject"]
    receipted = {c["case_id"] for c in subject if c.get("case_id")}
    coverage = (
        len(receipted) == total
        and all(r.get("case_id") in receipted for r in results)
        and (planned_ids is None or receipted == set(planned_ids))
    )
    usage_complete = bool(subject) and coverage and all(c.get("usage") is not None for c in subject)
    cost_complete = (
        bool(subject) and coverage and all(is_known_cost(c.get("cost_usd")) for c in subject)
    )
    neutral = [neutral_cost(c) for c in subject]
    neutral_known = bool(subject) and coverage and all(value is not None for value in neutral)
    counts = [c.get("inference_call_count") for c in subject]
    latencies = [
        latency
        for r in completed
        if r.get("latency_s") is not None and (latency := answer_latency(r)) is not None
    ]
    queue = [float(r["queue_wait_s"]) for r in results if r.get("queue_wait_s") is not None]
    walls = [float(r["latency_s"]) for r in completed if r.get("latency_s") is not None]
    ttfts = [float(c["ttft_s"]) for c in subject if c.get("ttft_s") is not None]
    selected = Counter(
        str(c.get("selected_model") or c.get("model"))
        for c in subject
        if c.get("selected_model") or (c.get("status") == "completed" and c.get("model"))
    )
    replayed = [c for c in calls if c.get("status") == "replayed"]
    cached_cells = len({c.get("case_id") for c in replayed})
    avoided = [c.get("cache_avoided_cost_usd") for c in replayed]
    queue_p50, _, queue_p95 = _percentiles(queue)
    latency_p50, latency_p90, latency_p95 = _percentiles(latencies)
    metric: dict[str, Any] = {
        "id": target_id,
        "total": total,
        "completed": len(completed),
        "failed": sum(1 for r in results if r.get("status") not in ("completed", "running")),
        "pending": total - len(results),
        "scored": len(scored),
        "correct": correct,
        "accuracy": correct / total if total else None,
        "accuracy_denominator": ACCURACY_DENOMINATOR,
        **accuracy_interval(results, total, planned_ids, case_of),
        # a cell answered from the response cache is never complete live evidence
        "complete": len(completed) == total and len(scored) == total and not cached_cells,
        "output_diagnostics": output_diagnostics(results, subject, total),
        "cost_usd": sum_cost(c.get("cost_usd") for c in subject) if cost_complete else None,
        "cache_neutral_cost_usd": math.fsum(v for v in neutral if v is not None)
        if neutral_known
        else None,
        "cache_neutral_cost_basis": CACHE_NEUTRAL_BASIS,
        "known_cost_usd": math.fsum(
            c["cost_usd"] for c in subject if is_known_cost(c.get("cost_usd"))
        ),
        "cost_complete": cost_complete,
        "evaluation_cost_usd": sum_cost(c.get("cost_usd") for c in overhead) if overhead else 0,
        "total_spend_usd": sum_cost(c.get("cost_usd") for c in calls) if coverage else None,
        "tokens": add_buckets(c["usage"] for c in subject) if usage_complete else None,
        "call_count": sum(c for c in counts if c is not None)
        if subject and coverage and None not in counts
        else None,
        "request_count": len(subject),
        "selected_models": dict(selected),
        "pending_selection_count": sum(
            1
            for c in subject
            if c.get("status") in ("sent", "running") and not c.get("selected_model")
        ),
        "decisions": dict(Counter(str(c["decision"]) for c in subject if c.get("decision"))),
        "selection_statuses": None,
        "selection_reasons": None,
        "queue_wait_p50_s": queue_p50,
        "queue_wait_p95_s": queue_p95,
        "evaluation_call_count": len(overhead),
        "case_wall_time_p50_s": percentile(walls, 0.5),
        "latency_p50_s": latency_p50,
        "latency_p90_s": latency_p90,
        "latency_p95_s": latency_p95,
        "ttft_p50_s": percentile(ttfts, 0.5),
        "request_time_sum_s": math.fsum(float(c.get("latency_s") or 0) for c in subject),
    }
    metric.update(cache_read_metrics(subject))
    metric["continuity"] = continuity(results, calls, session_mode)
    metric["cache"] = {
        "cells": cached_cells,
        "share": cached_cells / total if total else 0.0,
        "calls": len(replayed),
    }
    metric["cache_avoided_cost_usd"] = (
        math.fsum(a for a in avoided if a is not None)
        if all(is_known_cost(a) for a in avoided)
        else None
    )
    return metric
