"""The settings every llama.cpp build made here has (no AMX on x86_64), and a cached build or
side environment made with other settings counted as not built (no compiler run here)."""

from __future__ import annotations

import os

import pytest

from pytest_srbench.managed import common, llama, venvs


@pytest.mark.parametrize(
    ("machine", "flags"),
    [("x86_64", common.NO_AMX), ("AMD64", common.NO_AMX), ("aarch64", ()), ("arm64", ())],
)
def test_amx_is_turned_off_on_x86_only(monkeypatch, machine, flags):
    monkeypatch.setattr(common.platform, "machine", lambda: machine)
    assert common.native_compile_flags() == flags
    args = common.cmake_compile_args()
    if flags:
        assert args == [f"-DCMAKE_{lang}_FLAGS={' '.join(flags)}" for lang in ("C", "CXX")]
    else:
        assert args == []


def _fake_build(cache, settings: str | None) -> None:
    binary = llama.server_dir(cache) / "build" / "bin" / "llama-server"
    binary.parent.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    os.chmod(binary, 0o755)
    if settings is not None:
        (llama.server_dir(cache) / llama.BUILT_WITH).write_text(settings)


def test_a_build_is_reused_only_with_todays_settings(tmp_path):
    _fake_build(tmp_path / "now", "\n".join(llama.CMAKE_FLAGS) + "\n")
    assert llama.server_binary(tmp_path / "now") is not None
    _fake_build(tmp_path / "unrecorded", None)  # built before the settings were recorded
    assert llama.server_binary(tmp_path / "unrecorded") is None
    _fake_build(tmp_path / "other", "-DCMAKE_BUILD_TYPE=Release\n")
    assert llama.server_binary(tmp_path / "other") is None


def test_a_side_environment_is_ready_only_with_todays_build_settings(tmp_path, monkeypatch):
    monkeypatch.setattr(common.platform, "machine", lambda: "x86_64")
    for name in (venvs.LITELLM[0], venvs.LLAMA_CPP_PYTHON[0]):
        marker = venvs.venv_python(name, tmp_path).parent.parent / ".srbench-ready"
        marker.parent.mkdir(parents=True)
        assert not venvs.is_ready(name, tmp_path)
        marker.write_text("ok\n")  # what an environment made before the settings says
    assert venvs.is_ready(venvs.LITELLM[0], tmp_path)  # builds nothing from source
    assert not venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0], tmp_path)
    settings = venvs.build_env(venvs.LLAMA_CPP_PYTHON[0])
    assert "-mno-amx-tile" in settings["CMAKE_ARGS"]
    marker.write_text("ok\n" + f"CMAKE_ARGS={settings['CMAKE_ARGS']}\n")
    assert venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0], tmp_path)


def test_a_server_killed_by_an_illegal_instruction_says_to_build_it_again():
    """A real process that dies of SIGILL before it answers (as llama-server built with AMX
    did on a machine that lists AMX but does not run it)."""
    import signal
    import subprocess
    import sys

    process = subprocess.Popen(
        [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGILL)"]
    )
    process.wait(timeout=30)
    port = common.free_port()
    with pytest.raises(common.RealPartError) as raised:
        common.wait_until_ready(f"http://127.0.0.1:{port}/health", timeout_s=5, process=process)
    message = str(raised.value)
    assert "killed by SIGILL (exit status -4)" in message and "srbench real build" in message
    assert common.how_it_ended(3) == "exited with status 3"
    assert common.how_it_ended(-signal.SIGKILL) == "was killed by SIGKILL (exit status -9)"
    assert common.how_it_ended(-200) == "was killed by signal 200"
