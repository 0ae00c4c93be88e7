"""`srbench real build` with another build running, and without a compiler (issue 47, points
5 and 7): two real processes on one cache folder build once, the second waiting for the first
(the compilation is a stand-in injected through ``build_server``'s ``compile_step``); a PATH
without the toolchain gets one line saying what to install."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pytest_srbench.managed import llama

ROOT = Path(__file__).resolve().parents[2]

BUILDER = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from pytest_srbench.managed import llama

    cache, journal = Path(sys.argv[1]), Path(sys.argv[2])

    def compile_step(target, jobs, log):
        with journal.open("a") as out:
            out.write(f"start {os.getpid()}\\n")
        source = target / "src"
        source.mkdir(parents=True, exist_ok=True)
        (source / "CMakeLists.txt").write_text("x")
        time.sleep(2.0)  # the other process starts meanwhile
        assert (source / "CMakeLists.txt").exists(), "the source tree was removed"
        binary = target / "build" / "bin" / "llama-server"
        binary.parent.mkdir(parents=True, exist_ok=True)
        binary.write_text("#!/bin/sh\\n")
        os.chmod(binary, 0o755)
        for name in llama.SHARED_LIBRARIES:
            (binary.parent / name).write_text("")
        with journal.open("a") as out:
            out.write(f"end {os.getpid()}\\n")

    print(llama.build_server(cache, compile_step=compile_step))
    """
)


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_a_second_build_waits_for_the_first_and_reuses_it(tmp_path):
    cache, journal = tmp_path / "cache", tmp_path / "journal"
    command = [sys.executable, "-c", BUILDER, str(cache), str(journal)]
    first = subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while not journal.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    outputs = [p.communicate(timeout=120) for p in (first, second)]
    for process, (_out, err) in zip((first, second), outputs, strict=True):
        assert process.returncode == 0, err.decode()
    steps = journal.read_text().split()
    assert steps[0::2] == ["start", "end"], steps  # one compilation, never two at once
    binary = str(llama.server_dir(cache) / "build" / "bin" / "llama-server")
    assert outputs[0][0].decode().strip() == binary
    assert outputs[1][0].decode().splitlines()[-1] == binary
    assert "waiting for another llama-server build" in outputs[1][0].decode()
    assert (cache / "llama-server.lock").exists()


@pytest.mark.parametrize("parts", [[], ["--all"]])  # --all: what scripts/test runs
def test_real_build_without_a_toolchain_says_what_to_install(tmp_path, parts):
    empty = tmp_path / "bin"
    empty.mkdir()
    assert llama.missing_toolchain(str(empty)) == [
        "a C compiler",
        "a C++ compiler",
        "make",
        "cmake",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "real", "build", *parts],
        env={**_env(), "PATH": str(empty), "SRBENCH_CACHE": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "install a C/C++ compiler, make and cmake (Debian: build-essential cmake)" in line
    assert "a C compiler, a C++ compiler, make, cmake" in line
