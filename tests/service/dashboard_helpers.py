"""Shared by test_dashboard_browser and the tests that build on it (a test module never imports another)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import HOSTILE, chromium_path, launched_browser

REPO = Path(__file__).resolve().parents[2]


REPORTS = REPO / "reports"


CONFIG = f"""
[tool.srbench]

[[tool.srbench.targets]]
id = "hostile"
model = "hostile-model"
simulated = true
prices = {{ hostile-model = {{ input = 0.2, cached_input = 0.1, cache_write = 0.2, output = 0.4 }} }}

[tool.srbench.simulator.models.hostile-model]
accuracy = 0.6
latency_s = 0.0
inject_markup = {json.dumps(HOSTILE)}
prices = {{ input = 0.2, cached_input = 0.1, cache_write = 0.2, output = 0.4 }}
"""


WAIT_MS = 60_000  # every wait for the page or a run: generous, never a speed bound


PLAN: dict[str, Any] = {
    "name": "dashboard-e2e", "profile": "smoke", "benchmarks": ["gpqa-diamond", "mmlu-pro"],
    "targets": ["hostile", "sim-small"], "limit": 2, "sampling": {"temperature": 0.0},
}  # fmt: skip


class Server:
    """The API and the dashboard on a free loopback port, served by uvicorn in a thread."""

    def __init__(self, project: Path, token: str | None = None) -> None:
        import uvicorn

        from pytest_srbench.service.api import create_app
        from pytest_srbench.service.worker import RunService

        self.project = project
        self.store = project / ".srbench"
        self.service = RunService(project, self.store)
        app = create_app(self.service, token=token, dashboard=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 60  # generous: a loaded machine starts slowly
        while not self.server.started:
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)

    def api(self, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def wait_run(self, run_id: str, timeout: float = 180) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            run: dict[str, Any] = self.api(f"/api/runs/{run_id}")["run"]
            if run["status"] not in ("queued", "running"):
                return run
            assert time.monotonic() < deadline, f"run {run_id} still {run['status']}"
            time.sleep(0.3)

    def stop(self) -> None:
        for run_id in self.service.active_runs():
            self.service.wait(run_id, 30)
        self.server.should_exit = True
        self.thread.join(15)
        self.sock.close()
        self.service.close()  # its reaper thread


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    chromium_path()
    project = tmp_path_factory.mktemp("dashboard")
    (project / "pyproject.toml").write_text(CONFIG)
    running = Server(project)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launched_browser()


class Watched:
    """A page with every console message, page error and request recorded."""

    def __init__(
        self, browser: Any, server: Server, path: str, width: int = 1280, ready: bool = True
    ) -> None:
        self.server = server
        self.context = browser.new_context(viewport={"width": width, "height": 900},
                                           accept_downloads=True)  # fmt: skip
        self.context.set_default_timeout(WAIT_MS)
        self.page = self.context.new_page()
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.goto(path, ready)

    def goto(self, path: str, ready: bool = True) -> None:
        self.page.goto(self.server.url + path)
        if ready:
            self.page.wait_for_selector("html[data-ready='1']")

    def errors(self) -> list[str]:
        return [m for m in self.console if m.startswith(("error", "pageerror"))]

    def remote_requests(self) -> list[str]:
        local = (self.server.url + "/", "about:", "data:", "blob:")
        return [url for url in self.requests if not url.startswith(local)]

    def check(self) -> None:
        assert self.errors() == []
        assert self.remote_requests() == []
        assert self.page.evaluate("window.__pwned") is None

    def shot(self, name: str, full_page: bool = False, commit: bool = False) -> None:
        """A screenshot under reports/ for review. ``commit``: one of the screenshots kept in
        the repository (reports/dashboard/), written only when SRBENCH_SCREENSHOTS is set."""
        if commit and not os.environ.get("SRBENCH_SCREENSHOTS"):
            return
        path = REPORTS / name
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path), full_page=full_page)

    def close(self) -> None:
        self.context.close()
