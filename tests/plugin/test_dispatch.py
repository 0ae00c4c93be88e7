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


WATCH_AHEAD = """
import json
from pathlib import Path

from pytest_srbench.app.report_ahead import ReportAhead

_take = ReportAhead.take


def take(self, manifest, correction):
    started = _take(self, manifest, correction)
    fed = self.fed if started is not None else None
    Path("ahead.json").write_text(json.dumps({"fed": fed, "run_id": self.run_id}))
    return started


ReportAhead.take = take
"""


def test_the_report_begun_while_the_last_cells_run_is_the_report_read_at_once(pytester):
    """The session feeds ended cells to the report while it waits for the next ones; the
    report it writes is the one built afterwards from the store alone."""
    from pytest_srbench.app.reports import report_from_store
    from pytest_srbench.render.json_report import report_json
    from pytest_srbench.store import open_store

    pytester.makeconftest(WATCH_AHEAD)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--srbench-profile=smoke",
        "--srbench-store=store", "--srbench-json=report.json",
        "--srbench-concurrency=4",  # the session waits for most cells: the report is fed then
    )  # fmt: skip
    assert result.ret in (0, 1), result.stdout.str()[-2000:]
    ahead = json.loads((pytester.path / "ahead.json").read_text())
    written = json.loads((pytester.path / "report.json").read_text())
    assert ahead["fed"] is not None
    assert 0 < ahead["fed"] <= written["summary"]["planned_cells"]
    store = open_store(pytester.path / "store")
    rebuilt = json.loads(report_json(report_from_store(store, ahead["run_id"], saved=False)))
    assert written == rebuilt
