"""The settings every llama.cpp build made here has (no AMX on x86_64, shared libraries), and a
cached build or side environment made with other settings (or the layout before llama.cpp was
compiled once for both servers) counted as not built, built again once, then reused (no
compiler run here)."""

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


# What BUILT_WITH held before the shared libraries were part of the build (x86_64).
OLD_BUILT_WITH = (
    "-DCMAKE_BUILD_TYPE=Release\n-DLLAMA_USE_PREBUILT_UI=OFF\n-DLLAMA_BUILD_UI=OFF\n"
    "-DLLAMA_BUILD_TESTS=OFF\n-DLLAMA_BUILD_EXAMPLES=OFF\n-DLLAMA_OPENSSL=OFF\n"
    "-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16\n"
    "-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16\n"
)
# What .srbench-ready held when llama-cpp-python compiled its own llama.cpp (x86_64).
OLD_READY = (
    'ok\nCMAKE_ARGS="-DCMAKE_C_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" '
    '"-DCMAKE_CXX_FLAGS=-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"\n'
)


def _fake_artifacts(target) -> None:
    """What a finished build leaves in ``<cache>/llama-server``: the binary and the libraries."""
    binary = target / "build" / "bin" / "llama-server"
    binary.parent.mkdir(parents=True, exist_ok=True)
    binary.write_text("#!/bin/sh\n")
    os.chmod(binary, 0o755)
    for name in llama.SHARED_LIBRARIES:
        (binary.parent / name).write_text("")


def _fake_build(cache, settings: str | None) -> None:
    _fake_artifacts(llama.server_dir(cache))
    if settings is not None:
        (llama.server_dir(cache) / llama.BUILT_WITH).write_text(settings)


def test_todays_build_is_shared_with_the_libraries_llama_cpp_python_loads():
    assert "-DBUILD_SHARED_LIBS=ON" in llama.CMAKE_FLAGS
    assert {"llama-server", "llama", "ggml", "mtmd"} <= set(llama.BUILD_TARGETS)
    assert {"libllama.so", "libggml.so", "libmtmd.so"} <= set(llama.SHARED_LIBRARIES)
    assert llama.settings_text().splitlines() == [
        *llama.CMAKE_FLAGS,
        "--target " + " ".join(llama.BUILD_TARGETS),
    ]


def test_a_build_is_reused_only_with_todays_settings_and_libraries(tmp_path):
    _fake_build(tmp_path / "now", llama.settings_text())
    assert llama.server_binary(tmp_path / "now") is not None
    assert llama.library_dir(tmp_path / "now") == llama.server_binary(tmp_path / "now").parent
    _fake_build(tmp_path / "unrecorded", None)  # built before the settings were recorded
    assert llama.server_binary(tmp_path / "unrecorded") is None
    _fake_build(tmp_path / "other", "-DCMAKE_BUILD_TYPE=Release\n")
    assert llama.server_binary(tmp_path / "other") is None
    _fake_build(tmp_path / "old", OLD_BUILT_WITH)  # before the libraries were part of it
    assert llama.server_binary(tmp_path / "old") is None
    _fake_build(tmp_path / "no-mtmd", llama.settings_text())
    (llama.library_dir(tmp_path / "no-mtmd") / "libmtmd.so").unlink()
    assert llama.server_binary(tmp_path / "no-mtmd") is None


def test_a_cache_of_the_old_layout_is_built_again_once_then_reused(tmp_path):
    cache = tmp_path / "cache"
    _fake_build(cache, OLD_BUILT_WITH)
    compiled = []

    def compile_step(target, jobs, log):
        compiled.append(target)
        _fake_artifacts(target)

    for _ in range(3):
        binary = llama.build_server(cache, compile_step=compile_step, log=lambda _line: None)
        assert binary == llama.library_dir(cache) / "llama-server"
    assert compiled == [llama.server_dir(cache)]
    assert (llama.server_dir(cache) / llama.BUILT_WITH).read_text() == llama.settings_text()


def test_llama_cpp_pythons_environment_is_ready_only_without_its_own_llama_cpp(tmp_path):
    assert venvs.build_env(venvs.LLAMA_CPP_PYTHON[0]) == {"CMAKE_ARGS": "-DLLAMA_BUILD=OFF"}
    assert venvs.build_env(venvs.LITELLM[0]) == {}
    for name in (venvs.LITELLM[0], venvs.LLAMA_CPP_PYTHON[0]):
        marker = venvs.venv_python(name, tmp_path).parent.parent / venvs.READY
        marker.parent.mkdir(parents=True)
        assert not venvs.is_ready(name, tmp_path)
        marker.write_text("ok\n")  # what an environment made before the settings says
    assert venvs.is_ready(venvs.LITELLM[0], tmp_path)  # builds nothing from source
    assert not venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0], tmp_path)
    marker.write_text(OLD_READY)  # it compiled llama.cpp a second time
    assert not venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0], tmp_path)
    marker.write_text("ok\nCMAKE_ARGS=-DLLAMA_BUILD=OFF\n")
    assert venvs.is_ready(venvs.LLAMA_CPP_PYTHON[0], tmp_path)


def test_an_old_llama_cpp_python_environment_is_made_again_once_from_the_cached_sdist(
    tmp_path, monkeypatch
):
    """pip (replaced here by a recorder) is run once, from the sdist file in the cache, with
    llama.cpp's build turned off and no wheel an earlier build cached; then it is reused."""
    name = venvs.LLAMA_CPP_PYTHON[0]
    python = venvs.venv_python(name, tmp_path)
    python.parent.mkdir(parents=True)
    python.write_text("")  # the environment exists: not created again
    (python.parent.parent / venvs.READY).write_text(OLD_READY)
    archive = tmp_path / "sdist" / "llama_cpp_python.tar.gz"
    monkeypatch.setattr(venvs.sdist, "fetch_sdist", lambda cache, log: archive)
    ran = []
    monkeypatch.setattr(
        venvs, "run_step", lambda command, what, env=None: ran.append((command, env))
    )
    for _ in range(3):
        assert venvs.ensure_venv(venvs.LLAMA_CPP_PYTHON, tmp_path, log=lambda _line: None) == python
    ((command, env),) = ran
    assert command[-1] == f"llama-cpp-python[server] @ {archive.as_uri()}"
    assert {"--no-cache-dir", "--force-reinstall"} <= set(command)
    assert command[command.index("-c") + 1] == str(venvs.lock_file(name))
    assert env["CMAKE_ARGS"] == "-DLLAMA_BUILD=OFF"
    assert venvs.is_ready(name, tmp_path)


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
