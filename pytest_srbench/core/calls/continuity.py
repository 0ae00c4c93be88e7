"""The ``continuity`` block (reference/report-and-accounting.md §5.1): how a router's model
choice moves between the requests of one task, for one target or one benchmark row (pure).

A switch is a fact, not a penalty; no score uses it. The reference leaves several points
UNCONFIRMED; this module implements these choices:

- A task is one case. Its requests are the case's ``subject`` calls in stored order; judge
  and simulator calls are ignored. Cases without a subject call are not tasks here.
- A request's model is its ``selected_model``. A request without one is unknown: it is
  skipped and its known neighbours are compared, so [A, ?, B] is 1 switch and [A, ?, A] 0.
- A task with any request whose ``inference_call_count`` > 1 or that has more than one
  ``model_usage`` segment hides its internal model sequence. It is counted only in
  ``multi_inference_tasks``: it enters no other count (``multi_request_tasks``, switches,
  ``unknown_model_requests``, decision changes, switched / unswitched).
- The switch statistics cover the other tasks (each has >= 1 subject request).
  ``model_switches_per_task_mean`` = switches / those tasks, and
  ``model_switches_per_task_max`` their maximum; both null when there are none.
- ``model_switches_by_phase`` counts a switch under the ``phase`` of the later request of the
  pair (missing phase: "unknown"); ``{}`` when there are no switches.
- ``decision_changed_tasks``: tasks whose known ``decision`` changes between consecutive
  requests; requests without a decision are skipped like unknown models.
- ``switched_tasks`` / ``unswitched_tasks``: tasks with >= 1 / 0 switches; a single-request
  task is unswitched. ``switched_accuracy`` / ``unswitched_accuracy`` = tasks whose result
  row is completed with ``correct`` True / that count (failures count as incorrect); null
  when the count is 0.
- ``session_mode`` is what the caller passes: the target's mode, "stateless" for previews.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

Row = Mapping[str, Any]


def known_changes(values: Iterable[Hashable | None]) -> list[int]:
    """Indices (into ``values``) of the known values that differ from the previous known one."""
    changes: list[int] = []
    previous: Hashable | None = None
    for index, value in enumerate(values):
        if value is None:
            continue
        if previous is not None and value != previous:
            changes.append(index)
        previous = value
    return changes


def is_multi_inference(call: Row) -> bool:
    """A request that made several inference calls (fusion, fallback, workflows ...)."""
    count = call.get("inference_call_count")
    segments = call.get("model_usage") or []
    return (isinstance(count, int) and count > 1) or len(segments) > 1


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
