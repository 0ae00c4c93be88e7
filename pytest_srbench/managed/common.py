"""Cache locations, build commands, free ports and waiting for a server to answer."""

from __future__ import annotations

import os
import platform
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from pytest_srbench.core.errors import UnavailableError


class RealPartError(UnavailableError):
    """A real component is missing, failed to build or did not start."""


def cache_root() -> Path:
    """``$SRBENCH_CACHE``, else ``~/.cache/pytest-srbench``: builds are kept here and reused."""
    configured = os.environ.get("SRBENCH_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "pytest-srbench"


# Intel's AMX tile instructions, turned off in every llama.cpp build made here: a virtual
# machine may list them among its CPU's features (so ``-march=native`` uses them) while its
# host does not let a process run them; llama-server then dies of SIGILL at its first matrix
# product (seen 2026-12-02 on an x86_64 machine of this kind).
NO_AMX = ("-mno-amx-tile", "-mno-amx-int8", "-mno-amx-bf16")


def native_compile_flags() -> tuple[str, ...]:
    """The C and C++ flags every llama.cpp build made here adds to ``-march=native``."""
    return NO_AMX if platform.machine().lower() in ("x86_64", "amd64") else ()


def cmake_compile_args() -> list[str]:
    """``native_compile_flags`` as CMake cache settings for the C and C++ compilers."""
    flags = " ".join(native_compile_flags())
    return [f"-DCMAKE_C_FLAGS={flags}", f"-DCMAKE_CXX_FLAGS={flags}"] if flags else []


LOG_TAIL_LINES = 30  # of a failed step's log, quoted in its error


def run_step(
    command: Sequence[str],
    what: str,
    *,
    hint: str = "",
    env: Mapping[str, str] | None = None,
    log_path: Path | None = None,
) -> None:
    """Run one build or install command; a failure is a one-line ``RealPartError`` naming the
    step (and ``hint``: what may be missing). Its output goes to this process's, or with
    ``log_path`` to that file (appended: a compiler's thousands of lines stay out of the
    terminal), whose last lines the error then quotes."""
    try:
        if log_path is None:
            subprocess.run(list(command), check=True, env=None if env is None else dict(env))
        else:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            with open(log_path, "ab") as log:
                subprocess.run(
                    list(command),
                    check=True,
                    env=None if env is None else dict(env),
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
    except FileNotFoundError as error:
        said = f"{what}: {error.filename} not found"
        raise RealPartError(said + (f": {hint}" if hint else "")) from None
    except subprocess.CalledProcessError as error:
        where = "its output is above" if log_path is None else f"its output: {log_path}"
        said = f"{what} failed (exit {error.returncode}; {where})"
        if hint:
            said += f". If a tool is missing: {hint}"
        if log_path is not None:
            said += "\n" + log_tail(log_path)
        raise RealPartError(said) from None


def log_tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a build log, indented (where a compiler says what failed)."""
    try:
        with open(path, "rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - 64 * 1024))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join("    " + line for line in text.splitlines()[-lines:])


def naming_log(error: RealPartError, log_path: Path | None) -> RealPartError:
    """A server's failed start, its error naming the log it left (kept for reading)."""
    return RealPartError(f"{error}; its log: {log_path}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def how_it_ended(returncode: int) -> str:
    """A server process's end in words: its exit status, or the signal that killed it (with
    what to do about an illegal instruction: a build for a CPU that this one is not)."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        return f"was killed by signal {-returncode}"
    said = f"was killed by {name} (exit status {returncode})"
    if name == "SIGILL":
        said += (
            ": an illegal instruction, so its build uses CPU instructions this machine does not "
            "run; build it again here with `srbench real build`"
        )
    return said


def wait_until_ready(
    url: str,
    *,
    timeout_s: float,
    process: subprocess.Popen[bytes] | None = None,
    headers: dict[str, str] | None = None,
) -> None:
    """Poll ``url`` until it answers 200, the process exits, or the timeout passes."""
    deadline = time.monotonic() + timeout_s
    last = "no answer"
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RealPartError(
                f"the server {how_it_ended(process.returncode)} before {url} answered"
            )
        try:
            request = urllib.request.Request(url, headers=headers or {})
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 200:
                    return
                last = f"HTTP {response.status}"
        except urllib.error.HTTPError as error:
            last = f"HTTP {error.code}"
        except OSError as error:
            last = type(error).__name__
        time.sleep(0.1)
    raise RealPartError(f"{url} did not become ready within {timeout_s:.0f} s (last: {last})")
