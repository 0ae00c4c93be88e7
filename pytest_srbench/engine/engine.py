"""The per-process engine: an asyncio loop in a background thread that runs the cells this
process owns, at most ``concurrency`` at a time, in plan order.

A pytest item is a view onto its cell: it blocks on the cell's outcome slot while calls for
many cells overlap on the engine's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_srbench.benchmarks.base import Adapter
from pytest_srbench.core.models import Case, Target, variant_of
from pytest_srbench.engine.cell import run_cell
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.engine.slots import OutcomeSlot
from pytest_srbench.engine.threads import DaemonThreads
from pytest_srbench.store.base import StoreUnavailable

CellKey = tuple[str, str]


@dataclass(frozen=True)
class EngineOptions:
    """Execution settings that do not change results (so they stay out of the plan)."""

    concurrency: int = 16
    target_concurrency: dict[str, int] | None = None
    watch_interval_s: float = 0.5


@dataclass(frozen=True, slots=True)
class BodyTrace:
    """What a test body left besides its answer, for its item's report (in this process only:
    across xdist the worker that ran the body makes the report): the exception it raised (with
    its traceback) and what it wrote, as pytest's report sections (``("stdout", text)``)."""

    exception: BaseException | None = None
    sections: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class CellOutcome:
    """What a pytest item learns about its cell."""

    status: str
    result: dict[str, Any] | None
    reason: str | None = None
    stored: bool = False  # this engine ran the cell and its result row is committed
    trace: BodyTrace | None = field(default=None, compare=False, repr=False)


def _report(
    slot: OutcomeSlot[CellOutcome],
    outcome: CellOutcome,
    pending: set[asyncio.Future[Any]],
    committed: asyncio.Future[Any],
) -> None:
    """Fill an item's slot once its cell's result row is committed."""
    pending.discard(committed)
    if slot.done():
        return
    if committed.cancelled() or committed.exception() is not None:
        slot.set_result(CellOutcome("failed", outcome.result, "the result could not be stored"))
    else:
        slot.set_result(replace(outcome, stored=True))


def _put_all(queue: asyncio.Queue[Work | None], work: list[Work]) -> None:
    for each in work:
        queue.put_nowait(each)


def _engine_failure(slot: OutcomeSlot[CellOutcome], error: BaseException) -> None:
    """An item's cell failed inside the engine itself (not in its protocol)."""
    slot.set_result(CellOutcome("failed", None, f"engine error: {type(error).__name__}"))


@dataclass(frozen=True, slots=True)
class Work:
    """One cell waiting for a worker: its case and target, the protocol that runs it (None: its
    benchmark's own; a test body's adapter for a benchmark written as a test) and its slot."""

    case: Case
    target: Target
    adapter: Adapter | None
    slot: OutcomeSlot[CellOutcome]


class Engine:
    """Owns a thread with an event loop; runs cells and fills one outcome slot per cell.

    There is one way in: every cell, whether the plan's cells handed to ``start`` or a test
    body's cell handed to ``submit`` while pytest walks the items, joins one queue that one pool
    of ``concurrency`` workers serves in order, under the same per-target limits, stop rules,
    budget and journal."""

    def __init__(self, runtime: RunRuntime, options: EngineOptions) -> None:
        self.runtime = runtime
        self.options = options
        self.slots: dict[CellKey, OutcomeSlot[CellOutcome]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._done = threading.Event()
        self._queue: asyncio.Queue[Work | None] | None = None
        self._pending_commits: set[asyncio.Future[Any]] = set()
        self.in_flight = 0
        self.peak_in_flight = 0  # the most cells in flight at once (the effective concurrency)
        self._submissions = 0  # submitted cells without an outcome yet (any thread reads)
        self._submissions_lock = threading.Lock()
        self.finished = 0

    @property
    def workers(self) -> int:
        return max(1, self.options.concurrency)

    def start(self, cells: Iterable[tuple[Case, Target]], *, keep_open: bool = False) -> None:
        """Begin running ``cells`` (in the given order) on a background loop.

        ``keep_open``: the loop stays up after them for cells submitted one by one
        (``submit``) until ``close``; a test body written by the user runs this way."""
        queue = []
        for case, target in cells:
            slot: OutcomeSlot[CellOutcome] = OutcomeSlot()
            self.slots[(case.id, target.id)] = slot
            queue.append(Work(case, target, None, slot))
        ready = threading.Event()
        failed: list[BaseException] = []  # why the loop could not start, if it could not

        def main() -> None:
            try:
                loop = asyncio.new_event_loop()
                # a body blocked past its cell's deadline is abandoned, never waited for at exit
                loop.set_default_executor(DaemonThreads())
                self._loop = loop
                asyncio.set_event_loop(loop)
                self._queue = asyncio.Queue()
                for work in queue:
                    self._queue.put_nowait(work)
                queue.clear()  # the asyncio queue holds them now: a finished cell is not kept
                if not keep_open:
                    self._close_queue()
            except BaseException as error:  # the caller learns why instead of waiting forever
                failed.append(error)
                self._done.set()
                return
            finally:
                ready.set()
            try:
                loop.run_until_complete(self._dispatch())
            finally:
                loop.run_until_complete(self.runtime.close_transports())
                self.runtime.writer.close()
                self.runtime.store.close_evidence()
                loop.close()
                self._done.set()
                self._settle_unrun()
                self.runtime.store.close()  # this thread's connection (the WAL is merged
                # when the last one closes: the interpreter's exit does not close them)

        self._thread = threading.Thread(target=main, name="srbench-engine", daemon=True)
        self._thread.start()
        ready.wait()
        if failed:
            self._settle_unrun()
            raise RuntimeError(f"the engine's loop could not start: {failed[0]!r}") from failed[0]

    def _settle_unrun(self) -> None:
        """After the loop ended: a cell queued too late to run is pending, never left open."""
        for slot in list(self.slots.values()):
            if not slot.done():
                slot.set_result(CellOutcome("pending", None, "not dispatched: stopped"))

    def _close_queue(self) -> None:
        """No more work: one end mark per worker (on the loop)."""
        assert self._queue is not None
        for _ in range(self.workers):
            self._queue.put_nowait(None)

    async def _dispatch(self) -> None:
        rt = self.runtime
        assert self._queue is not None
        queue = self._queue
        limits = {
            tid: asyncio.Semaphore(n) for tid, n in (self.options.target_concurrency or {}).items()
        }

        async def worker() -> None:
            while (work := await queue.get()) is not None:
                if rt.stopping():
                    work.slot.set_result(
                        CellOutcome("pending", None, f"not dispatched: {rt.stop_reason}")
                    )
                    continue
                semaphore = limits.get(variant_of(work.target.id)[0])  # variants share it
                if semaphore is not None:
                    await semaphore.acquire()
                try:
                    await self._run_one(work)
                finally:
                    if semaphore is not None:
                        semaphore.release()

        def abort_others() -> None:
            current = asyncio.current_task()
            for task in self._tasks:
                if task is not current:
                    task.cancel()

        rt.abort_in_flight = abort_others
        self._tasks = [asyncio.create_task(worker()) for _ in range(self.workers)]
        watcher = asyncio.create_task(self._watch())
        try:
            outcomes = await asyncio.gather(*self._tasks, return_exceptions=True)
        finally:
            watcher.cancel()
        crashes = [error for error in outcomes if isinstance(error, Exception)]
        if crashes:
            rt.stop(f"engine error: {type(crashes[0]).__name__}: {crashes[0]}")
        if self._pending_commits:
            await asyncio.gather(*self._pending_commits, return_exceptions=True)
        for slot in self.slots.values():
            if not slot.done():
                slot.set_result(
                    CellOutcome("pending", None, f"not dispatched: {rt.stop_reason or 'stopped'}")
                )
        rt.writer.flush()

    async def _run_one(self, work: Work) -> None:
        """Run one cell; its slot resolves once its result row is committed (the worker
        goes on meanwhile, so that commits batch)."""
        rt = self.runtime
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            result, committed = await run_cell(rt, work.case, work.target, work.adapter)
        except BaseException as error:  # never leave an item waiting forever
            _engine_failure(work.slot, error)
            if isinstance(error, asyncio.CancelledError):
                raise
            return
        finally:
            self.in_flight -= 1
            self.finished += 1
        self._pending_commits.add(committed)
        # a test body's adapter keeps what the body left for its item (None: nothing)
        trace = getattr(work.adapter, "trace", None)
        outcome = CellOutcome(result["status"], rt.redactor.value(result), trace=trace)
        committed.add_done_callback(
            functools.partial(_report, work.slot, outcome, self._pending_commits)
        )

    async def _watch(self) -> None:
        """Every ``watch_interval_s``: publish in-flight progress, and stop when another
        process asked to cancel the run (``srbench cancel``)."""
        rt = self.runtime
        while True:
            await asyncio.sleep(self.options.watch_interval_s)
            rt.publish_progress()
            try:
                cancelled = not rt.user_cancelled and rt.store.cancellation_requested(rt.run_id)
            except StoreUnavailable:
                continue  # the store is away for now: asked again at the next tick
            if cancelled:
                rt.stop("cancelled by request (srbench cancel)", user=True)
                for task in self._tasks:
                    task.cancel()
                return

    def submit(self, case: Case, target: Target, adapter: Adapter) -> OutcomeSlot[CellOutcome]:
        """Queue one cell run by ``adapter`` (from any thread); its outcome once committed."""
        return self.submit_many([(case, target, adapter)])[0]

    def submit_many(
        self, cells: Sequence[tuple[Case, Target, Adapter]]
    ) -> list[OutcomeSlot[CellOutcome]]:
        """Queue cells, in order, with one wake-up of the engine's loop (from any thread);
        their outcome slots."""
        slots: list[OutcomeSlot[CellOutcome]] = []
        work = []
        for case, target, adapter in cells:
            slot: OutcomeSlot[CellOutcome] = OutcomeSlot(self._submission_done)
            self.slots[(case.id, target.id)] = slot
            slots.append(slot)
            work.append(Work(case, target, adapter, slot))
        with self._submissions_lock:
            self._submissions += len(work)
        loop, queue = self._loop, self._queue
        stopped = loop is None or queue is None or self._done.is_set()
        if loop is not None and queue is not None and not stopped:
            try:
                loop.call_soon_threadsafe(_put_all, queue, work)
            except RuntimeError:  # the loop closed meanwhile
                stopped = True
        if stopped:
            for slot in slots:
                slot.set_result(CellOutcome("pending", None, "not dispatched: the engine stopped"))
        return slots

    def _submission_done(self, _: OutcomeSlot[CellOutcome]) -> None:
        with self._submissions_lock:
            self._submissions -= 1

    @property
    def unfinished_submissions(self) -> int:
        """Submitted cells whose outcome is not known yet."""
        return self._submissions

    def close(self) -> None:
        """No more cells will be submitted: the loop ends once the queued ones are done."""
        self._call_on_loop(self._close_queue)

    def cancel(self, reason: str, *, user: bool = True) -> None:
        """Stop new dispatch and abort in-flight cells (they end ``cancelled``)."""

        def stop() -> None:
            self.runtime.stop(reason, user=user)
            for task in self._tasks:
                task.cancel()

        self._call_on_loop(stop)

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
