"""Group commit on the engine's event loop: write intents queued during one loop iteration
share one transaction, committed at the start of the next iteration.

``await writer.run(writes)`` returns once the writes are committed (a ``sent`` call row before
its request leaves); ``writer.post(writes)`` queues without waiting, and such non-urgent
writes are held up to ``linger_s`` to join a larger batch. Commits are grouped by time as well
as by iteration: an urgent batch waits until ``min_interval_s`` after the previous commit
(at most 500 commits a second by default), so that under load the ``sent`` rows of cells that
start close together share one transaction and one fsync instead of one each (issue 48: the
sys time of waiting runs was mostly commits). A request still leaves only once its row is
committed; it may merely leave up to ``min_interval_s`` later. Everything happens on the
loop thread: no writer thread means no GIL hand-offs between SQLite steps under load.

Without a running loop (tools, tests) ``post`` and ``run`` apply immediately.

Every intent passes the writer's ``redactor`` on its way in: the one place where what the
engine records meets the API key values of the run's targets, so an endpoint that echoes a
key (in an error body, a header, the stream) never gets it into the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import replace
from typing import Protocol

from pytest_srbench.core.redact import Redactor
from pytest_srbench.store.writes import (
    AppendEvent,
    FinishCall,
    InsertCall,
    UpsertResult,
    Write,
)


class _Batched(Protocol):
    def transaction(self) -> contextlib.AbstractContextManager[None]: ...

    def write_batch(self, writes: list[Write]) -> None: ...


class GroupCommitWriter:
    """Batches write intents into few transactions; owned by one event loop (or none)."""

    def __init__(
        self, store: _Batched, *, linger_s: float = 0.02, min_interval_s: float = 0.002
    ) -> None:
        self.store = store
        self.linger_s = linger_s
        self.min_interval_s = min_interval_s
        self._last_commit = float("-inf")  # time.monotonic() of the last batch committed
        self._pending: list[tuple[list[Write], asyncio.Future[None] | None]] = []
        self._urgent: asyncio.Handle | None = None
        self._lazy: asyncio.TimerHandle | None = None
        self.commits = 0
        self.writes = 0
        self.errors: list[BaseException] = []
        self.redactor = Redactor(())

    def redact(self, write: Write) -> Write:
        """``write`` with every secret the redactor knows replaced (rows, events, evidence)."""
        redactor = self.redactor
        if not redactor:
            return write
        if isinstance(write, FinishCall):
            return FinishCall(
                write.run_id, redactor.value(write.row), redactor.data(write.evidence)
            )
        if isinstance(write, InsertCall | UpsertResult):
            return replace(write, row=redactor.value(write.row))
        if isinstance(write, AppendEvent):
            return replace(write, data=redactor.value(write.data))
        return write

    @staticmethod
    def _loop() -> asyncio.AbstractEventLoop | None:
        try:
            return asyncio.get_running_loop()
        except RuntimeError:
            return None

    def post(self, writes: list[Write]) -> None:
        """Queue writes; they commit with the next batch (within ``linger_s``)."""
        self._pending.append(([self.redact(write) for write in writes], None))
        loop = self._loop()
        if loop is None:
            self.flush()
        elif self._urgent is None and self._lazy is None:
            self._lazy = loop.call_later(self.linger_s, self.flush)

    def run(self, writes: list[Write]) -> asyncio.Future[None]:
        """Queue writes and return a future that resolves once they are committed."""
        loop = self._loop()
        if loop is None:
            raise RuntimeError("GroupCommitWriter.run needs a running event loop; use post()")
        waiter: asyncio.Future[None] = loop.create_future()
        self._pending.append(([self.redact(write) for write in writes], waiter))
        if self._urgent is None:
            wait = self._last_commit + self.min_interval_s - time.monotonic()
            self._urgent = (
                loop.call_later(wait, self.flush) if wait > 0 else loop.call_soon(self.flush)
            )
        return waiter

    def flush(self) -> None:
        """Commit everything queued now (in the caller's thread)."""
        if self._urgent is not None:
            self._urgent.cancel()
            self._urgent = None
        if self._lazy is not None:
            self._lazy.cancel()
            self._lazy = None
        groups, self._pending = self._pending, []
        if not groups:
            return
        batch = [write for writes, _ in groups for write in writes]
        self._last_commit = time.monotonic()
        try:
            with self.store.transaction():
                self.store.write_batch(batch)
        except Exception:
            self._commit_one_by_one(groups)
        else:
            self.commits += 1
            self.writes += len(batch)
            for _, waiter in groups:
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)

    def _commit_one_by_one(
        self, groups: list[tuple[list[Write], asyncio.Future[None] | None]]
    ) -> None:
        """Isolate a failing group: every other group still commits, each waiter learns its own fate."""
        for writes, waiter in groups:
            try:
                with self.store.transaction():
                    self.store.write_batch(writes)
            except Exception as error:
                self.errors.append(error)
                if waiter is not None and not waiter.done():
                    waiter.set_exception(error)
            else:
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
            self.commits += 1
            self.writes += len(writes)

    def close(self) -> None:
        """Commit whatever is still queued."""
        self.flush()
