"""What the srbench command loads before it runs a command: its help and its argument errors
load neither pydantic nor the store (bench/cli_start.py measures the time)."""

import subprocess
import sys

import pytest

PROBE = """
import sys
from pytest_srbench.cli.main import main
try:
    main({args!r})
except SystemExit:
    pass
heavy = sorted(m for m in ("pydantic", "sqlite3", "pytest_srbench.core.models",
                           "pytest_srbench.store.sqlite", "aiohttp") if m in sys.modules)
print("loaded:", ",".join(heavy))
"""


@pytest.mark.parametrize(
    "args",
    [["--help"], ["datasets", "--help"], ["recover-plan", "--help"], ["compare", "--margin"]],
)
def test_help_and_argument_errors_load_nothing_heavy(args):
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True
    )
    assert done.stdout.strip().splitlines()[-1] == "loaded:", done.stdout + done.stderr
