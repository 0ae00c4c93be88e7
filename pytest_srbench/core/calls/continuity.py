"""The rules of the ``continuity`` block (reference/report-and-accounting.md §5.1): how a
router's model choice moves between the requests of one task, for one target or one benchmark
row (pure), and the two facts of a request they rest on (``is_multi_inference``,
``known_changes``). The report counts the block one task at a time
(``core.report.running.ContinuityRunner``).

A switch is a fact, not a penalty; no score uses it. The reference leaves several points
UNCONFIRMED; the report implements these choices:

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

from collections.abc import Hashable, Iterable, Mapping
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
