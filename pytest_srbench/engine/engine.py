"""The per-process engine: an asyncio loop in a background thread that runs the cells this
process owns, at most ``concurrency`` at a time, in plan order.

A pytest item is a view onto its cell: it blocks on the cell's future while calls for
many cells overlap on the engine's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from pytest_srbench.benchmarks.base import Adapter
from pytest_srbench.core.models import Case, Target
from pytest_srbench.engine.cell import run_cell
from pytest_srbench.engine.runtime import RunRuntime

CellKey = tuple[str, str]


@dataclass(frozen=True)
class EngineOptions:
    """Execution settings that do not change results (so they stay out of the plan)."""

    concurrency: int = 16
    target_concurrency: dict[str, int] | None = None
    watch_interval_s: float = 0.5


@dataclass(frozen=True)
class CellOutcome:
    """What a pytest item learns about its cell."""

    status: str
    result: dict[str, Any] | None
    reason: str | None = None


def _report(
    future: Future[CellOutcome],
    outcome: CellOutcome,
    pending: set[asyncio.Future[Any]],
    committed: asyncio.Future[Any],
) -> None:
    """Resolve an item's future once its cell's result row is committed."""
    pending.discard(committed)
    if future.done():
        return
    if committed.cancelled() or committed.exception() is not None:
        future.set_result(CellOutcome("failed", outcome.result, "the result could not be stored"))
    else:
        future.set_result(outcome)


def _engine_failure(future: Future[CellOutcome], error: BaseException) -> None:
    """An item's cell failed inside the engine itself (not in its protocol)."""
    if not future.done():
        future.set_result(CellOutcome("failed", None, f"engine error: {type(error).__name__}"))


class Engine:
    """Owns a thread with an event loop; dispatches cells and resolves one future per cell."""

    def __init__(self, runtime: RunRuntime, options: EngineOptions) -> None:
        self.runtime = runtime
        self.options = options
        self.futures: dict[CellKey, Future[CellOutcome]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._done = threading.Event()
        self._closed: asyncio.Event | None = None
        self._submitted: set[asyncio.Task[Any]] = set()
        self._slots: dict[str | None, asyncio.Semaphore] = {}  # submitted cells: run, target
        self.in_flight = 0
        self._submissions = 0  # submitted cells without an outcome yet (any thread reads)
        self._submissions_lock = threading.Lock()
        self.finished = 0

    def start(self, cells: Iterable[tuple[Case, Target]], *, keep_open: bool = False) -> None:
        """Begin dispatching ``cells`` (in the given order) on a background loop.

        ``keep_open``: the loop stays up after them for cells submitted one by one
        (``submit``) until ``close``; a test body written by the user runs this way."""
        queue = [(case, target) for case, target in cells]
        for case, target in queue:
            self.futures[(case.id, target.id)] = Future()
        ready = threading.Event()

        def main() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self._closed = asyncio.Event()
            self._slots = {None: asyncio.Semaphore(max(1, self.options.concurrency))}
            for target_id, cap in (self.options.target_concurrency or {}).items():
                self._slots[target_id] = asyncio.Semaphore(cap)
            if not keep_open:
                self._closed.set()
            ready.set()
            try:
                loop.run_until_complete(self._dispatch(queue))
            finally:
                loop.run_until_complete(self.runtime.close_transports())
                self.runtime.writer.close()
                self.runtime.store.close_evidence()
                loop.close()
                self._done.set()

        self._thread = threading.Thread(target=main, name="srbench-engine", daemon=True)
        self._thread.start()
        ready.wait()

    async def _dispatch(self, queue: list[tuple[Case, Target]]) -> None:
        rt = self.runtime
        iterator = iter(queue)
        limits = {
            tid: asyncio.Semaphore(n) for tid, n in (self.options.target_concurrency or {}).items()
        }

        async def worker() -> None:
            for case, target in iterator:
                future = self.futures[(case.id, target.id)]
                if rt.stopping():
                    future.set_result(
                        CellOutcome("pending", None, f"not dispatched: {rt.stop_reason}")
                    )
                    continue
                semaphore = limits.get(target.id)
                if semaphore is not None:
                    await semaphore.acquire()
                self.in_flight += 1
                try:
                    result, committed = await run_cell(rt, case, target)
                except BaseException as error:  # never leave an item waiting forever
                    _engine_failure(future, error)
                    if isinstance(error, asyncio.CancelledError):
                        raise
                    continue
                finally:
                    self.in_flight -= 1
                    self.finished += 1
                    if semaphore is not None:
                        semaphore.release()
                pending_commits.add(committed)
                committed.add_done_callback(
                    functools.partial(
                        _report,
                        future,
                        CellOutcome(result["status"], rt.redactor.value(result)),
                        pending_commits,
                    )
                )

        pending_commits: set[asyncio.Future[Any]] = set()

        def abort_others() -> None:
            current = asyncio.current_task()
            for task in self._tasks:
                if task is not current:
                    task.cancel()

        rt.abort_in_flight = abort_others  # (fail-closed: submitted cells are not aborted)
        self._tasks = [
            asyncio.create_task(worker()) for _ in range(max(1, self.options.concurrency))
        ]
        watcher = asyncio.create_task(self._watch())
        try:
            outcomes = await asyncio.gather(*self._tasks, return_exceptions=True)
            assert self._closed is not None
            await self._closed.wait()
            if self._submitted:
                await asyncio.gather(*self._submitted, return_exceptions=True)
        finally:
            watcher.cancel()
        crashes = [error for error in outcomes if isinstance(error, Exception)]
        if crashes:
            rt.stop(f"engine error: {type(crashes[0]).__name__}: {crashes[0]}")
        if pending_commits:
            await asyncio.gather(*pending_commits, return_exceptions=True)
        for future in self.futures.values():
            if not future.done():
                future.set_result(
                    CellOutcome("pending", None, f"not dispatched: {rt.stop_reason or 'stopped'}")
                )
        rt.writer.flush()

    async def _watch(self) -> None:
        """Every ``watch_interval_s``: publish in-flight progress, and stop when another
        process asked to cancel the run (``srbench cancel``)."""
        rt = self.runtime
        while True:
            await asyncio.sleep(self.options.watch_interval_s)
            rt.publish_progress()
            if not rt.user_cancelled and rt.store.cancellation_requested(rt.run_id):
                rt.stop("cancelled by request (srbench cancel)", user=True)
                for task in self._tasks:
                    task.cancel()
                return

    def submit(self, case: Case, target: Target, adapter: Adapter) -> Future[CellOutcome]:
        """Run one cell with ``adapter`` (from any thread); its outcome once it is committed.

        Cells submitted this way keep every rule of dispatched ones: the run's stop, the
        per-cell deadline, the budget and the journal."""
        future: Future[CellOutcome] = Future()
        self.futures[(case.id, target.id)] = future
        with self._submissions_lock:
            self._submissions += 1
        future.add_done_callback(self._submission_done)
        loop = self._loop
        if loop is None or self._done.is_set():
            future.set_result(CellOutcome("pending", None, "not dispatched: the engine stopped"))
            return future

        def begin() -> None:
            task = asyncio.ensure_future(self._run_submitted(case, target, adapter, future))
            self._submitted.add(task)
            task.add_done_callback(self._submitted.discard)

        loop.call_soon_threadsafe(begin)
        return future

    def _submission_done(self, _: Future[CellOutcome]) -> None:
        with self._submissions_lock:
            self._submissions -= 1

    @property
    def unfinished_submissions(self) -> int:
        """Submitted cells whose outcome is not known yet."""
        return self._submissions

    async def _run_submitted(
        self, case: Case, target: Target, adapter: Adapter, future: Future[CellOutcome]
    ) -> None:
        rt = self.runtime
        async with contextlib.AsyncExitStack() as slots:
            for key in (None, target.id):
                if key in self._slots:
                    await slots.enter_async_context(self._slots[key])
            if rt.stopping():
                future.set_result(CellOutcome("pending", None, f"not dispatched: {rt.stop_reason}"))
                return
            await self._run_one(case, target, adapter, future)

    async def _run_one(
        self, case: Case, target: Target, adapter: Adapter, future: Future[CellOutcome]
    ) -> None:
        rt = self.runtime
        self.in_flight += 1
        try:
            result, committed = await run_cell(rt, case, target, adapter)
            await asyncio.wait([committed])
        except BaseException as error:  # never leave an item waiting forever
            _engine_failure(future, error)
            if isinstance(error, asyncio.CancelledError):
                raise
            return
        finally:
            self.in_flight -= 1
            self.finished += 1
        _report(future, CellOutcome(result["status"], rt.redactor.value(result)), set(), committed)

    def close(self) -> None:
        """No more cells will be submitted: the loop ends once those in flight are done."""

        def closing() -> None:
            if self._closed is not None:
                self._closed.set()

        self._call_on_loop(closing)

    def cancel(self, reason: str, *, user: bool = True) -> None:
        """Stop new dispatch and abort in-flight cells (they end ``cancelled``)."""

        def stop() -> None:
            self.runtime.stop(reason, user=user)
            for task in [*self._tasks, *self._submitted]:
                task.cancel()
            if self._closed is not None:
                self._closed.set()

        self._call_on_loop(stop)

    def stop_dispatch(self, reason: str) -> None:
        """Stop starting new cells; in-flight cells finish normally."""
        self._call_on_loop(lambda: self.runtime.stop(reason))

    def _call_on_loop(self, action: Callable[[], None]) -> None:
        """Run ``action`` on the engine's loop; nothing when the loop has already ended (it
        may close between the ``_done`` check and the call: every cell then has its outcome)."""
        loop = self._loop
        if loop is None or self._done.is_set():
            return
        with contextlib.suppress(RuntimeError):  # "Event loop is closed"
            loop.call_soon_threadsafe(action)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the loop to finish; True when it did."""
        return self._done.wait(timeout)
