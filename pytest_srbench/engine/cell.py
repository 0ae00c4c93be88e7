"""Running one cell: the adapter's protocol inside a case deadline, then one result row."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.benchmarks.base import Grade, ModelReply
from pytest_srbench.core.failures import CallFailure, CellCancelled, safe_id, summarize_failure
from pytest_srbench.core.models import Case, Role, Target
from pytest_srbench.core.usage import add_buckets, is_known_cost
from pytest_srbench.engine.call import CellCalls, call_model
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.store.base import now_iso
from pytest_srbench.store.writes import AppendEvent, UpsertResult, Write


class CellRun:
    """The ``CellContext`` an adapter sees for one (case, target)."""

    def __init__(self, rt: RunRuntime, calls: CellCalls) -> None:
        self._rt = rt
        self._calls = calls

    @property
    def case(self) -> Case:
        return self._calls.case

    @property
    def target(self) -> Target:
        return self._calls.target

    @property
    def seed(self) -> int:
        return self._rt.manifest.seed

    async def call(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        role: Role = "subject",
        extra_body: Mapping[str, Any] | None = None,
    ) -> ModelReply:
        return await call_model(self._rt, self._calls, messages, role=role, extra_body=extra_body)

    def cancelled(self) -> bool:
        return (
            self._calls.cancelled or self._rt.stopping() or time.monotonic() >= self._calls.deadline
        )


def _check_grade(grade: object) -> Grade:
    if not isinstance(grade, Grade) or not isinstance(grade.correct, bool):
        raise CallFailure("Adapter result requires a terminal binary graded outcome")
    return grade


async def run_cell(
    rt: RunRuntime, case: Case, target: Target
) -> tuple[dict[str, Any], asyncio.Future[Any]]:
    """Execute one cell; returns its result row and the future of the row's commit.

    The caller need not wait for the commit before starting the next cell; it must not
    report the cell before the commit resolved.
    """
    adapter = rt.adapters.get(case.benchmark)
    started = time.monotonic()
    started_at = now_iso()
    queue_wait = started - rt.started
    deadline = min(rt.deadline, started + rt.limits.case_timeout_s)
    calls = CellCalls(case=case, target=target, deadline=deadline)
    run_id = rt.run_id
    running = {
        "case_id": case.id,
        "target_id": target.id,
        "benchmark": case.benchmark,
        "status": "running",
        "queue_wait_s": queue_wait,
        "started_at": started_at,
    }

    rt.writer.post(
        [
            UpsertResult(run_id, running),
            AppendEvent(run_id, "case_running", {"case_id": case.id, "target_id": target.id}),
        ]
    )
    status = "completed"
    error: str | None = None
    grade: Grade | None = None
    try:
        async with asyncio.timeout(max(0.001, deadline - started)):
            grade = _check_grade(await adapter.evaluate(CellRun(rt, calls)))
    except TimeoutError:
        calls.cancelled = True
        status, error = "cancelled", "case deadline exceeded (case_timeout_s)"
    except CellCancelled as cancelled:
        status, error = "cancelled", str(cancelled)
    except asyncio.CancelledError:
        calls.cancelled = True
        _uncancel()
        status, error = "cancelled", "Request cancelled after the run stopped"
    except CallFailure as failure:
        status, error = ("cancelled" if calls.cancelled else "failed"), str(failure)
    except Exception as unexpected:  # an adapter bug must not take the run down
        status, error = "failed", f"Adapter error: {type(unexpected).__name__}: {unexpected}"
    if calls.output_limited and status != "cancelled":
        status, error = "completed", None
        grade = Grade(
            correct=False,
            answer=None if grade is None else grade.answer,
            details={
                **(grade.details if grade else {}),
                "quality_failure": "output_limit",
                "output_complete": False,
            },
        )
    finished = time.monotonic()
    usages = calls.subject_usages
    costs = calls.subject_costs
    result: dict[str, Any] = {
        **running,
        "status": status,
        "correct": grade.correct if grade and status == "completed" else None,
        "answer": grade.answer if grade else None,
        "score": (1 if grade.correct else 0) if grade and status == "completed" else None,
        "details": grade.details if grade else {},
        "error": error,
        "latency_s": finished - started,
        "subject_latency_s": calls.subject_latency_s,
        "ttft_s": calls.first_ttft_s,
        "usage": add_buckets(usages) if usages and all(u is not None for u in usages) else None,
        "cost_usd": sum(costs) if costs and all(is_known_cost(c) for c in costs) else None,
        "call_count": calls.calls_made,
        "finished_at": now_iso(),
    }
    observe = status != "completed" and not rt.failure_observed
    if status != "completed":
        rt.failures += 1
        if observe:
            rt.failure_observed = True
        if rt.max_failures is not None and rt.failures >= rt.max_failures:
            rt.fail_closed(f"stopped after {rt.failures} failed cell(s) (fail-closed)")
    reason = summarize_failure(error) if error else None

    writes: list[Write] = [
        UpsertResult(run_id, result),
        AppendEvent(run_id, f"case_{status}", {"case_id": case.id, "target_id": target.id}),
    ]
    if observe and reason is not None:
        writes.append(
            AppendEvent(
                run_id,
                "failure_observed",
                {
                    "case_id": case.id,
                    "target_id": target.id,
                    "reason": reason,
                    "summary": f"Case {safe_id(case.id)}, target {safe_id(target.id)}: {reason}",
                    "inferred_from_saved_results": False,
                },
            )
        )
    return result, rt.writer.run(writes)


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
