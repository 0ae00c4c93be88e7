"""Making a folder read-only for a test's subprocess, even when the tests run as root.

Root ignores file permissions; in a fresh user namespace without a uid mapping
(``unshare -U``, Linux) it does not. Tests that need a read-only store run their subprocess
through ``unprivileged`` and check first that a write really fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest


def unprivileged(command: list[str]) -> list[str]:
    """``command`` as a process that file permissions bind (skips when that is impossible)."""
    if os.geteuid() != 0:
        return command
    if shutil.which("unshare") is None:
        pytest.skip("running as root without unshare: file permissions cannot be enforced")
    if subprocess.run(["unshare", "-U", "true"], capture_output=True).returncode != 0:
        pytest.skip("running as root and user namespaces are unavailable")
    return ["unshare", "-U", *command]


def make_read_only(path: Path) -> None:
    """Every file and folder under ``path`` read-only; asserts a write now fails."""
    for folder, _, files in os.walk(path):
        for name in files:
            os.chmod(Path(folder) / name, 0o444)
        os.chmod(folder, 0o555)
    probe = subprocess.run(unprivileged(["touch", str(path / "probe")]), capture_output=True)
    assert probe.returncode != 0, f"{path} must really be read-only for this test"


def make_writable(path: Path) -> None:
    for folder, _, files in os.walk(path):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(Path(folder) / name, 0o644)
