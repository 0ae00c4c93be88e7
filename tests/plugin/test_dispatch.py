"""The run's start in a session (``plugin/runner.py``)."""

from __future__ import annotations

import json

from pytest_srbench.app.heap import RUN_THRESHOLDS

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


WATCH_COLLECTOR = """
import gc
import json
from pathlib import Path

import pytest

seen = {"before": gc.get_threshold()}


@pytest.mark.srbench("mmlu-pro")
def test_mmlu(srbench_case, srbench_target):
    seen.setdefault("in a body", gc.get_threshold())
    return srbench_target.ask_sync(srbench_case.messages).final_text


def test_a_unit_test_in_the_same_loop():
    seen["in a unit test"] = gc.get_threshold()


def pytest_unconfigure(config):
    seen["after"] = gc.get_threshold()
    Path("collector.json").write_text(json.dumps(seen))
"""


def test_the_collectors_thresholds_are_raised_while_cells_run_and_put_back(pytester):
    """``app/heap.py::fewer_collections`` around the dispatch: raised for bodies and the
    tests in the same loop, CPython's defaults again once the run has ended."""
    pytester.makepyfile(test_app=WATCH_COLLECTOR)
    pytester.makeconftest("from test_app import pytest_unconfigure  # noqa: F401\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--srbench-profile=smoke",
        "--srbench-limit=2", "test_app.py",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    seen = {
        k: tuple(v) for k, v in json.loads((pytester.path / "collector.json").read_text()).items()
    }
    before = seen["before"]  # CPython's defaults: (700, 10, 10) on 3.11 and 3.12
    raised = tuple(max(mine, theirs) for mine, theirs in zip(RUN_THRESHOLDS, before, strict=True))
    assert raised != before
    assert seen == {"before": before, "in a body": raised, "in a unit test": raised,
                    "after": before}  # fmt: skip
