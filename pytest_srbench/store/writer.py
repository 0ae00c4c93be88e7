"""Group commit: a writer thread that applies queued store operations in shared transactions.

Callers on the engine's event loop ``await writer.run(op)`` when the write must be durable
before they continue (a ``sent`` call row before its request leaves) and ``writer.post(op)``
when it need not be. Operations queued while a commit is in progress share the next one.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Protocol


class _Transactional(Protocol):
    def transaction(self) -> Any: ...


Op = Callable[[], Any]


class BatchWriter:
    """Applies store operations from any thread, many per transaction."""

    def __init__(self, store: _Transactional, *, max_batch: int = 512) -> None:
        self.store = store
        self.max_batch = max_batch
        self._queue: deque[tuple[Op, Future[Any] | None]] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self.commits = 0
        self.ops = 0
        self.errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._loop, name="srbench-store-writer", daemon=True)
        self._thread.start()

    def submit(self, op: Op) -> Future[Any]:
        """Queue ``op``; the future resolves once its transaction committed."""
        future: Future[Any] = Future()
        self._enqueue(op, future)
        return future

    def post(self, op: Op) -> None:
        """Queue ``op`` without waiting for it."""
        self._enqueue(op, None)

    async def run(self, op: Op) -> Any:
        """Queue ``op`` and wait (asynchronously) until it is committed."""
        return await asyncio.wrap_future(self.submit(op))

    def _enqueue(self, op: Op, future: Future[Any] | None) -> None:
        with self._cond:
            if self._closed:
                raise RuntimeError("the store writer is closed")
            self._queue.append((op, future))
            self._cond.notify()

    def flush(self) -> None:
        """Block until everything queued so far is committed."""
        self.submit(lambda: None).result()

    def close(self) -> None:
        """Commit what is queued and stop the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if not self._queue and self._closed:
                    return
                batch = [
                    self._queue.popleft() for _ in range(min(len(self._queue), self.max_batch))
                ]
            self._apply(batch)

    def _apply(self, batch: list[tuple[Op, Future[Any] | None]]) -> None:
        results: list[Any] = []
        try:
            with self.store.transaction():
                for op, _ in batch:
                    results.append(op())
        except BaseException:  # isolate the failing operation, commit the others
            for op, future in batch:
                try:
                    with self.store.transaction():
                        value = op()
                except BaseException as error:
                    self.errors.append(error)
                    if future is not None:
                        future.set_exception(error)
                else:
                    if future is not None:
                        future.set_result(value)
            self.commits += len(batch)
            self.ops += len(batch)
            return
        self.commits += 1
        self.ops += len(batch)
        for (_, future), value in zip(batch, results, strict=True):
            if future is not None:
                future.set_result(value)
