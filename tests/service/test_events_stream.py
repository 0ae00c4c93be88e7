"""The SSE generator on its own: keep-alive comments while nothing happens, one RunStarted for
the journal-less queued → running transition, the end right after the terminal event, and
nothing at all once the client is gone."""

from __future__ import annotations

import pytest

from pytest_srbench.service.events import event_name, run_events
from pytest_srbench.service.worker import RunRequest, RunService
from tests.service.conftest import make_project


@pytest.fixture
def queued(tmp_path) -> RunService:
    project = make_project(tmp_path / "project")
    service = RunService(project, project / ".srbench")
    manifest = service.freeze(RunRequest(benchmarks=["mmlu-pro"], limit=1))
    service.store().create_run("run-sse", manifest, status="queued")
    return service


def parse(frame: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in frame.strip().splitlines())


async def never() -> bool:
    return False


async def gone() -> bool:
    return True


@pytest.mark.asyncio
async def test_keep_alive_synthetic_start_and_terminal_end(queued):
    store = queued.store()
    frames: list[str] = []
    stream = run_events(queued.store(), "run-sse", 0, never, poll_s=0.01, keep_alive_s=0.05)
    async for frame in stream:
        frames.append(frame)
        if frame == ": keep-alive\n\n" and frames.count(frame) == 1:
            store.db.execute("UPDATE runs SET status = 'running' WHERE id = 'run-sse'")
        elif "RunStarted" in frame:
            store.append_event("run-sse", "case_running", {"case_id": "c", "target_id": "t"})
            store.set_run_status("run-sse", "cancelled", "stopped by a test")
    events = [parse(f) for f in frames if not f.startswith(":")]
    assert [e["event"] for e in events] == [
        "RunCreated",
        "RunStarted",
        "CaseStarted",
        "RunCancelled",
    ]
    assert [e.get("id") for e in events] == ["1", None, "2", "3"]
    assert ": keep-alive\n\n" in frames
    again = run_events(queued.store(), "run-sse", 3, never, poll_s=0.01)
    assert [frame async for frame in again] == []  # terminal, everything delivered


@pytest.mark.asyncio
async def test_a_gone_client_gets_nothing(queued):
    assert [f async for f in run_events(queued.store(), "run-sse", 0, gone)] == []


def test_names_of_unlisted_kinds_are_pascal_case():
    assert event_name("cancellation_requested") == "CancellationRequested"
    assert event_name("case_sent_unknown") == "CaseFailed"
    assert event_name("interrupted") == "RunFailed"
