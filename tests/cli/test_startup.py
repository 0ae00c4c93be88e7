"""What the srbench command loads before it runs a command: its help and its argument errors
load neither pydantic nor the store, nor asyncio, orjson, pytest or any HTTP client
(bench/cli_start.py measures the time)."""

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
                           "pytest_srbench.store.sqlite", "aiohttp", "asyncio", "orjson",
                           "numpy", "jinja2", "httpx", "pytest", "pytest_srbench.app",
                           "pytest_srbench.engine", "pytest_srbench.store")
               if m in sys.modules)
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


def test_reading_a_store_loads_no_event_loop():
    """A command that only reads a store (``show``, ``recover-plan``) never loads the writer
    the engine commits through, nor asyncio with it."""
    probe = (
        "import sys\n"
        "from pytest_srbench.store import open_store, StoreError\n"
        "import pytest_srbench.app.recovery\n"
        "print('loaded:', ','.join(m for m in ('asyncio', 'pytest_srbench.store.writer')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-1] == "loaded:", done.stdout + done.stderr
