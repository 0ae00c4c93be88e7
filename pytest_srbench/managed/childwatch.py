"""Managed child processes that never outlive the process that started them.

Every server pytest-srbench starts for a run (the simulator, llama-server, LiteLLM,
llama-cpp-python's server) is launched through :func:`spawn_watched`, which runs this file
as a small stdlib-only launcher in front of the real command:

- ``exec`` mode (Linux, called from the main thread): the launcher sets
  ``prctl(PR_SET_PDEATHSIG, SIGKILL)``, checks that its parent is still the caller, then
  ``exec``s the command, which keeps the launcher's pid. The kernel kills the server when
  the caller dies, even by ``SIGKILL``. The death signal fires when the *thread* that forked
  the child exits, so this mode is used only from the main thread.
- ``supervise`` mode (other threads, other systems): the launcher stays as the server's
  parent, forwards SIGTERM / SIGINT / SIGHUP to it, polls its own parent pid every 0.2 s and
  stops the server (SIGTERM, then SIGKILL after 5 s) when the caller is gone. On Linux the
  server also gets the death signal of the launcher, so killing the launcher kills it too.

The launcher exits the way the command exits (same code, or the same signal), so callers
see the server's own status. Pytest workers started by ``srbench serve`` are deliberately
*not* launched this way: a run must survive a restart of the service.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

PR_SET_PDEATHSIG = 1
POLL_S = 0.2
STOP_GRACE_S = 5.0
FORWARDED = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name)
)

Sink = int | IO[Any] | None


def pdeathsig_usable() -> bool:
    """True where the kernel death signal can watch the caller: Linux, main thread."""
    return (
        sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread()
    )


def launcher_command(command: Sequence[str], *, mode: str, parent: int) -> list[str]:
    """The argument vector that runs ``command`` behind the launcher."""
    return [sys.executable, "-I", "-S", str(Path(__file__).resolve()), mode, str(parent), "--",
            *command]  # fmt: skip


def spawn_watched(
    command: Sequence[str],
    *,
    stdin: Sink = None,
    stdout: Sink = None,
    stderr: Sink = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    start_new_session: bool = False,
) -> subprocess.Popen[bytes]:
    """Start ``command`` so that it stops when this process dies (see the module docstring).

    A missing executable raises :class:`FileNotFoundError` here, as ``Popen`` would.
    """
    if not command:
        raise ValueError("empty command")
    search = (env if env is not None else os.environ).get("PATH", os.defpath)
    executable = shutil.which(command[0], path=search)
    if executable is None:
        raise FileNotFoundError(errno.ENOENT, "no such executable", command[0])
    mode = "exec" if pdeathsig_usable() else "supervise"
    return subprocess.Popen(
        launcher_command([executable, *command[1:]], mode=mode, parent=os.getpid()),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        cwd=cwd,
        start_new_session=start_new_session,
    )


def terminate(process: subprocess.Popen[Any], *, grace_s: float, group: bool = False) -> None:
    """Stop a started server: SIGTERM, then SIGKILL after ``grace_s``; ``group`` signals its
    whole process group (a server started in a new session with children of its own)."""
    if process.poll() is not None:
        return

    def send(signum: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            (os.killpg if group else os.kill)(process.pid, signum)

    send(signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        send(signal.SIGKILL)
        process.wait(timeout=10)


def remove_scratch(folder: Path | None) -> None:
    """Remove a stopped server's scratch folder (its address file, config and log); nothing
    when there is none or it is gone. A server that failed to start keeps its folder: the
    error names the log in it."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def die_with_parent(parent: int) -> bool:
    """Have the kernel SIGKILL this process the moment ``parent``, its parent now, dies: for a
    process somebody else started (a pytest-xdist worker of this host's controller). False
    when that cannot be arranged here (another parent, not Linux)."""
    if os.getppid() != parent or not _set_death_signal():
        return False
    if os.getppid() != parent:  # the parent died before the death signal was armed
        os.kill(os.getpid(), signal.SIGKILL)
    return True


# -- the launcher (runs as ``python -I -S childwatch.py MODE PARENT -- COMMAND...``) --------


def _set_death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent (thread) exits."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _exit_like(returncode: int) -> NoReturn:
    """Leave with the child's status: the same exit code, or death by the same signal."""
    if returncode < 0:
        signal.signal(-returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -returncode)
    os._exit(returncode & 0xFF if returncode >= 0 else 128 - returncode)


def _supervise(command: list[str], parent: int) -> None:
    if sys.platform.startswith("linux"):  # the command also dies with this launcher
        command = launcher_command(command, mode="exec", parent=os.getpid())
    child = subprocess.Popen(command)

    def forward(signum: int, _frame: object) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    for forwarded in FORWARDED:
        signal.signal(forwarded, forward)
    while True:
        with contextlib.suppress(subprocess.TimeoutExpired):
            _exit_like(child.wait(timeout=POLL_S))
        if os.getppid() != parent:  # the caller died: this process was re-parented
            child.terminate()
            deadline = time.monotonic() + STOP_GRACE_S
            while child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            if child.poll() is None:
                child.kill()
                child.wait()
            os._exit(0)


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--" or argv[0] not in ("exec", "supervise"):
        sys.stderr.write("usage: childwatch.py exec|supervise PARENT_PID -- COMMAND...\n")
        os._exit(2)
    mode, parent, command = argv[0], argv[1], argv[3:]
    if os.getppid() != int(parent):
        os._exit(0)  # the caller is already gone: start nothing
    if mode == "exec" and _set_death_signal():
        if os.getppid() != int(parent):  # it died before the death signal was armed
            os._exit(0)
        try:
            os.execv(command[0], command)
        except OSError as error:
            sys.stderr.write(f"childwatch: cannot execute {command[0]}: {error}\n")
            os._exit(127)
    _supervise(command, int(parent))


if __name__ == "__main__":
    main(sys.argv[1:])
