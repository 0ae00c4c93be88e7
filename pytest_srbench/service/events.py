"""A run's events as Server-Sent Events: the store's journal polled oldest first, each event
sent as ``id: <sequence>``, ``event: <Name>``, ``data: <json>``; the stream ends right after
the terminal event (or at once when a terminal run has nothing left to deliver).

Each poll is a short read on its own connection, closed before the next wait, so a stream
never holds a SQLite transaction open. Between polls a SQLite stream sleeps ``POLL_S``; a
PostgreSQL stream waits for the store's notification that the run's events committed
(``LISTEN``/``NOTIFY``), polling at most every ``POLL_S`` and at least every
``NOTIFIED_POLL_S``. A run adopted by its worker turns ``running`` without a
journal event; the stream then sends one ``RunStarted`` without an id (the resume cursor
stays the store's sequence, so ids are never repeated or skipped).

Readers of one run share their reads: streams at the same cursor within half a poll interval
get one read's answer (``shared_poll``), so many readers of a run cost about one reader's
reads (their number is capped too: ``connections.StreamSlots``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio

from pytest_srbench.core.benchmark_errors import run_error
from pytest_srbench.core.models import TERMINAL_RUN_STATUSES, Run
from pytest_srbench.store.base import EventWaiter, Row, Store

POLL_S = 0.2
NOTIFIED_POLL_S = 5.0  # a notified stream reads anyway this often (a lost connection, …)
KEEP_ALIVE_S = 15.0
BATCH = 200
NAMES = {
    "created": "RunCreated",
    "running": "RunStarted",
    "case_running": "CaseStarted",
    "case_completed": "CaseCompleted",
    "case_failed": "CaseFailed",
    "case_cancelled": "CaseFailed",
    "case_sent_unknown": "CaseFailed",
    "call_sent": "CallSent",
    "failure_observed": "FailureObserved",
    "dispatch_stopped": "DispatchStopped",
    "completed": "RunCompleted",
    "failed": "RunFailed",
    "interrupted": "RunFailed",
    "cancelled": "RunCancelled",
}
TERMINAL = TERMINAL_RUN_STATUSES  # run-level event kinds are the terminal run statuses
ACTIVITY = (
    "running", "case_running", "call_sent", "call_cached", "case_completed", "case_failed", "case_cancelled",
    "case_sent_unknown", "failure_observed", "dispatch_stopped", "completed", "failed",
    "interrupted",
)  # fmt: skip
STATUS = {
    "case_failed": "failed",
    "case_cancelled": "cancelled",
    "case_sent_unknown": "sent_unknown",
    "completed": "completed",
    "failed": "failed",
    "interrupted": "interrupted",
    "cancelled": "cancelled",
}


def event_name(kind: str) -> str:
    """The SSE name of a store event kind (PascalCase of the kind when not listed)."""
    return NAMES.get(kind) or "".join(part.capitalize() for part in kind.split("_") if part)


def event_data(run_id: str, event: Row) -> dict[str, Any]:
    data = event["data"] if isinstance(event.get("data"), dict) else {}
    body = {**data, "run_id": run_id, "sequence": event["seq"], "at": event["at"],
            "kind": event["kind"]}  # fmt: skip
    if event["kind"] in STATUS:
        body["status"] = STATUS[event["kind"]]
    if event["kind"] in TERMINAL:  # the public code and a safe message, never a server path
        body["error_code"], body["error"] = run_error(event["kind"], data.get("error"))
    return body


def frame(name: str, data: dict[str, Any], event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _poll(store: Store, run_id: str, after: int) -> tuple[Run | None, list[Row]]:
    """The run (read first, so a terminal status implies its event is visible) and the next
    events; the connection is closed before returning."""
    try:
        return store.get_run(run_id), store.events(run_id, after=after, limit=BATCH)
    finally:
        store.close()


_SHARED: dict[tuple[str, int], tuple[float, asyncio.Future[tuple[Run | None, list[Row]]]]] = {}


async def shared_poll(
    store: Store, run_id: str, after: int, poll_s: float
) -> tuple[Run | None, list[Row]]:
    """``_poll``, shared with the other streams of the run at the same cursor: a read in flight
    or done less than half a poll interval ago answers them all (the rows are not changed)."""
    now = time.monotonic()
    key = (run_id, after)
    hit = _SHARED.get(key)
    if hit is None or (hit[1].done() and now - hit[0] >= poll_s / 2):
        future = asyncio.ensure_future(anyio.to_thread.run_sync(_poll, store, run_id, after))
        _SHARED[key] = hit = (now, future)
        if len(_SHARED) > 256:  # forget reads no stream can share any more
            for old in [k for k, (at, f) in _SHARED.items() if f.done() and now - at > 1.0]:
                del _SHARED[old]
    else:
        store.close()  # this stream's own connection is not used for this read
    return await asyncio.shield(hit[1])


def _started_before(store: Store, run_id: str, after: int) -> bool:
    """Whether the client already saw the run active (it resumes past its first activity)."""
    try:
        first = store.events(run_id, after=0, limit=1, kinds=ACTIVITY)
        return bool(first) and int(first[0]["seq"]) <= after
    finally:
        store.close()


async def run_events(
    store: Store,
    run_id: str,
    after: int,
    disconnected: Callable[[], Awaitable[bool]],
    *,
    poll_s: float = POLL_S,
    keep_alive_s: float = KEEP_ALIVE_S,
) -> AsyncIterator[str]:
    """The SSE frames of ``run_id`` after sequence ``after``."""
    waiter = store.event_waiter()
    if waiter is None:
        async for frame_text in _frames(store, run_id, after, disconnected, None,
                                        poll_s=poll_s, keep_alive_s=keep_alive_s):  # fmt: skip
            yield frame_text
        return
    async with waiter:  # listening before the first read: nothing committed later is missed
        async for frame_text in _frames(store, run_id, after, disconnected, waiter,
                                        poll_s=poll_s, keep_alive_s=keep_alive_s):  # fmt: skip
            yield frame_text


async def _frames(
    store: Store,
    run_id: str,
    after: int,
    disconnected: Callable[[], Awaitable[bool]],
    waiter: EventWaiter | None,
    *,
    poll_s: float,
    keep_alive_s: float,
) -> AsyncIterator[str]:
    started = after > 0 and await anyio.to_thread.run_sync(_started_before, store, run_id, after)
    last_write = time.monotonic()
    while not await disconnected():
        polled = time.monotonic()
        run, events = await shared_poll(store, run_id, after, poll_s)
        if run is None:
            return
        for event in events:
            kind = event["kind"]
            if kind == "running":
                started = True
            elif not started and kind in ACTIVITY and kind not in TERMINAL:
                started = True
                yield frame("RunStarted", _synthetic(run_id))
            after = int(event["seq"])
            yield frame(event_name(kind), event_data(run_id, event), after)
            last_write = time.monotonic()
            if kind in TERMINAL:
                return
        if len(events) == BATCH:
            continue
        if not events and run.status in TERMINAL_RUN_STATUSES:
            return  # terminal and everything delivered
        if not started and run.status == "running":
            started = True
            yield frame("RunStarted", _synthetic(run_id))
            last_write = time.monotonic()
        if time.monotonic() - last_write >= keep_alive_s:
            yield ": keep-alive\n\n"
            last_write = time.monotonic()
        if waiter is not None:  # until the run's next events commit (or a slow safety poll)
            quiet = max(0.0, keep_alive_s - (time.monotonic() - last_write))
            await waiter.wait(run_id, min(NOTIFIED_POLL_S, quiet) or poll_s)
        await anyio.sleep(max(0.0, poll_s - (time.monotonic() - polled)))


def _synthetic(run_id: str) -> dict[str, Any]:
    return {"run_id": run_id, "kind": "running", "status": "running", "synthetic": True}
