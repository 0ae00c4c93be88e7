"""Benchmark tests under pytest-asyncio (strict and auto mode) and anyio's plugin, beside the
project's own async tests: a body without async fixtures runs on the engine's loop, many at
once; a body whose async fixtures live on its framework's loop runs there, at its turn, and the
report says which fixtures held the bodies back."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

LOOP_BOUND = """
import asyncio

import pytest


class LoopBound:
    # like an aiohttp session: usable only on the loop that made it
    def __init__(self):
        self.loop = asyncio.get_running_loop()

    async def check(self):
        assert asyncio.get_running_loop() is self.loop, "attached to a different loop"
        return True
"""

UNIT = """
import asyncio


def test_sync_unit():
    assert 1 + 1 == 2


async def test_async_unit():
    await asyncio.sleep(0)
"""

BODY = """
import pytest


@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""

BODY_WITH_CLIENT = """
import pytest


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target, client):
    await client.check()
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""


@pytest.fixture(autouse=True)
def async_plugins(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    """pytest-asyncio and anyio's plugin load in these sessions, as in a project that has them
    (the suite's other sessions leave the development tools' plugins out)."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:schemathesis -p no:hypothesispytest")


def run(pytester: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:xdist", "--srbench-profile=smoke",
        "--srbench-target=sim-large", "--srbench-json=report.json", *args,
    )  # fmt: skip
    report = pytester.path / "report.json"
    return result, json.loads(report.read_text()) if report.exists() else {}


def graded(report: dict) -> dict[str, int]:
    return {t["id"]: t["completed"] for t in report["summary"]["targets"]}


def waited(report: dict) -> dict:
    return report["provenance"]["runner"]["effective_concurrency"]


def test_auto_mode_runs_async_bodies_on_the_engine_and_the_projects_async_tests(pytester):
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makepyfile(test_unit=UNIT, test_bench=BODY)
    result, report = run(pytester)
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=2)  # the project's own tests; the 14 cells are graded
    assert graded(report) == {"sim-large": 14}
    assert waited(report)["cells_at_their_turn"] == 0  # every body started ahead
    # ... and ran at once: pytest-asyncio adds its loop runner to the fixture names all the
    # test's items share when the first item is set up; the cells after it must not wait
    # for it (they did, one at a time, with nothing said about why)
    assert waited(report)["peak_in_flight"] >= 8
    assert "effective concurrency" not in result.stdout.str()


def test_strict_mode_runs_unmarked_and_asyncio_marked_bodies(pytester):
    pytester.makeini(
        "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"
    )
    pytester.makeconftest(
        LOOP_BOUND
        + """
import pytest_asyncio


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def client():
    yield LoopBound()
"""
    )
    pytester.makepyfile(
        test_bench=BODY
        + BODY_WITH_CLIENT.replace(
            '@pytest.mark.srbench("gpqa-diamond")',
            '@pytest.mark.asyncio(loop_scope="session")\n@pytest.mark.srbench("gpqa-diamond")',
        )
    )
    result, report = run(pytester)
    assert result.ret == 0, result.stdout.str()[-3000:]
    rows = {(c["benchmark"], c["status"]) for c in report["cells"]}
    assert rows == {("mmlu-pro", "completed"), ("gpqa-diamond", "completed")}
    assert waited(report)["waited_for"] == {
        "client": {"scope": "async, session scope", "autouse": False, "cells": 4}
    }


def test_a_body_with_a_session_async_fixture_runs_on_that_fixtures_loop(pytester):
    """pytest-asyncio auto mode with the session loop scope: the body sees its fixture's loop
    (no "attached to a different loop"), and the report names the fixture that kept the
    bodies at their turn."""
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = session\n"
        "asyncio_default_test_loop_scope = session\n"
    )
    pytester.makeconftest(
        LOOP_BOUND
        + """

@pytest.fixture(scope="session")
async def client():
    yield LoopBound()
"""
    )
    pytester.makepyfile(test_unit=UNIT, test_bench=BODY_WITH_CLIENT)
    result, report = run(pytester)
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=2)
    assert graded(report) == {"sim-large": 4}
    assert waited(report)["cells_at_their_turn"] == 4
    result.stdout.fnmatch_lines(
        ["effective concurrency * of 16: 4 of 4 cells waited for their test's own set-up — "
         "fixtures 'client' (async, session scope, 4 cells)"]
    )  # fmt: skip


def test_anyio_runs_its_marked_bodies_and_the_projects_tests(pytester):
    pytester.makeconftest(
        LOOP_BOUND
        + """

@pytest.fixture(scope="session")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="session")
async def client(anyio_backend):
    yield LoopBound()
"""
    )
    pytester.makepyfile(
        test_bench="import pytest\n\npytestmark = pytest.mark.anyio\n"
        + BODY.replace("import pytest\n", "")
        + BODY_WITH_CLIENT.replace("import pytest\n", "")
        + "\n\nasync def test_plain_anyio(client):\n    assert await client.check()\n"
    )
    result, report = run(pytester, "-p", "no:asyncio")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.assert_outcomes(passed=1)
    assert graded(report) == {"sim-large": 18}
    assert waited(report)["waited_for"]["client"]["cells"] == 4


def test_an_autouse_function_fixture_is_named_as_what_held_the_bodies_back(pytester):
    """A function-scoped fixture wraps each body, so those bodies run one at a time: the
    terminal, the JSON report and the HTML page say so and name the fixture."""
    pytester.makeconftest(
        """
import pytest


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch):
    monkeypatch.setenv("APP_MODE", "test")
"""
    )
    pytester.makepyfile(test_bench=BODY)
    result, report = run(pytester, "-p", "no:asyncio", "--srbench-html=report.html")
    assert result.ret == 0, result.stdout.str()[-3000:]
    effective = waited(report)
    assert effective["peak_in_flight"] == 1 and effective["configured"] == 16
    assert effective["waited_for"]["fresh_env"] == {
        "scope": "function scope",
        "autouse": True,
        "cells": 14,
    }
    # (monkeypatch: the test does not ask for it either; the autouse fixture does)
    assert effective["waited_for"]["monkeypatch"]["autouse"] is True
    result.stdout.fnmatch_lines(
        ["effective concurrency 1 of 16: 14 of 14 cells waited for their test's own set-up — "
         "fixtures 'fresh_env' (function scope, autouse, 14 cells)*",
         "*(an autouse fixture the benchmark tests do not need: override it for them with a "
         "session-scoped fixture of the same name in their module or a conftest.py beside them)"]
    )  # fmt: skip
    page = (pytester.path / "report.html").read_text()
    assert 'id="effective-concurrency"' in page and "<code>fresh_env</code>" in page
    assert "An autouse fixture the benchmark tests do not need can be overridden" in page

    # the remedy it names: a session-scoped fixture of that name beside the benchmark test
    pytester.makepyfile(
        test_bench=BODY
        + """

@pytest.fixture(scope="session")
def fresh_env():
    \"\"\"The benchmark needs no per-test environment.\"\"\"
"""
    )
    result, report = run(pytester, "-p", "no:asyncio")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert waited(report)["cells_at_their_turn"] == 0 and waited(report)["peak_in_flight"] >= 8
    assert "effective concurrency" not in result.stdout.str()


def test_a_fixture_a_plugin_adds_at_set_up_is_named_as_what_held_the_bodies_back(pytester):
    """A plugin that adds a fixture to an item's names at its set-up (as pytest-asyncio adds
    its loop runner) adds it to the list every cell of the test shares: the cells wait for
    their own set-up (the first one too: its set-up added the name before its body ran), and
    the report names the fixture instead of saying nothing."""
    pytester.makeconftest(
        """
import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if "tmp_path" not in item.fixturenames:
        item.fixturenames.append("tmp_path")
"""
    )
    pytester.makepyfile(test_bench=BODY)
    result, report = run(pytester, "-p", "no:asyncio")
    assert result.ret == 0, result.stdout.str()[-3000:]
    effective = waited(report)
    assert effective["waited_for"] == {
        "tmp_path": {"scope": "added at the item's set-up", "autouse": False, "cells": 14}
    }
    result.stdout.fnmatch_lines(
        ["effective concurrency 1 of 16: 14 of 14 cells waited for their test's own set-up — "
         "fixtures 'tmp_path' (added at the item's set-up, 14 cells)*"]
    )  # fmt: skip
