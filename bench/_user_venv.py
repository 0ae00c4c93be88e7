"""The interpreter a benchmark's timed commands run under: a throwaway virtual environment
(``.cache/bench-user``) with this package installed as a user installs it — its declared
dependencies, pinned by ``constraints/test.txt``, and nothing from the ``dev`` extra.

The development environment also holds pytest plugins a user does not have (schemathesis,
hypothesis, pytest-asyncio, anyio): pytest loads every installed plugin at start-up, which
costs about 1.8 s per command here and is no part of pytest-srbench."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".cache" / "bench-user"


def user_python(*packages: str) -> str:
    """The user environment's interpreter, made on first use (editable install of this tree:
    a ``PYTHONPATH`` of another source tree still comes first); ``packages`` are installed into
    it too (pinned by the same constraints) when missing, as a user adds the SDK their code
    calls (``openai``, for the "as tests, openai SDK" row)."""
    python = VENV / "bin" / "python"
    stamp = VENV / "installed-from.txt"
    wanted = (ROOT / "constraints" / "test.txt").read_text() + (ROOT / "pyproject.toml").read_text()
    if not python.exists() or not stamp.exists() or stamp.read_text() != wanted:
        print(f"setting up the user environment in {VENV} (once) …", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
        pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        subprocess.run([*pip, "-c", str(ROOT / "constraints" / "test.txt"), "-e", str(ROOT)],
                       check=True)  # fmt: skip
        stamp.write_text(wanted)
    for package in packages:
        found = subprocess.run(
            [str(python), "-c", f"import {package}"], check=False, capture_output=True
        )
        if found.returncode != 0:
            print(f"installing {package} into {VENV} (once) …", file=sys.stderr, flush=True)
            subprocess.run([str(python), "-m", "pip", "install", "--quiet",
                            "--disable-pip-version-check", "-c", str(ROOT / "constraints" / "test.txt"),
                            package], check=True)  # fmt: skip
    return str(python)
