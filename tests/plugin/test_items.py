"""Cells as items: the built-in suites' cells are a marked test's Functions, the lean
protocol and the plugins that need the full one, pytest-timeout's exemption."""

from __future__ import annotations

import json
import types

import pytest

from pytest_srbench.plugin.items import plugins_in_skipped_phases

CHECKER = """
import json
from pathlib import Path

import pytest


def pytest_collection_finish(session):
    cells = [item for item in session.items if item.get_closest_marker("srbench")]
    Path("items.json").write_text(json.dumps({
        "cells": len(cells),
        "functions": sum(type(item) is pytest.Function for item in cells),
        "ids": sum(item.nodeid.startswith("srbench::suite[mmlu-pro/") for item in cells),
        "keywords": sum("srbench" in item.keywords and item.callspec.params["srbench_cell"][1]
                        in item.nodeid for item in cells),
    }))
"""


def test_the_suites_cells_are_the_items_of_a_marked_test_like_a_projects(pytester):
    """One item class, one path: the built-in suites' cells are pytest Functions of one
    marked test, parametrized by their cells, named after case and target."""
    pytester.makeconftest(CHECKER)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--collect-only", "-q", "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro", "--srbench-target=sim-large",
        "--srbench-target=sim-small",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    seen = json.loads((pytester.path / "items.json").read_text())
    assert seen == {"cells": 28, "functions": 28, "ids": 28, "keywords": 28}


PHASE_PLUGIN = """
import json
from pathlib import Path

import pytest


class PhaseRecorder:
    # as pytest-json-report does: each phase's hook makes the entry its report reads
    def __init__(self):
        self.seen = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item):
        item._phases = {"setup": {}}
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        item._phases["call"] = {}
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item):
        item._phases["teardown"] = {}
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = (yield).get_result()
        item._phases[call.when]["outcome"] = report.outcome
        self.seen[item.nodeid] = sorted(item._phases)


def pytest_configure(config):
    if config.getoption("--record-phases", False):
        config.pluginmanager.register(PhaseRecorder(), "phase-recorder")


def pytest_addoption(parser):
    parser.addoption("--record-phases", action="store_true")


def pytest_sessionfinish(session):
    recorder = session.config.pluginmanager.get_plugin("phase-recorder")
    Path("phases.json").write_text(json.dumps({
        "lean": session.config.pluginmanager.get_plugin("srbench-dispatcher").lean,
        "seen": recorder.seen if recorder else None,
    }))
"""


def test_a_plugin_that_hooks_into_each_phase_gets_the_full_protocol(pytester):
    """Cells skip pytest's per-phase hooks (the lean protocol) unless another plugin hooks
    into them: one whose report hook reads what its set-up hook stored (pytest-json-report
    does) gets every phase, and the session ends cleanly."""
    pytester.makeconftest(PHASE_PLUGIN)
    args = ("-p", "no:cacheprovider", "-p", "no:xdist", "--srbench-profile=smoke",
            "--srbench-benchmark=mmlu-pro", "--srbench-limit=2")  # fmt: skip
    lean = pytester.runpytest_subprocess(*args)
    assert lean.ret == 0, lean.stdout.str()[-2000:]
    assert json.loads((pytester.path / "phases.json").read_text()) == {"lean": True, "seen": None}
    full = pytester.runpytest_subprocess(*args, "--record-phases")
    output = full.stdout.str() + full.stderr.str()
    assert full.ret == 0 and "INTERNALERROR" not in output, output[-3000:]
    found = json.loads((pytester.path / "phases.json").read_text())
    assert found["lean"] is False
    cells = {nodeid: phases for nodeid, phases in found["seen"].items() if "mmlu-pro/" in nodeid}
    assert len(cells) == 4 and all(p == ["call", "setup", "teardown"] for p in cells.values())


def test_the_full_protocol_on_request(pytester):
    pytester.makeconftest(PHASE_PLUGIN)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro", "--srbench-limit=1", "--srbench-full-protocol",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert json.loads((pytester.path / "phases.json").read_text())["lean"] is False


TIMEOUT_PLUGIN = """
import json
from pathlib import Path


class Timeouts:
    # stands in for pytest-timeout (registered as "timeout") where it is not installed
    pass


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("timeout"):
        config.addinivalue_line("markers", "timeout(seconds): a per-test timeout")
        config.pluginmanager.register(Timeouts(), "timeout")


def pytest_collection_finish(session):
    seen = {}
    for item in session.items:
        mark = item.get_closest_marker("timeout")
        seen[item.nodeid] = list(mark.args) if mark else None
    Path("timeouts.json").write_text(json.dumps(seen))
"""


def test_a_cell_is_exempt_from_pytest_timeout(pytester):
    """pytest-timeout (a plugin registered as "timeout") times each test by its ``timeout``
    mark; a cell has its own deadlines and is marked ``timeout(0)`` (none), also under
    ``--strict-markers``, while an ordinary test beside it keeps the session's timeout."""
    pytester.makeconftest(TIMEOUT_PLUGIN)
    pytester.makepyfile(test_plain="def test_plain():\n    pass\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--strict-markers",
        "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro", "--srbench-limit=1",
        "test_plain.py", ".",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    seen = json.loads((pytester.path / "timeouts.json").read_text())
    cells = {nodeid: args for nodeid, args in seen.items() if nodeid.startswith("srbench::")}
    assert len(cells) == 2 and all(args == [0] for args in cells.values()), seen
    assert seen["test_plain.py::test_plain"] is None


def test_the_plugins_that_hook_into_a_skipped_phase_are_named_by_module():
    """A module (a conftest) or an object registered as a plugin hooks into a phase the lean
    protocol skips; pytest's own and the plugins known to do nothing there are left out."""
    manager = pytest.PytestPluginManager()
    assert plugins_in_skipped_phases(manager) == []
    conftest = types.ModuleType("conftest")
    conftest.pytest_runtest_setup = lambda item: None  # type: ignore[attr-defined]
    manager.register(conftest, "conftest")
    seeding = types.ModuleType("pytest_randomly")
    seeding.pytest_runtest_call = lambda item: None  # type: ignore[attr-defined]
    manager.register(seeding, "randomly")

    class Reporter:
        def pytest_runtest_teardown(self, item):
            pass

    manager.register(Reporter(), "reporter")
    assert plugins_in_skipped_phases(manager) == ["conftest", __name__]


LOCATION_CHECKER = """
import json
from pathlib import Path

expected, reported = {}, {}


def pytest_collection_finish(session):
    for item in session.items:  # pytest's own location, made afresh, then forgotten
        expected[item.nodeid] = list(item.location)
        item.__dict__.pop("location", None)


def pytest_runtest_logreport(report):
    if report.when == "call":
        reported[report.nodeid] = list(report.location)


def pytest_sessionfinish(session):
    Path("locations.json").write_text(json.dumps({"expected": expected, "reported": reported}))
"""

LOCATED_TESTS = """
import pytest


@pytest.mark.srbench("mmlu-pro")
async def test_quiz(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text


class TestQuiz:
    @pytest.mark.srbench("gpqa-diamond")
    def test_in_a_class(self, srbench_case):
        return "A"
"""


def test_a_cells_reported_location_is_pytests(pytester):
    """Cells find their function's file and line once per function: every report's location
    is the one pytest makes for the item (module functions and methods alike)."""
    pytester.makeconftest(LOCATION_CHECKER)
    pytester.makepyfile(test_quiz=LOCATED_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-target=sim-small",
        "--srbench-limit=3",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    seen = json.loads((pytester.path / "locations.json").read_text())
    assert len(seen["reported"]) == 6
    assert seen["reported"] == {nodeid: seen["expected"][nodeid] for nodeid in seen["reported"]}
    lines = {tuple(location[:2]) for location in seen["reported"].values()}
    assert lines == {("test_quiz.py", 3), ("test_quiz.py", 9)}  # (pytest counts from 0)


COMPACTION_CHECKER = """
import json
from pathlib import Path

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    cells = [item for item in items if item.get_closest_marker("srbench")]
    Path("as-collected.json").write_text(json.dumps(sum(bool(item._request) for item in cells)))


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    cells = [item for item in session.items if item.get_closest_marker("srbench")]
    Path("compacted.json").write_text(json.dumps({
        "cells": len(cells),
        "requests": sum(bool(item._request) for item in cells),
        "funcargs": sum(item.funcargs is not None for item in cells),
        "scopes": len({id(item.callspec._arg2scope) for item in cells}),
        "keyword_sets": len({id(item.extra_keyword_matches) for item in cells}),
    }))
"""

FIXTURE_TESTS = """
import pytest


@pytest.fixture
def house_style():
    return "Answer with the letter only."


@pytest.mark.srbench("mmlu-pro")
async def test_styled(srbench_case, srbench_target, house_style):
    messages = [{"role": "system", "content": house_style}, *srbench_case.messages]
    return (await srbench_target.ask(messages)).final_text


def test_ordinary(request):
    assert request.node.funcargs["request"] is request
"""


def test_cell_items_let_go_of_what_pytest_makes_again(pytester):
    """As soon as it is collected (before the session's hooks see the items together), a
    cell's item holds no fixture request (pytest makes it again when the item runs its own
    protocol: here every cell, for its function-scoped fixture) and shares what all cells of
    its function have alike; ordinary tests keep theirs."""
    pytester.makeconftest(COMPACTION_CHECKER)
    pytester.makepyfile(test_styled=FIXTURE_TESTS)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-target=sim-small",
        "--srbench-limit=4",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    seen = json.loads((pytester.path / "compacted.json").read_text())
    assert seen == {"cells": 4, "requests": 0, "funcargs": 0, "scopes": 1, "keyword_sets": 1}
    assert json.loads((pytester.path / "as-collected.json").read_text()) == 0
    outcomes = result.parseoutcomes()
    assert outcomes["passed"] == 1 and outcomes.get("correct", 0) + outcomes.get("wrong", 0) == 4
