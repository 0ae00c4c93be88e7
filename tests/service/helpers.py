"""Talking to a live API in the service tests: create a run, wait for its status, check an
error answer, parse an event stream."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

TERMINAL = {"completed", "failed", "cancelled", "interrupted"}


def create(client: httpx.Client, **request: Any) -> dict[str, Any]:
    response = client.post("/api/runs", json={"benchmarks": ["mmlu-pro"], "limit": 2, **request})
    assert response.status_code == 202, response.text
    run: dict[str, Any] = response.json()["run"]
    assert run["status"] == "queued" and run["source"] == "service"
    return run


def wait_for(client: httpx.Client, run_id: str, statuses: set[str], timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        run = client.get(f"/api/runs/{run_id}").json()["run"]
        if run["status"] in statuses or time.monotonic() > deadline:
            assert run["status"] in statuses, run
            return run
        time.sleep(0.1)


def assert_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    assert response.json()["error"]["code"] == code
    assert "Traceback" not in response.text and 'File "' not in response.text


def sse_events(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """Parsed SSE events (comments skipped) as {"id", "event", "data"}."""
    event: dict[str, Any] = {}
    for line in lines:
        if not line:
            if event:
                yield event
            event = {}
        elif not line.startswith(":"):
            field, _, value = line.partition(":")
            event[field] = value.removeprefix(" ")


def serve(project: Path, port: int, stdout: Any = None, **env: str) -> subprocess.Popen[bytes]:
    """``srbench serve`` in its own process (so it can be killed like a crashed host);
    ``stdout``: where its output goes (both streams; default nowhere)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **env}
    sink = stdout if stdout is not None else subprocess.DEVNULL
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_srbench", "--store", str(project / ".srbench"), "serve",
         "--port", str(port), "--project", str(project)],
        cwd=project, env=env, stdout=sink, stderr=subprocess.STDOUT if stdout else sink,
    )  # fmt: skip


def wait_up(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/api/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("the service did not start")


def find_worker(project: Path, run_id: str) -> int:
    """The pid of the run's pytest worker (its command line names the project's store)."""
    store = f"--srbench-store={project / '.srbench'}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if store in (entry / "cmdline").read_bytes():
                    return int(entry.name)
            except OSError:
                continue
    raise AssertionError(f"no worker process for {run_id}")
