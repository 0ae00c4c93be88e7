"""The README's first command runs pytest in the checkout with the package alone installed
(on ``examples/sr_bench``, a project of its own): nothing in the checkout's pytest
configuration may need the development extras."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import DEV_ONLY_PLUGINS

REPO = Path(__file__).resolve().parents[1]


def test_a_run_in_the_checkout_needs_no_development_plugin(tmp_path):
    env = {**os.environ, "PYTEST_ADDOPTS": DEV_ONLY_PLUGINS}  # pytest-asyncio & co. absent
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--srbench-profile=smoke",
         "--srbench-benchmark=scicode", f"--srbench-store={tmp_path / 'store'}", "examples/sr_bench"],
        cwd=REPO, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "INTERNALERROR" not in done.stdout and "srbench report" in done.stdout
