"""A real ``srbench serve`` API on a free loopback port (uvicorn in a background thread) over a
temporary project and store."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PRICES = "{ input = 1.0, cached_input = 0.5, cache_write = 1.0, output = 2.0 }"
PROJECT_CONFIG = f"""
[tool.srbench]

[[tool.srbench.targets]]
id = "sim-slow"
model = "sim-slow"
simulated = true
prices = {{ sim-slow = {PRICES} }}

[[tool.srbench.targets]]
id = "remote"
model = "remote-model"
base_url = "https://models.example.invalid/v1"
api_key_env = "REMOTE_SECRET_KEY"

[tool.srbench.simulator.models.sim-slow]
accuracy = 1.0
latency_s = 0.4
prices = {PRICES}
"""


@dataclass
class LiveApi:
    """A running app: its base URL and the RunService behind it."""

    base_url: str
    service: object
    project: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_project(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(PROJECT_CONFIG)
    (root / "suites").mkdir()
    return root


@pytest.fixture(scope="session")
def start_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """``start_api(max_runs=…, token=…)``: a live API over a fresh project; all stopped at the end."""
    uvicorn = pytest.importorskip("uvicorn")
    from pytest_srbench.service.api import create_app
    from pytest_srbench.service.worker import RunService

    servers: list[tuple[object, threading.Thread]] = []

    def start(max_runs: int = 100, token: str | None = None) -> LiveApi:
        project = make_project(tmp_path_factory.mktemp("service") / "project")
        service = RunService(project, project / ".srbench", max_runs=max_runs)
        app = create_app(service, token=token, dashboard=False)
        port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                lifespan="off")  # fmt: skip
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 60  # generous: a loaded machine starts slowly
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the API server did not start")
            time.sleep(0.02)
        servers.append((server, thread))
        return LiveApi(f"http://127.0.0.1:{port}", service, project)

    yield start
    for server, thread in servers:
        server.should_exit = True  # type: ignore[attr-defined]
        thread.join(timeout=60)


@pytest.fixture(scope="session")
def api(start_api) -> LiveApi:
    """The shared live API (max 100 runs, no token)."""
    return start_api()
