"""A real ``srbench serve`` API on a free loopback port (uvicorn in a background thread) over a
temporary project and store."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.service.dashboard_helpers import browser, server  # noqa: F401  (fixtures)

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


class PublicWords:
    """ASGI middleware that keeps what the API says in public: the body of every error answer
    and every event-stream message, to be scanned for server paths, tracebacks and secrets."""

    def __init__(self, app: Any, said: list[str]) -> None:
        self.app = app
        self.said = said

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        kept: dict[str, Any] = {"public": False}

        async def keeping(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers") or ())
                streamed = b"text/event-stream" in headers.get(b"content-type", b"")
                kept["public"] = message["status"] >= 400 or streamed
            elif message["type"] == "http.response.body" and kept["public"]:
                self.said.append(bytes(message.get("body", b"")).decode("utf-8", "replace"))
            await send(message)

        await self.app(scope, receive, keeping)


def leaks(said: list[str], private: list[str]) -> list[str]:
    """The public messages that name a private path or value, or carry a traceback."""
    found = []
    for text in said:
        if "Traceback (most recent call last)" in text or 'File "/' in text:
            found.append(text[:300])
        found += [f"{value!r} in {text[:300]}" for value in private if value and value in text]
    return found


@pytest.fixture(scope="session")
def start_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """``start_api(max_runs=…, token=…, store=…)``: a live API over a fresh project (and its
    own store folder, or ``store``); all stopped at the end."""
    uvicorn = pytest.importorskip("uvicorn")
    from pytest_srbench.service.api import create_app
    from pytest_srbench.service.connections import bounded_protocol
    from pytest_srbench.service.worker import RunService

    servers: list[tuple[object, threading.Thread]] = []
    services: list[RunService] = []
    said: list[str] = []  # every error body and event-stream message of every API started here
    import pytest_srbench

    package = str(Path(pytest_srbench.__file__).resolve().parent)
    private = [str(tmp_path_factory.getbasetemp()), sys.prefix, str(Path.home()) + "/", package,
               os.environ.get("REMOTE_SECRET_KEY", "")]  # fmt: skip

    def start(max_runs: int = 100, token: str | None = None, store: str | None = None) -> LiveApi:
        project = make_project(tmp_path_factory.mktemp("service") / "project")
        service = RunService(project, store or project / ".srbench", max_runs=max_runs)
        app = PublicWords(create_app(service, token=token, dashboard=False), said)
        if token:
            private.append(token)
        port = free_port()
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=port,
            log_level="warning",
            lifespan="off",
            http=bounded_protocol(),
        )  # as srbench serve
        api_server = uvicorn.Server(config)
        thread = threading.Thread(target=api_server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 60  # generous: a loaded machine starts slowly
        while not api_server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the API server did not start")
            time.sleep(0.02)
        servers.append((api_server, thread))
        services.append(service)
        return LiveApi(f"http://127.0.0.1:{port}", service, project)

    yield start
    for api_server, thread in servers:
        api_server.should_exit = True  # type: ignore[attr-defined]
        thread.join(timeout=60)
    for service in services:
        service.close()  # its reaper thread
    # what the whole suite made the API say in public names no server path, no secret
    assert said, "no error body or event stream was seen: the scan would prove nothing"
    assert leaks(said, private) == []


@pytest.fixture(scope="session")
def api(start_api) -> LiveApi:
    """The shared live API (max 100 runs, no token)."""
    return start_api()
