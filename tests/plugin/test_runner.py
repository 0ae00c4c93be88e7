"""The run's start in a session (``plugin/runner.py``)."""

from __future__ import annotations

import json

WATCH_WAIT = """
import json
import sys
from pathlib import Path

from pytest_srbench.simulator.process import SimulatorLaunch

_wait = SimulatorLaunch.wait


def wait(self):
    loaded = "pytest_srbench.transport.aiohttp_transport" in sys.modules
    Path("waited.json").write_text(json.dumps({"transport_loaded": loaded}))
    return _wait(self)


SimulatorLaunch.wait = wait
"""


def test_the_http_client_loads_before_the_run_waits_for_the_simulator(pytester):
    """The simulator starts with the session; loading the HTTP client (about 0.1 s) is done
    before its address is first waited for, so that the two overlap."""
    pytester.makeconftest(WATCH_WAIT)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro", "--srbench-limit=2",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert json.loads((pytester.path / "waited.json").read_text()) == {"transport_loaded": True}
