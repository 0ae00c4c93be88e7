"""Running the ``srbench`` command in a subprocess, for the CLI tests."""

from __future__ import annotations

import subprocess
import sys


def srbench(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "pytest_srbench", *args], cwd=cwd, capture_output=True, text=True
    )
