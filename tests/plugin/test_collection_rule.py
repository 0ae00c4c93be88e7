"""Collection is pytest's: a srbench session collects what ``pytest`` would (paths, else
``testpaths``, with the project's conftest files, ``-k``, ``-m`` and node ids); marked tests
become cells beside the ordinary tests, and the shipped suites (``srbench::suite[…]``) join only
when the command line asked for srbench and no marked test was collected, when
``--srbench-benchmark`` names a benchmark no collected test answers, or as ``[tool.srbench]
run_suites`` says. A plain ``pytest`` skips marked tests with one line, unless ``[tool.srbench]``
sets a profile."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

UNIT = """
def test_unit():
    assert 1 + 1 == 2
"""

CONFTEST = """
import pytest


@pytest.fixture(autouse=True)
def around_each_test():
    yield
"""

BENCH = """
import pytest


@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""

BENCH_WITH_CLIENT = """
import pytest


@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_client):
    return await srbench_client.chat(srbench_case.messages)
"""

BENCH_PRINTING = """
import pytest


@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target):
    print("BODY-RAN", srbench_case.id)
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""

UNIT_ID = "tests/test_unit.py::test_unit"
MARKED = "tests/test_bench.py::test_mmlu["
SUITE = "srbench::suite["
SKIP_LINE = "run it with pytest --srbench-profile=smoke"
ALL_SHIPPED = {
    "arc-agi-2", "gpqa-diamond", "hle", "livecodebench", "mmlu-pro", "scicode",
    "simpleqa-verified", "tau3", "terminal-bench-2.1",
}  # fmt: skip

# a -v line: "<node id> WORD …" (one process), "[gw0] [ 3%] WORD … <node id>" (xdist)
_SINGLE = re.compile(r"^(?P<id>\S+::\S+) (?P<word>[A-Z]+)\b")
_WORKER = re.compile(r"^\[gw\d+\] \[\s*\d+%\] (?P<word>[A-Z]+)\b.* (?P<id>\S+::\S+)\s*$")


def user_project(
    pytester: pytest.Pytester,
    *,
    bench: str | None = BENCH,
    unit: str = UNIT,
    ini: str = "",
    srbench: str = "",
) -> None:
    """A project shaped like a user's: ``testpaths = ["tests"]``, a conftest with a
    function-scoped autouse fixture, an ordinary unit test and (unless ``bench`` is None) a
    test marked with a benchmark."""
    config = f'[tool.pytest.ini_options]\ntestpaths = ["tests"]\n{ini}'
    if srbench:
        config += f"\n[tool.srbench]\n{srbench}"
    pytester.makepyprojecttoml(config)
    tests = pytester.mkdir("tests")
    files = {"conftest.py": CONFTEST, "test_unit.py": unit}
    if bench is not None:
        files["test_bench.py"] = bench
    for name, body in files.items():
        (tests / name).write_text(textwrap.dedent(body))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def report(pytester: pytest.Pytester, name: str = "report.json") -> dict:
    return json.loads((pytester.path / name).read_text())


def verdicts(result: pytest.RunResult) -> dict[str, str]:
    """Node id -> the word ``-v`` printed for it (PASSED, SKIPPED, CORRECT, WRONG, …)."""
    found = {}
    for line in result.stdout.lines:
        match = _WORKER.match(line) or _SINGLE.match(line)
        if match is not None:
            found[match["id"]] = match["word"]
    return found


def marked_cells(found: dict[str, str]) -> dict[str, str]:
    return {node: word for node, word in found.items() if node.startswith(MARKED)}


def suite_items(found: dict[str, str]) -> dict[str, str]:
    return {node: word for node, word in found.items() if node.startswith(SUITE)}


def benchmarks_of(data: dict) -> set[str]:
    return {cell["benchmark"] for cell in data["cells"]}


def runs_in_store(store: Path) -> int:
    journal = store / "journal.sqlite3"
    if not journal.exists():
        return 0
    with sqlite3.connect(journal) as db:
        return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])


def output(result: pytest.RunResult) -> str:
    return result.stdout.str() + "\n" + result.stderr.str()


# -- when the shipped suites run -------------------------------------------------------------
def test_an_empty_folder_runs_the_shipped_suites_as_srbench_items(pytester):
    result = run(pytester, "--srbench-profile=smoke", "-v", "--srbench-json=report.json")
    assert result.ret == 0, output(result)[-3000:]
    data = report(pytester)
    assert data["summary"]["planned_cells"] == 72
    assert {t["id"]: t["total"] for t in data["summary"]["targets"]} == {
        "sim-large": 36,
        "sim-small": 36,
    }
    assert benchmarks_of(data) == ALL_SHIPPED
    found = verdicts(result)
    expected = {f"{SUITE}{c['case_id']}-{c['target_id']}]" for c in data["cells"]}
    assert set(found) == expected  # every item is a cell of the shipped suites' module
    assert f"{SUITE}mmlu-pro/smoke-biology-001-sim-large]" in found
    assert set(found.values()) <= {"CORRECT", "WRONG"}


def test_a_project_with_a_marked_test_runs_it_beside_its_unit_tests_and_no_suite(pytester):
    user_project(pytester)
    result = run(pytester, "--srbench-profile=smoke", "-v", "--srbench-json=report.json")
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    assert len(marked_cells(found)) == 28
    assert set(marked_cells(found).values()) <= {"CORRECT", "WRONG"}
    assert suite_items(found) == {} and "srbench::" not in result.stdout.str()
    data = report(pytester)
    assert benchmarks_of(data) == {"mmlu-pro"}
    assert data["summary"]["planned_cells"] == 28


def test_a_store_option_written_with_a_space_is_a_store_not_a_path(pytester):
    user_project(pytester)
    result = run(pytester, "--srbench-profile=smoke", "-v", "--srbench-store", ".mystore")
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    assert len(marked_cells(found)) == 28 and suite_items(found) == {}
    assert runs_in_store(pytester.path / ".mystore") == 1
    assert runs_in_store(pytester.path / ".srbench") == 0


def test_a_project_of_unit_tests_only_runs_them_and_the_shipped_suites(pytester):
    user_project(pytester, bench=None)
    result = run(pytester, "--srbench-profile=smoke", "-v", "--srbench-json=report.json")
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    assert len(suite_items(found)) == 72
    assert benchmarks_of(report(pytester)) == ALL_SHIPPED


def test_a_benchmark_no_marked_test_answers_runs_from_the_shipped_suites(pytester):
    user_project(pytester)
    result = run(
        pytester, "--srbench-benchmark", "gpqa-diamond", "-v", "-rs", "--srbench-json=report.json"
    )
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    suites = suite_items(found)
    assert len(suites) == 8 and all(node.startswith(f"{SUITE}gpqa-diamond/") for node in suites)
    mmlu = {n: w for n, w in found.items() if n.startswith("tests/test_bench.py::test_mmlu")}
    assert mmlu and set(mmlu.values()) == {"SKIPPED"}  # the marked test has no cell
    data = report(pytester)
    assert benchmarks_of(data) == {"gpqa-diamond"}
    assert data["summary"]["planned_cells"] == 8


def test_a_benchmark_a_marked_test_answers_runs_the_test_and_no_suite(pytester):
    user_project(pytester)
    result = run(pytester, "--srbench-benchmark", "mmlu-pro", "-v", "--srbench-json=report.json")
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    assert len(marked_cells(found)) == 28 and suite_items(found) == {}
    assert benchmarks_of(report(pytester)) == {"mmlu-pro"}


def test_an_explicit_path_without_marked_tests_brings_the_shipped_suites(pytester):
    user_project(pytester)
    result = run(pytester, "--srbench-profile=smoke", "--collect-only", "-q", "tests/test_unit.py")
    assert result.ret == 0, output(result)[-3000:]
    listed = [line for line in result.stdout.lines if "::" in line]
    assert UNIT_ID in listed
    assert not [line for line in listed if line.startswith("tests/test_bench.py")]
    assert len([line for line in listed if line.startswith(SUITE)]) == 72
    assert f"{SUITE}mmlu-pro/smoke-biology-001-sim-large]" in listed


# -- pytest's selection ----------------------------------------------------------------------
def test_a_node_id_of_one_cell_runs_exactly_that_cell(pytester):
    user_project(pytester)
    node = f"{MARKED}mmlu-pro/smoke-biology-001-sim-large]"
    result = run(pytester, "--srbench-profile=smoke", "-v", "--srbench-json=report.json", node)
    assert result.ret == 0, output(result)[-3000:]
    assert set(verdicts(result)) == {node}
    data = report(pytester)
    assert data["summary"]["planned_cells"] == 1
    assert [(c["case_id"], c["target_id"]) for c in data["cells"]] == [
        ("mmlu-pro/smoke-biology-001", "sim-large")
    ]


@pytest.mark.parametrize(
    ("selection", "named"),
    [(["-m", "not srbench"], "-m 'not srbench'"), (["-k", "test_unit"], "-k 'test_unit'")],
    ids=["m", "k"],
)
def test_deselecting_the_marked_test_runs_the_unit_tests_and_creates_no_run(
    pytester, selection, named
):
    user_project(pytester)
    result = run(pytester, "--srbench-profile=smoke", "-v", *selection)
    assert result.ret == 0, output(result)[-3000:]
    assert verdicts(result) == {UNIT_ID: "PASSED"}
    line = f"pytest-srbench: nothing to run — {named} deselected all 28 planned cells"
    assert result.stdout.str().count(line) == 1, output(result)[-3000:]
    assert "no run was created and no request was sent" in result.stdout.str()
    assert runs_in_store(pytester.path / ".srbench") == 0


# -- a plain pytest --------------------------------------------------------------------------
@pytest.mark.parametrize("bench", [BENCH, BENCH_WITH_CLIENT], ids=["case-target", "client"])
def test_a_plain_pytest_skips_a_marked_test_with_one_line(pytester, bench):
    user_project(pytester, bench=bench)
    result = run(pytester, "-v", "-rs")
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    assert found["tests/test_bench.py::test_mmlu"] == "SKIPPED"
    result.stdout.fnmatch_lines([f"SKIPPED [[]1[]] tests/test_bench.py:*: *{SKIP_LINE}*"])
    assert not (pytester.path / ".srbench").exists()  # nothing of srbench was started


def test_a_configured_profile_makes_a_plain_pytest_run_the_marked_test(pytester):
    user_project(pytester, srbench='profile = "smoke"\n')
    result = run(pytester, "-v")
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    assert len(marked_cells(found)) == 28 and suite_items(found) == {}
    result.stdout.fnmatch_lines(["*srbench report*"])


def test_a_configured_profile_never_brings_the_shipped_suites_on_its_own(pytester):
    user_project(pytester, srbench='profile = "smoke"\n')
    result = run(pytester, "-v", "tests/test_unit.py")
    assert result.ret == 0, output(result)[-3000:]
    assert verdicts(result) == {UNIT_ID: "PASSED"}
    assert "srbench::" not in result.stdout.str()
    assert "srbench report" not in result.stdout.str()


# -- [tool.srbench] run_suites ---------------------------------------------------------------
def test_run_suites_always_runs_the_shipped_suites_beside_the_marked_test(pytester):
    user_project(pytester, srbench='run_suites = "always"\n')
    result = run(pytester, "--srbench-profile=smoke", "-v", "--srbench-json=report.json")
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    assert len(marked_cells(found)) == 28
    suites = suite_items(found)
    assert any(node.startswith(f"{SUITE}gpqa-diamond/") for node in suites)
    assert benchmarks_of(report(pytester)) == ALL_SHIPPED


def test_run_suites_always_runs_the_marked_body_for_each_of_its_cells(pytester):
    user_project(pytester, bench=BENCH_PRINTING, srbench='run_suites = "always"\n')
    result = run(pytester, "--srbench-profile=smoke", "-v", "-s", "--srbench-json=report.json")
    assert result.ret == 0, output(result)[-3000:]
    assert result.stdout.str().count("BODY-RAN") == 28  # every marked cell ran its body
    data = report(pytester)
    assert data["summary"]["planned_cells"] == len(data["cells"]) == 72  # each cell once
    mmlu = [cell for cell in data["cells"] if cell["benchmark"] == "mmlu-pro"]
    assert len(mmlu) == 28  # the marked test's: the shipped mmlu-pro suite stays out


def test_run_suites_never_in_an_empty_folder_runs_nothing_and_creates_no_run(pytester):
    pytester.makepyprojecttoml('[tool.srbench]\nrun_suites = "never"\n')
    result = run(pytester, "--srbench-profile=smoke", "-v")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, output(result)[-3000:]
    assert verdicts(result) == {}
    assert "srbench report" not in result.stdout.str()
    assert runs_in_store(pytester.path / ".srbench") == 0
    listed = pytester.run(sys.executable, "-m", "pytest_srbench", "runs")
    assert listed.ret == 0, output(listed)
    assert "run-" not in listed.stdout.str()


# -- other plugins ---------------------------------------------------------------------------
ASYNC_UNIT = """
import asyncio


async def test_async_unit():
    await asyncio.sleep(0)
"""


def test_pytest_asyncio_auto_mode_runs_async_unit_tests_and_grades_async_cells(
    pytester, monkeypatch
):
    pytest.importorskip("pytest_asyncio")
    # the sessions the tests start run without the development plugins (tests/conftest.py):
    # this one loads pytest-asyncio, as a project that uses it does
    addopts = os.environ.get("PYTEST_ADDOPTS", "").replace("-p no:asyncio", "")
    monkeypatch.setenv("PYTEST_ADDOPTS", addopts)
    ini = 'asyncio_mode = "auto"\nasyncio_default_fixture_loop_scope = "function"\n'
    user_project(pytester, unit=ASYNC_UNIT, ini=ini)
    result = run(pytester, "--srbench-profile=smoke", "-v", "--srbench-json=report.json")
    assert result.ret == 0, output(result)[-3000:]
    result.stdout.fnmatch_lines(["plugins:*asyncio-*"])
    found = verdicts(result)
    assert found["tests/test_unit.py::test_async_unit"] == "PASSED"
    assert len(marked_cells(found)) == 28
    for target in report(pytester)["summary"]["targets"]:
        assert target["total"] == target["completed"] == 14 and target["failed"] == 0
    assert "attached to a different loop" not in output(result)
    assert "returned no answer" not in output(result)


def test_xdist_runs_the_unit_tests_and_the_marked_cells_and_no_suite(pytester):
    pytest.importorskip("xdist")
    user_project(pytester)
    result = run(pytester, "--srbench-profile=smoke", "-n", "2", "-v", "--srbench-json=report.json")
    assert result.ret == 0, output(result)[-3000:]
    found = verdicts(result)
    assert found[UNIT_ID] == "PASSED"
    assert len(marked_cells(found)) == 28 and suite_items(found) == {}
    data = report(pytester)
    assert benchmarks_of(data) == {"mmlu-pro"}
    assert data["provenance"]["runner"]["processes"] == 2
