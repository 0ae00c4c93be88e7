"""Group commit on the engine's event loop: write intents queued during one loop iteration
share one transaction, committed at the start of the next iteration.

``await writer.run(writes)`` returns once the writes are committed (a ``sent`` call row before
its request leaves); ``writer.post(writes)`` queues without waiting, and such non-urgent
writes are held up to ``linger_s`` to join a larger batch. Everything happens on the loop
thread: no writer thread means no GIL hand-offs between SQLite steps under load.

Without a running loop (tools, tests) ``post`` and ``run`` apply immediately.

A write the store refuses for a reason that can pass (``StoreUnavailable``: another process's
write lock, a lost database connection, a full disk) is never dropped: it stays queued, in
memory, and is retried with a bounded backoff for ``SRBENCH_STORE_OUTAGE_S`` (default 60 s)
from the start of the outage; the ``on_outage`` callback hears of the outage at once. Only when
the window passes are the writes given up: they are kept in ``unwritten``, their waiters fail
and ``on_give_up`` hears why (the engine stops the run and the session fails loudly).

Every intent passes the writer's ``redactor`` on its way in: the one place where what the
engine records meets the API key values of the run's targets, so an endpoint that echoes a
key (in an error body, a header, the stream) never gets it into the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Protocol, TypeVar

from pytest_srbench.core.redact import Redactor
from pytest_srbench.store.base import StoreError, StoreUnavailable
from pytest_srbench.store.writes import (
    AppendEvent,
    FinishCall,
    InsertCall,
    UpsertResult,
    Write,
)

T = TypeVar("T")
OUTAGE_ENV = "SRBENCH_STORE_OUTAGE_S"
DEFAULT_OUTAGE_S = 60.0
_FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}

Group = tuple[list[Write], "asyncio.Future[None] | None"]


def outage_window_s() -> float:
    """How long writes the store refuses are retried: ``SRBENCH_STORE_OUTAGE_S`` or 60."""
    text = os.environ.get(OUTAGE_ENV, "").strip()
    if not text:
        return DEFAULT_OUTAGE_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86400:
        raise StoreError(f"{OUTAGE_ENV} must be a number of seconds in 0..86400")
    return value


def unavailable(error: BaseException) -> StoreUnavailable | None:
    """``error`` as a ``StoreUnavailable`` when it may pass (a lock, a lost connection, a full
    disk, including an evidence file that cannot grow); None for any other error."""
    if isinstance(error, StoreUnavailable):
        return error
    if isinstance(error, OSError) and error.errno in _FULL:
        return StoreUnavailable(f"disk full: {error.strerror or error}", "disk full")
    return None


def retrying(action: Callable[[], T], window_s: float | None = None) -> T:
    """``action()``, tried again with a bounded backoff while the store is unavailable (a
    lost connection, a lock, a full disk) for up to ``window_s`` (default: the outage
    window); then its ``StoreUnavailable`` is raised."""
    deadline = time.monotonic() + (outage_window_s() if window_s is None else window_s)
    delay = 0.2
    while True:
        try:
            return action()
        except Exception as error:
            if unavailable(error) is None or time.monotonic() + delay > deadline:
                raise
        time.sleep(delay)
        delay = min(2.0, delay * 2)


class _Batched(Protocol):
    def transaction(self) -> contextlib.AbstractContextManager[None]: ...

    def write_batch(self, writes: list[Write]) -> None: ...


class GroupCommitWriter:
    """Batches write intents into few transactions; owned by one event loop (or none)."""

    def __init__(self, store: _Batched, *, linger_s: float = 0.02) -> None:
        self.store = store
        self.linger_s = linger_s
        self._pending: list[Group] = []
        self._urgent: asyncio.Handle | None = None
        self._lazy: asyncio.TimerHandle | None = None
        self.commits = 0
        self.writes = 0
        self.errors: list[BaseException] = []
        self.redactor = Redactor(())
        self.outage_window_s = outage_window_s()
        self.outage: StoreUnavailable | None = None  # the store refuses writes now
        self._outage_since: float | None = None
        self._retries = 0
        self.outages: list[str] = []  # every outage seen, in order (its message)
        self.unwritten: list[Write] = []  # given up on: the store never took them
        self.gave_up: StoreUnavailable | None = None
        self.stopped_run = False  # on_give_up was called: the run stops
        self.on_outage: Callable[[StoreUnavailable], None] | None = None
        self.on_give_up: Callable[[StoreUnavailable], None] | None = None
        self.on_recovered: Callable[[], None] | None = None

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
        if self._urgent is None and self.outage is None:  # in an outage: the retry's turn
            self._urgent = loop.call_soon(self.flush)
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
        try:
            with self.store.transaction():
                self.store.write_batch(batch)
        except Exception as error:
            outage = unavailable(error)
            if outage is not None:
                self._hold(groups, outage)
            else:
                self._commit_one_by_one(groups)
        else:
            self._recovered()
            self.commits += 1
            self.writes += len(batch)
            for _, waiter in groups:
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)

    def _commit_one_by_one(self, groups: list[Group]) -> None:
        """Isolate a failing group: every other group still commits, each waiter learns its own fate."""
        for index, (writes, waiter) in enumerate(groups):
            try:
                with self.store.transaction():
                    self.store.write_batch(writes)
            except Exception as error:
                outage = unavailable(error)
                if outage is not None:
                    self._hold(groups[index:], outage)
                    return
                self.errors.append(error)
                if waiter is not None and not waiter.done():
                    waiter.set_exception(error)
            else:
                self._recovered()
                if waiter is not None and not waiter.done():
                    waiter.set_result(None)
            self.commits += 1
            self.writes += len(writes)

    def _recovered(self) -> None:
        if self.outage is not None:
            self.outage = None
            self._outage_since = None
            self._retries = 0
            if self.on_recovered is not None:
                self.on_recovered()

    def _hold(self, groups: list[Group], outage: StoreUnavailable) -> None:
        """Keep ``groups`` queued (ahead of anything newer) and retry them after a backoff;
        give them up once the outage has lasted ``outage_window_s``."""
        now = time.monotonic()
        first = self.outage is None
        self.outage = outage
        if self._outage_since is None:
            self._outage_since = now
        if first:
            self.outages.append(str(outage))
            if self.on_outage is not None:
                self.on_outage(outage)
        self._pending[:0] = groups
        if now - self._outage_since >= self.outage_window_s:
            if self._loop() is None or self.stopped_run:
                self._give_up(outage)
                return
            # the run stops (like a cancellation); what it holds gets one more window
            self.stopped_run = True
            self._outage_since = now
            if self.on_give_up is not None:
                self.on_give_up(outage)
        if outage.kind == "disk full":  # room the store can make for itself (SQLite: its WAL)
            make_room = getattr(self.store, "make_room", None)
            if make_room is not None:
                with contextlib.suppress(Exception):
                    make_room()
        self._retries += 1
        delay = min(2.0, 0.1 * 2**self._retries)
        loop = self._loop()
        if loop is not None and self._lazy is None:
            self._lazy = loop.call_later(delay, self.flush)

    def _give_up(self, outage: StoreUnavailable) -> None:
        groups, self._pending = self._pending, []
        for writes, waiter in groups:
            self.unwritten.extend(writes)
            if waiter is not None and not waiter.done():
                waiter.set_exception(outage)
        self.gave_up = outage
        self.outage = None
        self._outage_since = None
        self._retries = 0
        if self.on_give_up is not None and not self.stopped_run:
            self.stopped_run = True
            self.on_give_up(outage)

    def close(self) -> None:
        """Commit whatever is still queued: in an outage, retried (blocking) until it passes
        or its window does."""
        self.flush()
        while self._pending and self.outage is not None:
            time.sleep(min(2.0, 0.1 * 2**self._retries))
            self.flush()
