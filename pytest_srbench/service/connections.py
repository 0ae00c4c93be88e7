"""Bounded connections of ``srbench serve`` (docs/service-api.md, "Connections"):

* a client has ``HEADER_TIMEOUT_S`` (10 s) from connecting, or from its first byte of a next
  request on a kept-alive connection, to send a request's whole head, and ``BODY_TIMEOUT_S``
  (30 s) from the head to send the whole body; past either the connection is closed (a slow
  client cannot hold a connection open one byte at a time). ``SRBENCH_HEADER_TIMEOUT_S`` and
  ``SRBENCH_BODY_TIMEOUT_S`` change them; an idle kept-alive connection closes after uvicorn's
  5 s;
* Server-Sent Event streams are counted: at most ``MAX_STREAMS_PER_RUN`` (32) readers of one
  run (past it ``429 BENCHMARK_TOO_MANY_STREAMS``) and ``MAX_STREAMS`` (128) in all (past it
  ``503 BENCHMARK_UNAVAILABLE``), both with ``Retry-After`` (``SRBENCH_MAX_STREAMS`` and
  ``SRBENCH_MAX_STREAMS_PER_RUN`` change them).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from pytest_srbench.service.worker import ServiceError

HEADER_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 30.0
HEADER_TIMEOUT_ENV = "SRBENCH_HEADER_TIMEOUT_S"
BODY_TIMEOUT_ENV = "SRBENCH_BODY_TIMEOUT_S"
MAX_STREAMS = 128
MAX_STREAMS_PER_RUN = 32
STREAM_RETRY_AFTER_S = 5
MAX_STREAMS_ENV = "SRBENCH_MAX_STREAMS"
MAX_STREAMS_PER_RUN_ENV = "SRBENCH_MAX_STREAMS_PER_RUN"


def _seconds(name: str, default: float) -> float:
    """A positive number from the environment (at most 3600), else ``default``."""
    try:
        value = float(os.environ.get(name, "") or default)
    except ValueError:
        return default
    return value if 0 < value <= 3600 else default


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline for a request's head and one for its body."""

    header_timeout_s = HEADER_TIMEOUT_S
    body_timeout_s = BODY_TIMEOUT_S

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._waiting_for: Any = None  # the h11 state the deadline is for

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(h11.IDLE, self.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow()

    def _follow(self) -> None:
        """Arm the deadline of what the client is sending now (kept, not reset, per byte)."""
        state = self.conn.their_state
        if state is h11.IDLE and self.conn.our_state is h11.IDLE:
            if self.timeout_keep_alive_task is None:  # a next request has begun arriving
                self._arm(h11.IDLE, self.header_timeout_s)
            else:
                self._disarm()  # idle: uvicorn's keep-alive timeout closes it
        elif state is h11.SEND_BODY:
            self._arm(h11.SEND_BODY, self.body_timeout_s)
        else:
            self._disarm()

    def _arm(self, state: Any, seconds: float) -> None:
        if self._deadline is not None and self._waiting_for is state:
            return
        self._disarm()
        self._waiting_for = state
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = None
        self._waiting_for = None

    def _too_slow(self) -> None:
        self._deadline = None
        if not self.transport.is_closing():
            self.logger.info("closing a connection that sent its request too slowly")
            self.transport.close()


def bounded_protocol() -> type[BoundedH11Protocol]:
    """The protocol class with the timeouts of the environment (``srbench serve``)."""
    return type(
        "BoundedH11Protocol",
        (BoundedH11Protocol,),
        {
            "header_timeout_s": _seconds(HEADER_TIMEOUT_ENV, HEADER_TIMEOUT_S),
            "body_timeout_s": _seconds(BODY_TIMEOUT_ENV, BODY_TIMEOUT_S),
        },
    )


class StreamSlots:
    """Counts the open event streams, per run and in all; a stream past a cap is refused."""

    def __init__(self, total: int | None = None, per_run: int | None = None) -> None:
        self.total = total or int(_seconds(MAX_STREAMS_ENV, MAX_STREAMS))
        self.per_run = per_run or int(_seconds(MAX_STREAMS_PER_RUN_ENV, MAX_STREAMS_PER_RUN))
        self._lock = threading.Lock()
        self._open: dict[str, int] = {}

    def take(self, run_id: str) -> None:
        retry = {"Retry-After": str(STREAM_RETRY_AFTER_S)}
        with self._lock:
            if sum(self._open.values()) >= self.total:
                raise ServiceError("BENCHMARK_UNAVAILABLE", 503,
                                   f"the service serves at most {self.total} event streams at "
                                   "once; try again shortly", retry)  # fmt: skip
            if self._open.get(run_id, 0) >= self.per_run:
                raise ServiceError("BENCHMARK_TOO_MANY_STREAMS", 429,
                                   f"at most {self.per_run} event streams of one run at once; "
                                   "try again shortly", retry)  # fmt: skip
            self._open[run_id] = self._open.get(run_id, 0) + 1

    def give_back(self, run_id: str) -> None:
        with self._lock:
            left = self._open.get(run_id, 0) - 1
            if left > 0:
                self._open[run_id] = left
            else:
                self._open.pop(run_id, None)

    @contextmanager
    def held(self, run_id: str) -> Iterator[None]:
        self.take(run_id)
        try:
            yield
        finally:
            self.give_back(run_id)
