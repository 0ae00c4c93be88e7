"""Oracle of the continuity block (reference/report-and-accounting.md §5.1): ``continuity``
counts it from the lists of a target's (or benchmark row's) result rows and calls.

The report counts it one task at a time (``core.report.running.ContinuityRunner``); the rules
it follows are stated in ``core/calls/continuity.py``, whose two facts of a request
(``is_multi_inference``, ``known_changes``) both forms share.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pytest_srbench.core.calls.continuity import Row, is_multi_inference, known_changes


def subject_tasks(calls: Iterable[Row]) -> dict[str, list[Row]]:
    """Subject calls grouped by case id, in stored order (cases in first-seen order)."""
    tasks: dict[str, list[Row]] = {}
    for call in calls:
        if call.get("role") == "subject" and call.get("case_id"):
            tasks.setdefault(str(call["case_id"]), []).append(call)
    return tasks


def _rate(hits: int, count: int) -> float | None:
    return hits / count if count else None


def continuity(results: Sequence[Row], calls: Sequence[Row], session_mode: str) -> dict[str, Any]:
    """The continuity block of one target or one benchmark row."""
    correct = {
        str(r.get("case_id"))
        for r in results
        if r.get("status") == "completed" and r.get("correct") is True
    }
    multi_inference = 0
    multi_request = 0
    unknown_requests = 0
    decision_changed = 0
    switches_per_task: list[int] = []
    by_phase: Counter[str] = Counter()
    switched = switched_correct = unswitched = unswitched_correct = 0
    for case_id, requests in subject_tasks(calls).items():
        if any(is_multi_inference(call) for call in requests):
            multi_inference += 1
            continue
        if len(requests) >= 2:
            multi_request += 1
        models = [call.get("selected_model") or None for call in requests]
        unknown_requests += sum(1 for model in models if model is None)
        switches = known_changes(models)
        for index in switches:
            by_phase[str(requests[index].get("phase") or "unknown")] += 1
        switches_per_task.append(len(switches))
        if known_changes(call.get("decision") or None for call in requests):
            decision_changed += 1
        if switches:
            switched += 1
            switched_correct += case_id in correct
        else:
            unswitched += 1
            unswitched_correct += case_id in correct
    return {
        "session_mode": session_mode,
        "multi_request_tasks": multi_request,
        "model_switches": sum(switches_per_task),
        "model_switches_per_task_mean": _rate(sum(switches_per_task), len(switches_per_task)),
        "model_switches_per_task_max": max(switches_per_task, default=None),
        "model_switches_by_phase": dict(sorted(by_phase.items())),
        "unknown_model_requests": unknown_requests,
        "multi_inference_tasks": multi_inference,
        "decision_changed_tasks": decision_changed,
        "switched_tasks": switched,
        "unswitched_tasks": unswitched,
        "switched_accuracy": _rate(switched_correct, switched),
        "unswitched_accuracy": _rate(unswitched_correct, unswitched),
    }
