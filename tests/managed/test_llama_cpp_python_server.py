"""llama-cpp-python's server as the plugin starts it (no server run here): pointed at the
llama.cpp libraries built beside llama-server, and refused with one line when they are absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_srbench.managed import proxies
from pytest_srbench.managed.common import RealPartError


def test_the_environment_points_llama_cpp_python_at_the_cached_libraries():
    base = {"PATH": "/usr/bin", "LLAMA_CPP_LIB_PATH": "/elsewhere"}
    env = proxies.llama_cpp_python_env(Path("/cache/llama-server/build/bin"), base)
    assert env == {
        "PATH": "/usr/bin",
        "LLAMA_CPP_LIB_PATH": "/cache/llama-server/build/bin",
        "MTMD_CPP_LIB": "/cache/llama-server/build/bin",
    }
    assert base["LLAMA_CPP_LIB_PATH"] == "/elsewhere"  # the caller's mapping is left alone


def _pretend_built(monkeypatch, libraries: Path | None) -> list[dict[str, object]]:
    """The side environment ready, llama-server built in ``libraries`` (None: not built);
    returns what the server is spawned with (nothing is spawned)."""
    spawned: list[dict[str, object]] = []
    monkeypatch.setattr(proxies, "is_ready", lambda _name: True)
    monkeypatch.setattr(
        proxies, "server_binary", lambda: None if libraries is None else libraries / "llama-server"
    )
    monkeypatch.setattr(proxies, "library_dir", lambda: libraries or Path("/not-built"))

    def record(self, command, env, name):
        spawned.append({"command": command, "env": env, "name": name})

    monkeypatch.setattr(proxies.ManagedProcess, "_spawn", record)
    return spawned


def test_the_server_is_started_with_the_libraries_of_the_llama_server_build(tmp_path, monkeypatch):
    spawned = _pretend_built(monkeypatch, tmp_path / "bin")
    server = proxies.LlamaCppPythonServer(model=tmp_path / "m.gguf")
    with pytest.raises(RealPartError, match="did not become ready"):  # nothing listens
        server.start(timeout_s=0.2)
    (call,) = spawned
    env = call["env"]
    assert isinstance(env, dict)
    assert env["LLAMA_CPP_LIB_PATH"] == env["MTMD_CPP_LIB"] == str(tmp_path / "bin")
    assert env["PATH"] == os.environ["PATH"]
    assert call["command"][1:3] == ["-m", "llama_cpp.server"]


def test_without_the_llama_server_build_the_server_is_refused_in_one_line(tmp_path, monkeypatch):
    spawned = _pretend_built(monkeypatch, None)
    with pytest.raises(RealPartError) as refused:
        proxies.LlamaCppPythonServer(model=tmp_path / "m.gguf").start(timeout_s=0.2)
    assert "llama.cpp's libraries are not built" in str(refused.value)
    assert "srbench real build" in str(refused.value) and "\n" not in str(refused.value)
    assert spawned == []
