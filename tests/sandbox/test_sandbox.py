"""The code sandbox with real processes: results, limits, containment and isolation."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import time
import uuid
from pathlib import Path

import pytest

from pytest_srbench import sandbox
from pytest_srbench.sandbox import SandboxLimits, run_python_sync, run_shell_sync

QUICK = SandboxLimits(wall_timeout_s=5.0, cpu_seconds=5)
DEADLINE_S = 30.0  # how long to wait for a process to appear or vanish (never a speed bound)


def processes_mentioning(text: str) -> list[int]:
    """Live processes whose command line contains ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if text.encode() in handle.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def wait_until_gone(text: str) -> None:
    """Poll until no live process mentions ``text``; fail after a generous deadline."""
    deadline = time.monotonic() + DEADLINE_S
    while (left := processes_mentioning(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"still running after {DEADLINE_S:.0f} s: {left}"


async def wait_until_running(text: str) -> None:
    """Poll (without blocking the event loop) until a live process mentions ``text``."""
    deadline = time.monotonic() + DEADLINE_S
    while not processes_mentioning(text):
        assert time.monotonic() < deadline, f"no process mentioned {text} in {DEADLINE_S:.0f} s"
        await asyncio.sleep(0.05)


def test_ok_run_returns_stdout_and_isolation():
    result = run_python_sync("print('hello', 6 * 7)")
    assert result.status == "ok"
    assert result.exit_code == 0
    assert result.stdout == "hello 42\n"
    assert result.reason is None
    report = sandbox.isolation_report()
    assert result.isolation == {key: report[key] for key in result.isolation}
    assert set(result.isolation) == {"network", "filesystem", "environment", "user", "processes"}


def test_stdin_is_passed():
    result = run_python_sync("import sys\nprint(sys.stdin.read().upper())", stdin="abc\ndef")
    assert (result.status, result.stdout) == ("ok", "ABC\nDEF\n")


def test_nonzero_exit_and_exception_are_failed():
    result = run_python_sync("import sys\nprint('x')\nsys.exit(3)")
    assert (result.status, result.exit_code, result.reason) == ("failed", 3, "exit code 3")
    result = run_python_sync("1 / 0")
    assert (result.status, result.exit_code) == ("failed", 1)
    assert "ZeroDivisionError" in result.stderr


def test_busy_loop_stops_at_the_cpu_limit():
    # The wall clock is far away, so the status alone tells which limit ended the loop (a
    # wall-clock end would be "timeout"), however slowly a loaded machine hands out CPU time.
    limits = SandboxLimits(wall_timeout_s=120.0, cpu_seconds=1)
    result = run_python_sync("while True:\n    pass", limits=limits)
    assert result.status == "limit"
    assert result.reason == "CPU time limit (1 s)"


def test_wall_clock_timeout_kills_the_whole_tree():
    # The wall clock starts at launch, so the program must reach its sleep before the limit for
    # the output and the grandchild to exist. On a loaded machine start-up can outlast a short
    # limit: then the run is repeated with a longer one. Every run, reached or not, must end as
    # a timeout with its whole process tree gone.
    for wall_timeout_s in (1.0, 4.0, 16.0):
        marker = f"987.{uuid.uuid4().int % 10**6}"
        code = (
            "import subprocess, time\n"
            f"subprocess.Popen(['sleep', '{marker}'], start_new_session=True)\n"
            "print('started', flush=True)\n"
            "time.sleep(60)\n"
        )
        limits = SandboxLimits(wall_timeout_s=wall_timeout_s, cpu_seconds=5)
        started = time.monotonic()
        result = run_python_sync(code, limits=limits)
        assert time.monotonic() - started < 50  # killed, not left to sleep its 60 s
        assert result.status == "timeout"
        assert result.exit_code is None
        assert result.reason == f"wall-clock timeout after {wall_timeout_s:.1f} s"
        wait_until_gone(marker)  # the grandchild in its own session too
        if result.stdout:
            break
    assert result.stdout == "started\n"  # output written before the timeout is kept


def test_memory_hog_hits_the_memory_limit():
    limits = SandboxLimits(wall_timeout_s=10.0, memory_mb=256)
    result = run_python_sync("data = bytearray(2 * 1024**3)\nprint(len(data))", limits=limits)
    assert result.status == "limit"
    assert "memory" in (result.reason or "")
    assert "MemoryError" in result.stderr


def test_file_size_limit():
    limits = SandboxLimits(file_size_mb=1)
    code = "with open('big', 'wb') as f:\n    f.write(b'x' * 3 * 1024 * 1024)"
    result = run_python_sync(code, limits=limits)
    assert result.status == "limit"
    assert result.reason == "file size limit (1 MB)"


def test_fork_bomb_is_contained(tmp_path):
    workdir = tmp_path / f"bomb-{uuid.uuid4().hex}"
    limits = SandboxLimits(wall_timeout_s=5.0, cpu_seconds=5, max_processes=16)
    started = time.monotonic()
    result = run_python_sync(
        "import os\nwhile True:\n    os.fork()", limits=limits, workdir=workdir
    )
    assert time.monotonic() - started < 60  # a bomb never ends by itself: it was stopped
    assert result.status in ("limit", "timeout")
    if result.status == "limit":
        assert result.reason == "process limit (16)"
    wait_until_gone(str(workdir.resolve()))  # each copy runs .../main.py
    after = run_python_sync("import os\nos.fork() or print('fine')")
    assert (after.status, after.stdout) == ("ok", "fine\n")


def test_parent_secrets_are_not_visible(monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret-4711")
    code = (
        "import json, os\n"
        "seen = []\n"
        "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "    try:\n"
        "        seen.append(open(f'/proc/{pid}/environ', 'rb').read().decode())\n"
        "    except OSError:\n"
        "        pass\n"
        "print(json.dumps({'env': dict(os.environ), 'proc': seen}))\n"
    )
    workdir = tmp_path / "work"
    result = run_python_sync(code, workdir=workdir)
    assert result.status == "ok", result.stderr
    env = json.loads(result.stdout)["env"]
    assert "OPENAI_API_KEY" not in env
    assert "sk-test-secret-4711" not in json.dumps(env)
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin"
    assert env["LANG"] == "C.UTF-8"
    assert env["HOME"] == str(workdir.resolve())
    assert env["PYTHONHASHSEED"] == "0"
    if sandbox.isolation_report()["environment"]:  # the caller's /proc/PID/environ is out of reach
        assert "sk-test-secret" not in result.stdout


def test_writes_outside_the_working_directory_fail(tmp_path):
    report = sandbox.isolation_report()
    if not report["filesystem"]:
        pytest.skip(f"no filesystem containment here: {report['mechanisms']}")
    outside = tmp_path / "outside"
    outside.mkdir()
    outside.chmod(0o777)  # even a world-writable directory stays out of reach
    stray = f"/tmp/srbench-sandbox-stray-{uuid.uuid4().hex}"
    targets = [str(outside / "x"), "/etc/srbench-sandbox-x", stray, "inside.txt"]
    code = (
        "import json\n"
        "done = {}\n"
        f"for path in {targets!r}:\n"
        "    try:\n"
        "        open(path, 'w').write('x')\n"
        "        done[path] = True\n"
        "    except OSError:\n"
        "        done[path] = False\n"
        "print(json.dumps(done))\n"
    )
    workdir = tmp_path / "work"
    result = run_python_sync(code, workdir=workdir)
    assert result.status == "ok", result.stderr
    done = json.loads(result.stdout)
    assert done["inside.txt"] is True
    assert (workdir / "inside.txt").read_text() == "x"
    assert not (outside / "x").exists()
    assert not Path("/etc/srbench-sandbox-x").exists()
    assert not Path(stray).exists()  # /tmp inside is private: the write may succeed there
    assert done[str(outside / "x")] is False
    assert done["/etc/srbench-sandbox-x"] is False


def test_network_is_blocked():
    report = sandbox.isolation_report()
    if not report["network"]:
        pytest.skip(f"no network isolation here: {report['mechanisms']}")
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.setblocking(False)
        port = server.getsockname()[1]
        code = (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
            "    print('connected')\n"
            "except OSError as exc:\n"
            "    print('blocked', type(exc).__name__)\n"
        )
        result = run_python_sync(code)
        assert result.status == "ok", result.stderr
        assert result.stdout.startswith("blocked")
        with pytest.raises(BlockingIOError):
            server.accept()


def test_huge_output_is_truncated_without_deadlock():
    code = (
        "import sys\n"
        "for _ in range(50):\n"
        "    sys.stdout.write('o' * 100_000)\n"
        "    sys.stderr.write('e' * 100_000)\n"
    )
    limits = SandboxLimits(wall_timeout_s=60.0, output_bytes=1000)
    result = run_python_sync(code, limits=limits)
    assert result.status == "ok"  # a deadlock on full pipes would end as a wall-clock timeout
    assert result.stdout == "o" * 1000 + "\n…[truncated]"
    assert result.stderr == "e" * 1000 + "\n…[truncated]"


def test_output_is_decoded_with_replacement():
    result = run_python_sync("import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe end')")
    assert result.stdout == "ok \ufffd\ufffd end"


def test_run_shell_keeps_files_between_calls(tmp_path):
    workdir = tmp_path / "task"
    workdir.mkdir()
    (workdir / "seed.txt").write_text("seed\n")
    first = run_shell_sync("echo hello > a.txt && mkdir -p sub && cat seed.txt", workdir=workdir)
    assert (first.status, first.stdout) == ("ok", "seed\n"), first.stderr
    second = run_shell_sync("cat a.txt; echo again >> a.txt; ls sub", workdir=workdir)
    assert (second.status, second.stdout) == ("ok", "hello\n"), second.stderr
    assert (workdir / "a.txt").read_text() == "hello\nagain\n"
    for path in (workdir, workdir / "a.txt", workdir / "sub"):
        assert path.stat().st_uid == os.geteuid()  # handed back to the caller after each run
    failed = run_shell_sync("exit 7", workdir=workdir, limits=QUICK)
    assert (failed.status, failed.exit_code) == ("failed", 7)


def test_files_are_written_and_importable():
    files = {"data/in.txt": "21", "helper.py": "def twice(x):\n    return 2 * x\n"}
    code = "import helper\nprint(helper.twice(int(open('data/in.txt').read())))"
    result = run_python_sync(code, files=files)
    assert (result.status, result.stdout) == ("ok", "42\n"), result.stderr


def test_bad_file_names_and_workdirs_are_refused(tmp_path):
    for name in ("../escape.py", "/etc/passwd", "main.py", ""):
        with pytest.raises(ValueError):
            run_python_sync("pass", files={name: "x"})
    package_root = Path(sandbox.__file__).parents[2]  # the checkout or site-packages
    for workdir in (Path("/usr"), Path("/tmp"), Path("/"), package_root, Path(sys.prefix)):
        with pytest.raises(ValueError):
            run_shell_sync("true", workdir=workdir)
    with pytest.raises(NotADirectoryError):
        run_shell_sync("true", workdir=tmp_path / "missing")
    with pytest.raises(ValueError):
        SandboxLimits(wall_timeout_s=0)


def test_numpy_is_importable():
    result = run_python_sync("import numpy as np\nprint(int(np.arange(4).sum()))")
    assert (result.status, result.stdout) == ("ok", "6\n"), result.stderr


@pytest.mark.asyncio
async def test_concurrent_runs_and_cancellation(monkeypatch):
    # Every launcher this loop starts is recorded, to wait below until the cancelled one has
    # been reaped and its transport closed (the loop must see the exit, or the transport is
    # left open and warns when collected later).
    loop = asyncio.get_running_loop()
    transports: list[asyncio.SubprocessTransport] = []
    subprocess_exec = loop.subprocess_exec

    async def recording(*args, **kwargs):
        transport, protocol = await subprocess_exec(*args, **kwargs)
        transports.append(transport)
        return transport, protocol

    monkeypatch.setattr(loop, "subprocess_exec", recording)
    results = await asyncio.gather(*(sandbox.run_python(f"print({i} * 2)") for i in range(4)))
    assert [r.stdout for r in results] == ["0\n", "2\n", "4\n", "6\n"]
    marker = f"876.{uuid.uuid4().int % 10**6}"
    code = f"import subprocess\nsubprocess.run(['sleep', '{marker}'])"
    # The wall clock (120 s) outlasts every wait here: only the cancellation can end the run.
    limits = SandboxLimits(wall_timeout_s=120.0, cpu_seconds=5)
    task = asyncio.create_task(sandbox.run_python(code, limits=limits))
    await wait_until_running(marker)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + DEADLINE_S  # SIGKILL follows the SIGTERM on this loop
    while processes_mentioning(marker) or not all(t.is_closing() for t in transports):
        assert time.monotonic() < deadline, (processes_mentioning(marker), transports)
        await asyncio.sleep(0.05)
    assert len(transports) == 5
