"""Issue 46, points 1 and 6 over real HTTP: a queued run whose service and worker died together
is settled ``failed`` by the restarted service within seconds (never limbo); cancelling a
queued run stops its worker at once and frees its slot; a 429 names ``Retry-After``."""

from __future__ import annotations

import json
import os
import signal
import time

import httpx
import pytest

from tests.service.conftest import free_port, make_project
from tests.service.helpers import assert_error, create, find_worker, serve, wait_for, wait_up

pytestmark = pytest.mark.slow


def test_serve_and_worker_killed_together_then_restart_settles_the_run(tmp_path, start_api):
    project = make_project(tmp_path / "project")
    port = free_port()
    first = serve(project, port)
    try:
        wait_up(f"http://127.0.0.1:{port}")
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            run = create(client)
        worker = find_worker(project, run["id"])
        # a host crash: the service and the worker that has not taken its run yet die together
        os.kill(first.pid, signal.SIGKILL)
        os.killpg(worker, signal.SIGKILL)
    finally:
        first.kill()
        first.wait(30)
    live = start_api(store=str(project / ".srbench"))  # the restarted service over the store
    began = time.monotonic()
    with httpx.Client(base_url=live.base_url, timeout=30) as client:
        ended = wait_for(client, run["id"], {"failed", "interrupted", "completed"}, timeout=10)
    assert time.monotonic() - began < 10
    assert ended["status"] == "failed", ended
    assert ended["error"] and "worker" in json.dumps(ended["error"])


def test_cancelling_a_queued_run_stops_its_worker_and_frees_the_slot(start_api):
    live = start_api(max_runs=1)
    with httpx.Client(base_url=live.base_url, timeout=30) as client:
        run = create(client, limit=3)
        full = client.post("/api/runs", json={"benchmarks": ["mmlu-pro"], "limit": 1})
        assert_error(full, 429, "BENCHMARK_CAPACITY_EXCEEDED")
        assert int(full.headers["Retry-After"]) > 0
        cancelled = client.post(f"/api/runs/{run['id']}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["run"]["status"] == "cancelled"
        began = time.monotonic()
        second = client.post("/api/runs", json={"benchmarks": ["mmlu-pro"], "limit": 1})
        assert second.status_code == 202, second.text  # the slot is free at once
        assert time.monotonic() - began < 2
        assert live.service.active_runs() == [second.json()["run"]["id"]]  # type: ignore[attr-defined]
        wait_for(client, second.json()["run"]["id"], {"completed"})
