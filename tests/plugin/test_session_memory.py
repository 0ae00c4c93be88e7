"""The session's heap: what lives to the end (the plan, the items, the report) is frozen out
of the cyclic garbage collector during the run and handed back when the session ends, so
pytest's collections at exit do not walk it (issue 21)."""

from __future__ import annotations

import gc
import json
import subprocess
import sys

from tests.plugin.helpers import project

QUIET = ("-p", "no:cacheprovider", "-p", "no:asyncio", "-p", "no:xdist", "--assert=plain")

RECORDER = """
import gc
import json
from pathlib import Path

import pytest

frozen = {"call": []}


def pytest_runtest_logreport(report):
    if report.when == "call":
        frozen["call"].append(gc.get_freeze_count())


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    frozen["young_after_finish"] = len(gc.get_objects())  # tracked, not frozen


def pytest_unconfigure(config):
    frozen["unconfigure"] = gc.get_freeze_count()
    Path("frozen.json").write_text(json.dumps(frozen))
"""


def test_the_run_heap_is_frozen_while_cells_run_and_thawed_when_the_session_ends(pytester, sim):
    project(pytester, sim, "always-right")
    pytester.makeconftest(RECORDER)
    before = gc.get_freeze_count()
    result = pytester.runpytest_inprocess(
        *QUIET, "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro", "--srbench-limit=3"
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    frozen = json.loads((pytester.path / "frozen.json").read_text())
    assert len(frozen["call"]) == 3
    # the items, the frozen plan and everything imported before the run: out of every pass
    assert min(frozen["call"]) > before + 1000
    # the report frozen too, for the exit: once the session has finished, what the collector
    # still walks is only what was made after (frozen objects that die leave the frozen count,
    # so comparing counts across the finish would be a race)
    # (measured: 2 young objects with the finish's freeze, 4,672 without it)
    assert frozen["young_after_finish"] < 500
    assert gc.get_freeze_count() == before  # handed back: an in-process caller collects it


def test_a_session_without_srbench_freezes_nothing(pytester):
    pytester.makeconftest(RECORDER)
    pytester.makepyfile(test_one="def test_one():\n    assert True\n")
    before = gc.get_freeze_count()
    result = pytester.runpytest_inprocess(*QUIET)
    assert result.ret == 0
    assert json.loads((pytester.path / "frozen.json").read_text())["call"] == [before]


EXIT_PROBE = """
import atexit, gc, sys
import pytest

# registered first, so it runs last: after the session's own exit handler
atexit.register(lambda: print("at exit, frozen:", gc.get_freeze_count() > 0, flush=True))
code = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--srbench-profile=smoke",
                    "--srbench-benchmark=mmlu-pro", "--srbench-limit=2"])
print("exit code", int(code), "after the session, frozen:", gc.get_freeze_count(), flush=True)
"""


def test_the_heap_is_frozen_again_for_the_interpreters_exit(pytester, sim):
    """The interpreter's last collection would walk the thawed heap (seconds at 20,000 cells):
    the session freezes it again when the interpreter exits."""
    project(pytester, sim, "always-right")
    done = subprocess.run(
        [sys.executable, "-c", EXIT_PROBE],
        cwd=pytester.path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    lines = done.stdout.strip().splitlines()
    assert lines[-2] == "exit code 0 after the session, frozen: 0", done.stdout + done.stderr
    assert lines[-1] == "at exit, frozen: True"


KEPT = """
import json
import sys
from pathlib import Path

import pytest


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    terminal = session.config.pluginmanager.get_plugin("terminalreporter")
    kept = [(r.nodeid, r.when) for r in terminal.stats.get("", [])]
    calls = [[r.nodeid, type(r).__name__, name] for name, reports in terminal.stats.items()
             if name for r in reports if getattr(r, "when", None) == "call"]
    from _pytest.tmpdir import tmppath_result_key
    stashed = [item.nodeid for item in session.items if tmppath_result_key in item.stash]
    cells = [item for item in session.items if item.get_closest_marker("srbench")]
    held = {
        "locations": sum("location" in item.__dict__ for item in cells[1:-1]),
        "grown_stashes": sum(
            sys.getsizeof(item.stash._storage) > sys.getsizeof({}) or item._store is not item.stash
            for item in cells[1:-1]
        ),
        "engine_entries": len(session.config.pluginmanager.get_plugin("srbench-dispatcher").engine.slots),
        "taken_outcomes": len(session.config.pluginmanager.get_plugin("srbench-dispatcher").taken_outcomes),
        "added_attributes": sorted(
            {name for item in cells for name in vars(item)}
            - {name for item in session.items if item not in cells for name in vars(item)}
            - {"callspec"}
        ),
        "cells": len(cells),
        "location": list(cells[0].location),
    }
    Path("kept.json").write_text(
        json.dumps({"kept": kept, "calls": calls, "stashed": stashed, "held": held})
    )
"""

PLAIN = """
import pytest


@pytest.fixture
def noisy():
    yield
    print("torn down noisily")


def test_plain(noisy):
    pass
"""


def test_a_cells_passed_reports_are_not_kept_to_the_end(pytester, sim):
    """The terminal keeps each test's reports to the end; a benchmark cell's set-up and
    tear-down reports say nothing and are let go once logged, its call report is kept as a
    ``CountedCell`` (counted in the last line), while an ordinary test's stay (its tear-down
    printed something, which ``-rA`` still shows)."""
    project(pytester, sim, "always-right")
    pytester.makeconftest(KEPT)
    pytester.makepyfile(test_plain=PLAIN)
    result = pytester.runpytest_inprocess(
        *QUIET, "-rA", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
        "--srbench-limit=3", "test_plain.py", "."
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    found = json.loads((pytester.path / "kept.json").read_text())
    assert len(found["calls"]) == 4, found  # three cells and the plain test
    kinds = sorted((kind, category) for _, kind, category in found["calls"])
    assert kinds == [("CountedCell", "correct")] * 3 + [("TestReport", "passed")], found
    assert found["stashed"] == ["test_plain.py::test_plain"], found  # cells drop tmp_path's record
    # nor does a cell item keep its location, a grown stash (those that took the lean protocol:
    # the first and last take pytest's, for its set-up stack) or its engine entry to the end
    held = found["held"]
    path, _, domain = held["location"]  # made again when asked
    assert path.endswith("srbench_suites.py") and domain.startswith("suite[mmlu-pro/"), held
    assert (held["cells"], held["locations"], held["grown_stashes"], held["engine_entries"]) == (
        3,
        0,
        0,
        0,
    ), held
    # nor an attribute pytest does not give a test item (each grows every item's dict), nor
    # an outcome its call report already carries
    assert (held["added_attributes"], held["taken_outcomes"]) == ([], 0), held
    result.stdout.fnmatch_lines(["*= 1 passed, 3 correct in *"])
    assert sorted(found["kept"]) == [
        ["test_plain.py::test_plain", "setup"],
        ["test_plain.py::test_plain", "teardown"],
    ]
    result.stdout.fnmatch_lines(["*torn down noisily*"])


SUMMARY_READER = """
import json
from pathlib import Path


def pytest_terminal_summary(terminalreporter):
    # what other plugins do with the reports the terminal kept: read and add attributes
    seen = []
    for category, reports in terminalreporter.stats.items():
        for report in reports:
            vars(report).get("anything")
            report.__dict__.setdefault("noted", True)
            report.user_note = "kept"
            seen.append([category, report.nodeid, report.when, report.passed])
    Path("seen.json").write_text(json.dumps(seen))
"""


def test_other_plugins_read_the_reports_the_terminal_kept(pytester, sim, monkeypatch):
    """A cell's call report is kept as a ``CountedCell``; plugins that read every kept report
    at the summary (hypothesis's reads each one's ``__dict__``) get an ordinary object. Run
    with hypothesis's own pytest plugin loaded, as in a project that has it installed."""
    import hypothesis  # noqa: F401 - the development extra's; its pytest plugin is the case

    project(pytester, sim, "always-right")
    pytester.makeconftest(SUMMARY_READER)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:schemathesis -p no:anyio")
    result = pytester.runpytest_subprocess(
        *QUIET, "-p", "hypothesispytest", "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro", "--srbench-limit=3",
    )  # fmt: skip
    output = result.stdout.str() + result.stderr.str()
    assert result.ret == 0 and "Traceback" not in output, output[-3000:]
    result.stdout.fnmatch_lines(["plugins: *hypothesis-*"])  # its plugin was loaded
    seen = json.loads((pytester.path / "seen.json").read_text())
    cells = [entry for entry in seen if entry[0] == "correct"]
    assert len(cells) == 3 and all(entry[2:] == ["call", True] for entry in cells), seen
    result.stdout.fnmatch_lines(["*= 3 correct in *"])
