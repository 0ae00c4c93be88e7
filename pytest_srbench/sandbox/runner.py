"""Running code in the sandbox: the public API, the cached plan, output capture and status.

Why one long module: every path from a program's start to its reaped end is here, so a
reviewer checks the sandbox's guarantees in one place."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypeVar

from pytest_srbench.core.errors import UnavailableError
from pytest_srbench.sandbox import isolation

T = TypeVar("T")
Status = Literal["ok", "failed", "timeout", "limit"]
TRUNCATED = "\n…[truncated]"
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
SCRIPT_NAME = "main.py"
_GRACE_S = 0.25  # SIGTERM, then SIGKILL
_DRAIN_S = 1.0  # how long output may still arrive after the launcher ended
_MEMORY = ("MemoryError", "Cannot allocate memory", "Unable to allocate", "bad_alloc")
_PROCESSES = ("Resource temporarily unavailable", "can't start new thread", "Cannot fork")


@dataclass(frozen=True)
class SandboxLimits:
    """Per-run limits: wall clock; CPU seconds and address space per process; file size;
    processes and threads of the run; captured bytes per output stream."""

    wall_timeout_s: float = 10.0
    cpu_seconds: int = 10
    memory_mb: int = 1024
    file_size_mb: int = 16
    max_processes: int = 64
    output_bytes: int = 65536  # per stream; longer output is truncated (never a deadlock)

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if not value > 0:
                raise ValueError(f"SandboxLimits.{name} must be positive, not {value!r}")


@dataclass(frozen=True)
class SandboxResult:
    """How one sandboxed run ended, its (possibly truncated) output and what was isolated."""

    status: Status  # ok: exit 0; failed: non-zero exit; timeout: wall clock; limit: a resource
    exit_code: int | None  # -N when killed by signal N; None after a wall-clock timeout
    stdout: str
    stderr: str
    duration_s: float
    reason: str | None
    isolation: dict[str, bool]


@dataclass(frozen=True)
class Plan:
    """The mechanisms every run uses, what they isolate and the probe's report."""

    mechanisms: tuple[str, ...]
    isolation: dict[str, bool] = field(default_factory=dict)
    report: dict[str, object] = field(default_factory=dict)
    read_only: tuple[str, ...] = ()


class SandboxError(UnavailableError):
    """The sandbox itself could not be set up (never raised for the program's own failures)."""


def sandbox_env(workdir: str) -> dict[str, str]:
    """The complete environment of a sandboxed program: nothing is inherited."""
    one = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    return {"PATH": SANDBOX_PATH, "HOME": workdir, "LANG": "C.UTF-8", **one} | {
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }


async def run_python(
    code: str,
    *,
    stdin: str = "",
    limits: SandboxLimits = SandboxLimits(),
    workdir: Path | None = None,
    files: Mapping[str, str] | None = None,
    read_only: Sequence[Path] = (),
) -> SandboxResult:
    """Run ``code`` as ``main.py`` with this interpreter in ``workdir`` (default: a fresh
    temporary directory, removed afterwards) after writing ``files`` there. ``read_only``
    directories (such as a suite's assets) stay readable, at the same paths, under a private
    root."""
    entries = _check_files(files or {})
    plan = _with_read_only(await _plan(), read_only)
    own = workdir is None
    where = tempfile.mkdtemp(prefix="srbench-sandbox-") if workdir is None else str(workdir)
    try:
        real = _guard_workdir(where, plan.read_only, create=True)
        for relative, text in entries:
            target = Path(real, relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        script = Path(real, SCRIPT_NAME)
        script.write_text(code, encoding="utf-8")
        # Not -I: a scrubbed environment replaces -E (so PYTHONHASHSEED applies) and the
        # working directory stays on sys.path (so modules in ``files`` can be imported).
        argv = [sys.executable, "-s", "-B", str(script)]
        return await _run(argv, real, limits, stdin, plan, give_back=not own)
    finally:
        if own:
            await asyncio.shield(asyncio.to_thread(_remove_tree, where))


async def run_shell(
    command: str, *, workdir: Path, limits: SandboxLimits = SandboxLimits(), stdin: str = ""
) -> SandboxResult:
    """Run ``command`` with /bin/sh -c in the caller's persistent working directory."""
    plan = await _plan()
    real = _guard_workdir(str(workdir), plan.read_only, create=False)
    return await _run(["/bin/sh", "-c", command], real, limits, stdin, plan, give_back=True)


def run_python_sync(
    code: str,
    *,
    stdin: str = "",
    limits: SandboxLimits = SandboxLimits(),
    workdir: Path | None = None,
    files: Mapping[str, str] | None = None,
    read_only: Sequence[Path] = (),
) -> SandboxResult:
    """``run_python`` for synchronous callers (also from inside a running event loop)."""
    return _blocking(
        lambda: run_python(
            code, stdin=stdin, limits=limits, workdir=workdir, files=files, read_only=read_only
        )
    )


def run_shell_sync(
    command: str, *, workdir: Path, limits: SandboxLimits = SandboxLimits(), stdin: str = ""
) -> SandboxResult:
    """``run_shell`` for synchronous callers (also from inside a running event loop)."""
    return _blocking(lambda: run_shell(command, workdir=workdir, limits=limits, stdin=stdin))


def isolation_report() -> dict[str, object]:
    """What this machine allows: which mechanisms work, which do not and why (probed once)."""
    return copy.deepcopy(get_plan().report)


def _blocking(factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(factory())
    with ThreadPoolExecutor(1, thread_name_prefix="srbench-sandbox") as pool:
        return pool.submit(lambda: asyncio.run(factory())).result()


_plan_lock = threading.Lock()
_plan_cache: Plan | None = None


def get_plan() -> Plan:
    """The machine's isolation plan: chosen by trial runs once per process, then cached."""
    global _plan_cache
    with _plan_lock:
        if _plan_cache is None:
            try:
                chosen = isolation.choose_plan(lambda m, ro: _blocking(lambda: _trial(m, ro)))
            except RuntimeError as exc:
                raise SandboxError(str(exc)) from exc
            _plan_cache = Plan(*chosen, read_only=isolation.python_paths())
        return _plan_cache


async def _plan() -> Plan:
    cached = _plan_cache
    return cached if cached is not None else await asyncio.to_thread(get_plan)


async def _trial(
    mechanisms: tuple[str, ...], read_only: tuple[str, ...]
) -> tuple[str | None, dict[str, Any]]:
    """One probe run of ``isolation.TRIAL_CODE`` under ``mechanisms``: (error, facts)."""
    where = tempfile.mkdtemp(prefix="srbench-sandbox-probe-")
    outside = tempfile.mkdtemp(prefix="srbench-sandbox-probe-")
    try:
        os.chmod(outside, 0o777)  # even a world-writable directory must stay out of reach
        Path(where, SCRIPT_NAME).write_text(isolation.TRIAL_CODE, encoding="utf-8")
        argv = [sys.executable, "-s", "-B", f"{where}/{SCRIPT_NAME}", f"{outside}/written"]
        try:
            result = await _execute(
                argv, where, SandboxLimits(), "", Plan(mechanisms, {}, {}, read_only)
            )
        except SandboxError as exc:
            return str(exc).removeprefix("sandbox setup failed at "), {}
        if result.status != "ok":
            return f"run {result.reason}: {result.stderr[-300:]}", {}
        return None, {
            **json.loads(result.stdout),
            "outside_write": os.path.exists(f"{outside}/written"),
        }
    finally:
        _remove_tree(where)
        _remove_tree(outside)


def _with_read_only(plan: Plan, extra: Sequence[Path]) -> Plan:
    """The plan with more read-only directories (each must exist and be a directory)."""
    if not extra:
        return plan
    paths = []
    for path in extra:
        real = os.path.realpath(path)
        if not os.path.isdir(real):
            raise NotADirectoryError(f"sandbox read-only path {path} is not a directory")
        paths.append(real)
    return dataclasses.replace(plan, read_only=(*plan.read_only, *sorted(set(paths))))


def _guard_workdir(workdir: str, read_only: tuple[str, ...], create: bool) -> str:
    """The real path of ``workdir`` (made if ``create``); refused when it is, or holds, a shared,
    system or Python directory, or this package: as root, the run's uid owns it while it runs."""
    real = os.path.realpath(workdir)
    shared = ["/", "/tmp", "/var/tmp", "/var", "/home", "/root", "/srv", "/mnt", "/run", "/boot"]
    package = os.path.dirname(os.path.dirname(os.path.abspath(isolation.__file__)))
    system = [*isolation.SYSTEM_PATHS, "/proc", "/sys", "/dev", package, *read_only]
    system += [os.path.realpath(p) for p in system]
    if (
        real in shared
        or isolation.inside(real, system)
        or any(isolation.inside(p, [real]) for p in system)
    ):
        raise ValueError(f"refusing to use {real} as a sandbox working directory")
    if create:
        os.makedirs(real, exist_ok=True)
    if not os.path.isdir(real):
        raise NotADirectoryError(f"sandbox working directory {workdir} is not a directory")
    return real


def _check_files(files: Mapping[str, str]) -> list[tuple[PurePosixPath, str]]:
    entries = []
    for name, text in files.items():
        path = PurePosixPath(name)
        if not name or path.is_absolute() or ".." in path.parts or not path.parts:
            raise ValueError(f"sandbox file names must be relative paths inside it: {name!r}")
        if path == PurePosixPath(SCRIPT_NAME):
            raise ValueError(f"{SCRIPT_NAME!r} is reserved for the code run_python runs")
        entries.append((path, text))
    return entries


def _remove_tree(path: str) -> None:
    def unlock(func: Callable[[str], object], failed: str, _exc: object) -> None:
        with contextlib.suppress(OSError):  # a directory the program made read-only
            os.chmod(os.path.dirname(failed), 0o700)
            func(failed)

    shutil.rmtree(path, onerror=unlock)


async def _run(
    argv: list[str], workdir: str, limits: SandboxLimits, stdin: str, plan: Plan, give_back: bool
) -> SandboxResult:
    """Execute, then hand the working directory back to the caller's uid (as root)."""
    try:
        return await _execute(argv, workdir, limits, stdin, plan)
    finally:
        if give_back and "setuid" in plan.mechanisms:
            uid, gid = os.geteuid(), os.getegid()
            await asyncio.shield(asyncio.to_thread(isolation.chown_tree, workdir, uid, gid, False))


class _Capture:
    """The first ``cap`` bytes of a stream and its length; the rest is read and dropped."""

    def __init__(self, cap: int) -> None:
        self.cap, self.kept, self.total = cap, bytearray(), 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(1 << 16):
            self.total += len(chunk)
            self.kept += chunk[: max(0, self.cap - len(self.kept))]

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        return text + TRUNCATED if self.total > self.cap else text


async def _feed(pipe: asyncio.StreamWriter, data: bytes) -> None:
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        pipe.write(data)
        await pipe.drain()
        pipe.close()


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _reap(proc: asyncio.subprocess.Process) -> None:
    """Wait for a signalled launcher; SIGKILL its group if it outlives the grace."""
    try:
        await asyncio.wait_for(proc.wait(), _GRACE_S)
    except TimeoutError:
        _kill_if_running(proc)
        await proc.wait()


def _kill_if_running(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the group of a launcher that outlived its grace (the launcher, alive, must reap
    init: killing both at once would leave init to the machine's pid 1)."""
    if proc.returncode is None:
        _signal_group(proc.pid, signal.SIGKILL)


async def _execute(
    argv: list[str], workdir: str, limits: SandboxLimits, stdin: str, plan: Plan
) -> SandboxResult:
    """Launch the launcher in its own session, capture, enforce the wall clock, classify."""
    config = {
        "argv": argv,
        "env": sandbox_env(workdir),
        "workdir": workdir,
        "mechanisms": list(plan.mechanisms),
        "read_only": list(plan.read_only),
        "tmp_mb": max(64, 4 * limits.file_size_mb),
        "limits": {
            "cpu": max(1, int(limits.cpu_seconds)),
            "memory": int(limits.memory_mb) << 20,
            "fsize": int(limits.file_size_mb) << 20,
            "processes": int(limits.max_processes),
        },
    }
    status_read, status_write = os.pipe()
    os.set_blocking(status_read, False)
    out, err = _Capture(limits.output_bytes), _Capture(limits.output_bytes)
    tasks: list[asyncio.Task[None]] = []
    timed_out = False
    started = time.monotonic()
    try:
        try:
            proc = await asyncio.create_subprocess_exec(
                *isolation.launcher_argv({**config, "status_fd": status_write}),
                stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                pass_fds=(status_write,),
                start_new_session=True,
                env={"PATH": SANDBOX_PATH, "LANG": "C.UTF-8"},
                cwd="/",
            )
        finally:
            os.close(status_write)
        assert proc.stdout is not None and proc.stderr is not None
        tasks += [
            asyncio.create_task(c.drain(s)) for c, s in ((out, proc.stdout), (err, proc.stderr))
        ]
        if stdin and proc.stdin is not None:
            tasks.append(asyncio.create_task(_feed(proc.stdin, stdin.encode("utf-8"))))
        try:
            await asyncio.wait_for(proc.wait(), limits.wall_timeout_s)
        except TimeoutError:
            timed_out = True
            _signal_group(proc.pid, signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), _GRACE_S)
            except TimeoutError:
                _signal_group(proc.pid, signal.SIGKILL)
                await proc.wait()
        finally:
            if proc.returncode is None:  # cancelled: init ends the run on SIGTERM at once
                _signal_group(proc.pid, signal.SIGTERM)
                # reaped before the cancellation propagates, so no subprocess transport
                # outlives the event loop (its late clean-up would run at interpreter exit)
                await asyncio.shield(_reap(proc))
        duration = time.monotonic() - started
        if (await asyncio.wait(tasks, timeout=_DRAIN_S))[1]:  # a stray process holds a pipe
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
        lines = _read_status(status_read)
    finally:
        for task in tasks:
            task.cancel()
        os.close(status_read)
    status, exit_code, reason = _classify(lines, timed_out, limits, err.text())
    return SandboxResult(
        status, exit_code, out.text(), err.text(), round(duration, 4), reason, dict(plan.isolation)
    )


def _read_status(fd: int) -> list[str]:
    data = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 1 << 16):
            data += chunk
    return data.decode("utf-8", errors="replace").splitlines()


def _classify(
    lines: list[str], timed_out: bool, limits: SandboxLimits, stderr: str
) -> tuple[Status, int | None, str | None]:
    """Status, exit code and reason from the launcher's status lines and stderr's tail."""
    if timed_out:
        return "timeout", None, f"wall-clock timeout after {limits.wall_timeout_s:.1f} s"
    ended: tuple[str, int, float] | None = None
    for line in lines:
        kind, _, rest = line.partition(" ")
        if kind == "error":
            raise SandboxError(f"sandbox setup failed at {rest}")
        if kind in ("exit", "signal"):
            number, seconds = rest.split()
            ended = (kind, int(number), float(seconds))
    if ended is None:
        return "failed", None, "the sandbox ended without reporting the program's exit"
    kind, value, cpu = ended
    code = -value if kind == "signal" else value
    if code == 0:
        return "ok", 0, None
    if code == -signal.SIGXCPU or (code == -signal.SIGKILL and cpu >= limits.cpu_seconds):
        return "limit", code, f"CPU time limit ({limits.cpu_seconds} s)"
    tail = stderr[-4096:]
    if code == -signal.SIGXFSZ or "File too large" in tail:
        return "limit", code, f"file size limit ({limits.file_size_mb} MB)"
    if any(marker in tail for marker in _MEMORY):
        return "limit", code, f"memory limit ({limits.memory_mb} MB)"
    if any(marker in tail for marker in _PROCESSES):
        return "limit", code, f"process limit ({limits.max_processes})"
    if code == -signal.SIGKILL:  # not the CPU limit and not the runner: the kernel's OOM killer
        return "limit", code, "killed by SIGKILL (likely out of memory)"
    if kind == "signal":
        return "failed", code, f"killed by {_signal_name(value)}"
    return "failed", code, f"exit code {value}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
