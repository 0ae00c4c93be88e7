"""The engine loop's threads for blocking work: a plain ``def`` test body, a blocking app, the
sandbox's file clean-up. Each call runs on a fresh daemon thread, which the interpreter never
waits for at exit.

``asyncio``'s own default executor is a ``ThreadPoolExecutor``, whose threads the interpreter
joins before it exits: one body blocked on ``time.sleep(3600)`` or a socket read kept a finished
session alive, although its cell had already failed at its deadline. A daemon thread is
abandoned instead; the cell's deadline decides its outcome.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class DaemonThreads(ThreadPoolExecutor):
    """An executor that runs each call on its own daemon thread (set as the engine loop's
    default executor, so ``asyncio.to_thread`` and ``run_in_executor(None, …)`` use it).

    A ``ThreadPoolExecutor`` only by type (``loop.set_default_executor`` accepts nothing else):
    none of its pool's threads is ever started, so none is in the list the interpreter joins
    at exit."""

    def __init__(self, name: str = "srbench-blocking") -> None:
        super().__init__(max_workers=1, thread_name_prefix=name)
        self._name = name
        self._closed = False
        self._count = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new calls after shutdown")
            self._count += 1
            name = f"{self._name}-{self._count}"
        future: Future[T] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as error:  # handed to the waiter, as an executor does
                future.set_exception(error)
            else:
                future.set_result(result)

        threading.Thread(target=run, name=name, daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """No new calls; running ones are never waited for (they are daemons)."""
        with self._lock:
            self._closed = True
