"""Running one cell: the adapter's protocol inside a case deadline, then one result row."""

from __future__ import annotations

import asyncio
import contextlib
import math
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_srbench.benchmarks.base import Adapter, CodeRun, Grade, ModelReply, NotGraded
from pytest_srbench.core.calls.failures import (
    CallFailure,
    CellCancelled,
    failure_reason,
    safe_id,
    summarize_failure,
)
from pytest_srbench.core.calls.usage import add_buckets, is_known_cost
from pytest_srbench.core.case_events import case_event_data
from pytest_srbench.core.models import Case, CellStatus, Role, Target
from pytest_srbench.core.plan.build import request_params_for
from pytest_srbench.core.records import CellResult
from pytest_srbench.core.report.tasks import unavailable_embedding
from pytest_srbench.engine.call import CellCalls, call_model
from pytest_srbench.engine.preview import preview_call
from pytest_srbench.engine.retrieval import retrieval_call
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.store.base import now_iso
from pytest_srbench.store.writes import AppendEvent, UpsertResult, Write


class CellRun:
    """The ``CellContext`` an adapter sees for one (case, target)."""

    def __init__(self, rt: RunRuntime, calls: CellCalls) -> None:
        self._rt = rt
        self._calls = calls
        self._workdir: Path | None = None

    @property
    def workdir(self) -> Path:
        """This cell's task directory (created on first use, removed when the cell ends)."""
        if self._workdir is None:
            self._workdir = Path(tempfile.mkdtemp(prefix="srbench-task-"))
        return self._workdir

    def cleanup(self) -> None:
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None

    async def run_python(
        self,
        code: str,
        *,
        stdin: str = "",
        timeout_s: float = 6.0,
        files: Mapping[str, str] | None = None,
        read_only: Sequence[Path] = (),
    ) -> CodeRun:
        from pytest_srbench import sandbox

        result = await sandbox.run_python(
            code, stdin=stdin, limits=_limits(timeout_s), files=files, read_only=read_only
        )
        return _code_run(result)

    async def run_shell(self, command: str, *, timeout_s: float = 30.0) -> CodeRun:
        from pytest_srbench import sandbox

        result = await sandbox.run_shell(command, workdir=self.workdir, limits=_limits(timeout_s))
        return _code_run(result)

    def seed_files(self, files: Mapping[str, str]) -> None:
        root = self.workdir.resolve()
        for relative, text in files.items():
            target = (root / relative).resolve()
            if root not in target.parents:
                raise CallFailure(f"Task file path escapes the task directory: {relative!r}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    @contextlib.asynccontextmanager
    async def container(self, spec: Mapping[str, Any]) -> AsyncIterator[_CellContainer]:
        from pytest_srbench.core.container_spec import ContainerSpec
        from pytest_srbench.sandbox import container

        try:
            parsed = ContainerSpec.from_row(spec)
        except ValueError as error:
            raise NotGraded(f"container of {self.case.id}: {error}") from None
        labels = {
            "srbench.run": self._rt.run_id,
            "srbench.case": self.case.id,
            "srbench.target": self.target.id,
        }
        try:
            async with container.open_container(parsed, labels=labels) as opened:
                yield _CellContainer(opened)
        except container.ContainerUnavailable as unavailable:
            raise NotGraded(str(unavailable)) from None

    def asset(self, reference: Mapping[str, str]) -> bytes:
        return self._rt.asset(self.case.benchmark, reference)

    def suite_asset(self, path: str) -> dict[str, str] | None:
        for suite in self._rt.manifest.dataset.suites:
            if suite.get("benchmark") == self.case.benchmark:
                sha256 = (suite.get("assets") or {}).get(path)
                return {"path": path, "sha256": sha256} if isinstance(sha256, str) else None
        return None

    def asset_path(self, reference: Mapping[str, str]) -> Path:
        return self._rt.asset_path(self.case.benchmark, reference)

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
        via: str | None = None,
    ) -> ModelReply:
        # (the cell's own target named by a subject call is the cell's call; by a judge call,
        # a call to that model in the judge's role, never sent to a bound judge instead)
        target: Target | None = None
        if via is not None and not (role == "subject" and via == self.target.id):
            target = self.target if via == self.target.id else self._rt.inventory[via]
        return await call_model(
            self._rt, self._calls, messages, role=role, extra_body=extra_body, via=target
        )

    @property
    def inventory(self) -> Mapping[str, Target]:
        """Every target of the plan (subjects and auxiliary models), by id."""
        return self._rt.inventory

    def bound_target(self, role: str) -> Target | None:
        """The target the plan binds to this cell's benchmark for ``role`` (its judge, its
        user simulator), or None when the benchmark has none."""
        bound = (self._rt.manifest.benchmark_options.get(self.case.benchmark) or {}).get(role)
        return self._rt.inventory.get(bound) if isinstance(bound, str) else None

    def request_params(self, target: Target) -> dict[str, Any]:
        """The frozen request parameters a call to ``target`` carries."""
        return request_params_for(self._rt.manifest, target)

    async def retrieve(self, query: str) -> tuple[dict[str, Any], float]:
        return await retrieval_call(self._rt, self._calls, query)

    def cancelled(self) -> bool:
        return (
            self._calls.cancelled or self._rt.stopping() or time.monotonic() >= self._calls.deadline
        )


class _CellContainer:
    """A cell's container with the sandbox's per-command limits, as a ``TaskContainer``."""

    def __init__(self, opened: Any) -> None:
        self._opened = opened

    @property
    def name(self) -> str:
        return str(self._opened.name)

    async def run(self, command: str, *, timeout_s: float = 30.0) -> CodeRun:
        limits = _limits(timeout_s)
        result = await self._opened.run(
            command, timeout_s=limits.wall_timeout_s, output_bytes=limits.output_bytes
        )
        return _code_run(result)

    async def put_files(self, files: Mapping[str, str], directory: str) -> None:
        await self._opened.put_files(files, directory)

    async def read_text(self, path: str) -> str | None:
        text: str | None = await self._opened.read_text(path)
        return text


def _limits(timeout_s: float) -> Any:
    from pytest_srbench.sandbox import SandboxLimits

    return SandboxLimits(wall_timeout_s=timeout_s, cpu_seconds=max(1, int(timeout_s) + 1))


def _code_run(result: Any) -> CodeRun:
    return CodeRun(
        status=result.status,
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
        duration_s=result.duration_s,
        reason=result.reason,
    )


def _check_grade(grade: object) -> Grade:
    if not isinstance(grade, Grade) or not isinstance(grade.correct, bool):
        raise CallFailure("Adapter result requires a terminal binary graded outcome")
    return grade


async def run_cell(
    rt: RunRuntime, case: Case, target: Target, adapter: Adapter | None = None
) -> tuple[CellResult, asyncio.Future[Any]]:
    """Execute one cell; returns its result row and the future of the row's commit.

    The caller need not wait for the commit before starting the next cell; it must not
    report the cell before the commit resolved. ``adapter`` replaces the benchmark's own
    protocol (a test body written by the user runs this way).
    """
    adapter = adapter or rt.adapters.get(case.benchmark)
    started = time.monotonic()
    started_at = now_iso()
    queue_wait = started - rt.started
    deadline = min(rt.deadline, started + rt.limits.case_timeout_s)
    calls = CellCalls(case=case, target=target, deadline=deadline)
    run_id = rt.run_id
    running: CellResult = {
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
    status: CellStatus = "completed"
    error: str | None = None
    grade: Grade | None = None
    details: dict[str, Any] = {}
    context = CellRun(rt, calls)
    try:
        async with asyncio.timeout(max(0.001, deadline - started)):
            if rt.manifest.mode == "preview":
                details["routing"] = await preview_call(rt, calls)
            else:
                grade = _check_grade(await adapter.evaluate(context))
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
    except NotGraded as refused:
        status, error = "failed", str(refused)
    except Exception as unexpected:  # an adapter bug must not take the run down
        status, error = "failed", f"Adapter error: {type(unexpected).__name__}: {unexpected}"
    finally:
        context.cleanup()
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
    reason = failure_reason(error) if error else None  # the cell's own one-line reason
    if grade is None and status != "completed" and target.kind == "retrieval":
        summary = summarize_failure(error) if error else None  # no query vector made
        details["rag"] = {"embedding": unavailable_embedding(summary)}
    result: CellResult = {
        **running,
        "status": status,
        "correct": grade.correct if grade and status == "completed" else None,
        "answer": grade.answer if grade else None,
        "score": (1 if grade.correct else 0) if grade and status == "completed" else None,
        "details": grade.details if grade else details,
        "error": error,
        "latency_s": finished - started,
        "subject_latency_s": calls.subject_latency_s,
        "ttft_s": calls.first_ttft_s,
        "usage": add_buckets(usages) if usages and all(u is not None for u in usages) else None,
        "cost_usd": math.fsum(costs) if costs and all(is_known_cost(c) for c in costs) else None,
        "call_count": calls.calls_made,
        "finished_at": now_iso(),
    }
    if calls.cached_calls:
        result["cached_calls"] = calls.cached_calls
    observe = status != "completed" and not rt.failure_observed
    if status != "completed":
        rt.failures += 1
        if observe:
            rt.failure_observed = True
        if rt.max_failures is not None and rt.failures >= rt.max_failures:
            rt.fail_closed(
                f"stopped after {rt.failures} failed cell(s) (fail-closed); the last: "
                f"{safe_id(case.id)}[{safe_id(target.id)}] {status}: {reason or status}"
            )

    writes: list[Write] = [
        UpsertResult(run_id, result),
        AppendEvent(run_id, f"case_{status}", case_event_data(result, target.kind)),
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
