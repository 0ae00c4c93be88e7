"""Cache locations, free ports and waiting for a server to answer."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from pytest_srbench.core.errors import UnavailableError


class RealPartError(UnavailableError):
    """A real component is missing, failed to build or did not start."""


def cache_root() -> Path:
    """``$SRBENCH_CACHE``, else ``~/.cache/pytest-srbench``: builds are kept here and reused."""
    configured = os.environ.get("SRBENCH_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "pytest-srbench"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


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
                f"the server exited with status {process.returncode} before {url} answered"
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
