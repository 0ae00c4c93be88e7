"""Starting and stopping the fork server of tests/zygote.py (one per test worker)."""

from __future__ import annotations

import atexit
import os
import select
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ZYGOTE = str(Path(__file__).with_name("zygote.py"))
_UNIX_PATH_LIMIT = 100  # sockaddr_un holds 108 bytes


@dataclass
class ZygoteServer:
    process: subprocess.Popen[bytes]
    socket_path: str
    log_path: Path

    @property
    def command(self) -> tuple[str, ...]:
        """The command prefix that stands for ``python -m pytest``."""
        return (sys.executable, ZYGOTE, "run", self.socket_path)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(Path(self.socket_path).parent, ignore_errors=True)


_server: ZygoteServer | None = None


def new_session_command() -> tuple[str, ...]:
    """What a test runs for ``python -m pytest``: this process's fork server, started on first
    use and stopped at exit; with ``SRBENCH_TEST_ZYGOTE=0``, a fresh interpreter every time.
    For a test that needs the session's own pid (it kills it, or looks for it in the store),
    start ``sys.executable -m pytest`` itself."""
    global _server
    if os.environ.get("SRBENCH_TEST_ZYGOTE", "1") == "0":
        return (sys.executable, "-mpytest")
    if _server is None or _server.process.poll() is not None:
        folder = tempfile.mkdtemp(prefix="srz-")
        if len(folder) > _UNIX_PATH_LIMIT - len("/zygote.sock"):  # a long TMPDIR
            os.rmdir(folder)
            folder = tempfile.mkdtemp(prefix="srz-", dir="/tmp")
        _server = start_zygote(Path(folder))
        atexit.register(_server.stop)
    return _server.command


def start_zygote(folder: Path, timeout_s: float = 60.0) -> ZygoteServer:
    """Start the server with its socket and log in ``folder`` (removed at stop); wait until it
    has imported everything and listens."""
    socket_path = str(folder / "zygote.sock")
    if len(socket_path) > _UNIX_PATH_LIMIT:
        raise ValueError(f"the zygote's socket path is too long for AF_UNIX: {socket_path}")
    log_path = folder / "zygote.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [sys.executable, ZYGOTE, "serve", socket_path],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=log,
        )
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], timeout_s)
    line = process.stdout.readline() if ready else b""
    if line.strip() != b"ready":
        process.kill()
        process.wait()
        raise RuntimeError(f"the zygote did not start: {log_path.read_text()[-2000:]}")
    return ZygoteServer(process, socket_path, log_path)
