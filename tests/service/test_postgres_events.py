"""The SSE generator over a PostgreSQL store: it waits on ``LISTEN``/``NOTIFY``, so an event
committed by another process reaches the stream at once, not at the next slow safety poll."""

from __future__ import annotations

import threading
import time

import pytest

from pytest_srbench.service import events as sse
from pytest_srbench.store import open_store
from tests.core.helpers import case, manifest, target


async def never() -> bool:
    return False


@pytest.mark.asyncio
async def test_a_stream_wakes_when_another_process_commits_events(
    postgres_url, monkeypatch, tmp_path
):
    monkeypatch.setattr(sse, "NOTIFIED_POLL_S", 60.0)  # only a notification can be this fast
    store = open_store(postgres_url)
    store.create_run("run-n", manifest([case("mmlu-pro", "1")], [target("t")]), status="running")
    writer = open_store(postgres_url)  # another connection, as the run's worker would have
    assert store.event_waiter() is not None and open_store(tmp_path / "s").event_waiter() is None

    def later(seconds: float, write) -> None:
        threading.Timer(seconds, write).start()

    names: list[str] = []
    start = time.monotonic()
    async for frame in sse.run_events(store, "run-n", 0, never, poll_s=0.01, keep_alive_s=600):
        if frame.startswith(":"):
            continue
        name = dict(line.split(": ", 1) for line in frame.strip().splitlines())["event"]
        names.append(name)
        if name == "RunStarted":  # the stream now waits for the next commit
            later(0.5, lambda: writer.append_event("run-n", "case_running", {"case_id": "c"}))
        elif name == "CaseStarted":
            later(0.5, lambda: writer.set_run_status("run-n", "completed"))
    assert names == ["RunCreated", "RunStarted", "CaseStarted", "RunCompleted"]
    assert time.monotonic() - start < 20  # two safety polls would have taken 120 s
