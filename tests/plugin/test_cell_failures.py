"""A benchmark test reads like a test when it fails: a failed cell shows its body's own exception
and traceback (pytest's --tb styles, assertion rewriting), each cell's item shows the output its
own body wrote although the bodies ran at once, and JUnit XML carries each cell's outcome."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

pytestmark = pytest.mark.slow

# a benchmark of the user's own (graded by its own function), so that which cell is right,
# wrong or failed does not depend on a model
LETTERS = """
import asyncio
import logging
import sys

import pytest
import pytest_srbench

CASES = [{"id": x, "question": f"Say {x.upper()}", "answer": x.upper()} for x in "abcd"]
pytest_srbench.benchmark(
    "letters", cases=CASES, grade=lambda answer, case: answer == case["answer"], version="1"
)
"""

FAILING = (
    LETTERS
    + """

def lookup(table, key):
    return table[key]


@pytest.mark.srbench("letters")
async def test_letters(srbench_case):
    name = srbench_case.id.rpartition("/")[2]
    if name == "a":
        return lookup({}, "zzz")
    if name == "b":
        got = name.upper()
        assert got == "Z"
    return name.upper()
"""
)

# four bodies at once: each writes its marker, waits for the others to write theirs, then fails
CONCURRENT = (
    LETTERS
    + """

@pytest.mark.srbench("letters")
def test_letters(srbench_case):
    name = srbench_case.id.rpartition("/")[2]
    print(f"out-marker-{name}")
    print(f"err-marker-{name}", file=sys.stderr)
    logging.getLogger("mine").warning("log-marker-%s", name)
    import time
    time.sleep(0.5)
    raise ValueError(f"body {name} failed")
"""
)

GRADED = (
    LETTERS
    + """

@pytest.mark.srbench("letters")
async def test_letters(srbench_case):
    name = srbench_case.id.rpartition("/")[2]
    if name == "a":
        await asyncio.sleep(0.3)  # the cell's own time, whatever its item waited
        return "A"
    if name == "b":
        return "wrong"
    if name == "c":
        return {}["zzz"]
    return "D"
"""
)


def run(pytester: pytest.Pytester, *args: str) -> Any:
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-target=sim-small",
        "--srbench-json=report.json", "test_mine.py", *args,
    )  # fmt: skip


def failure_blocks(output: str) -> dict[str, str]:
    """Each failed (or -rP passed) item's block of the terminal output, by its case's name."""
    blocks: dict[str, str] = {}
    parts = re.split(r"_{3,} test_letters\[letters/(\w)-sim-small\] _{3,}", output)
    for name, block in zip(parts[1::2], parts[2::2], strict=True):
        blocks[name] = re.split(r"={3,}", block)[0]
    return blocks


@pytest.mark.parametrize("style", ["long", "short"])
def test_a_failed_cell_shows_its_bodys_exception_with_its_traceback(pytester, style):
    pytester.makepyfile(test_mine=FAILING)
    result = run(pytester, f"--tb={style}")
    assert result.ret == 1
    output = result.stdout.str()
    blocks = failure_blocks(output)
    assert sorted(blocks) == ["a", "b"]
    helper, rewritten = blocks["a"], blocks["b"]
    # the user's test function and the helper it called, with their lines; no plugin frame
    assert re.search(r"test_mine.py:\d+: in test_letters", helper) or (
        style == "long" and 'return lookup({}, "zzz")' in helper
    )
    assert re.search(r"test_mine.py:\d+: (in lookup|KeyError)", helper)
    assert "E   KeyError: 'zzz'" in helper.replace("       ", "   ")
    assert "pytest_srbench" not in helper and "could not be graded" not in output
    # pytest's rewritten assertion
    assert "assert 'B' == 'Z'" in rewritten
    result.stdout.fnmatch_lines(["FAILED test_mine.py::test_letters[[]letters/a-sim-small[]]*"])
    # the run's report keeps its one-line reason
    report = json.loads((pytester.path / "report.json").read_text())
    errors = {c["case_id"]: c["error"] for c in report["cells"] if c["error"]}
    assert sorted(errors) == ["letters/a", "letters/b"]
    assert all("\n" not in error and "Traceback" not in error for error in errors.values())


def test_line_and_no_tracebacks_and_the_full_trace(pytester):
    pytester.makepyfile(test_mine=FAILING)
    line = run(pytester, "--tb=line")
    line.stdout.fnmatch_lines(["*test_mine.py:*: KeyError: 'zzz'"])
    full = run(pytester, "--full-trace")
    full.stdout.fnmatch_lines(["*def test_letters(srbench_case):*", "*def lookup(table, key):*",
                               "E*KeyError: 'zzz'"])  # fmt: skip
    assert "bench_tests.py" in full.stdout.str()  # the whole way, as --full-trace promises


def check_own_output(output: str) -> None:
    blocks = failure_blocks(output)
    assert sorted(blocks) == ["a", "b", "c", "d"], output
    for name, block in blocks.items():
        for kind, section in (("out", "stdout"), ("err", "stderr"), ("log", "log")):
            assert f"Captured {section} call" in block, block
            found = set(re.findall(rf"{kind}-marker-(\w)", block))
            assert found == {name}, (name, kind, block)
        assert f"ValueError: body {name} failed" in block


def test_each_cell_shows_the_output_its_own_body_wrote(pytester):
    pytester.makepyfile(test_mine=CONCURRENT)
    result = run(pytester, "--tb=short")
    assert result.ret == 1
    check_own_output(result.stdout.str())


def test_each_cell_shows_its_own_output_and_traceback_under_xdist(pytester):
    pytester.makepyfile(test_mine=CONCURRENT)
    result = run(pytester, "--tb=short", "-n", "2")
    assert result.ret == 1
    output = result.stdout.str()
    check_own_output(output)
    assert re.search(r"test_mine.py:\d+: in test_letters", output)


def test_passed_cells_output_with_rP_and_straight_through_with_s(pytester):
    pytester.makepyfile(
        test_mine=LETTERS
        + """
@pytest.mark.srbench("letters")
async def test_letters(srbench_case):
    name = srbench_case.id.rpartition("/")[2]
    print(f"out-marker-{name}")
    return name.upper()
"""
    )
    shown = run(pytester, "-rP")
    assert shown.ret == 0
    blocks = failure_blocks(shown.stdout.str())
    assert {name: set(re.findall(r"out-marker-(\w)", b)) for name, b in blocks.items()} == {
        name: {name} for name in "abcd"
    }
    through = run(pytester, "-s")
    assert through.ret == 0
    assert sorted(re.findall(r"out-marker-(\w)", through.stdout.str())) == list("abcd")
    assert "Captured stdout call" not in through.stdout.str()


def junit_cases(path) -> dict[str, ET.Element]:
    return {
        re.search(r"letters/(\w)", case.get("name", "")).group(1): case  # type: ignore[union-attr]
        for case in ET.parse(path).iter("testcase")
    }


def properties(case: ET.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


def test_junit_xml_carries_each_cells_outcome(pytester):
    pytester.makepyfile(test_mine=GRADED)
    result = run(pytester, "--junitxml=junit.xml")
    assert result.ret == 1
    cases = junit_cases(pytester.path / "junit.xml")
    assert sorted(cases) == ["a", "b", "c", "d"]
    right, wrong, raised = properties(cases["a"]), properties(cases["b"]), properties(cases["c"])
    assert {k: right[k] for k in ("benchmark", "case", "target", "correct")} == {
        "benchmark": "letters",
        "case": "letters/a",
        "target": "sim-small",
        "correct": "true",
    }
    assert float(right["latency_s"]) >= 0.3 and float(cases["a"].get("time", 0)) >= 0.3
    assert "variant" not in right
    assert wrong["correct"] == "false" and wrong["status"] == "completed"
    assert cases["b"].find("failure") is None  # a wrong answer is a measurement by default
    assert raised["correct"] == "false" and raised["status"] == "failed"
    failure = cases["c"].find("failure")
    assert failure is not None and "KeyError" in (failure.get("message") or "")
    assert "test_mine.py" in (failure.text or "") and "could not be graded" not in failure.text

    strict = run(pytester, "--junitxml=strict.xml", "--srbench-junit-wrong=failure")
    assert strict.ret == 1  # the raised cell; the wrong one does not change the exit status
    strict.stdout.fnmatch_lines(["*= 1 failed, 1 wrong, 2 correct in *"])
    suite = next(ET.parse(pytester.path / "strict.xml").iter("testsuite"))
    assert (suite.get("tests"), suite.get("failures")) == ("4", "2")
    cases = junit_cases(pytester.path / "strict.xml")
    failure = cases["b"].find("failure")
    assert failure is not None and failure.get("message") == "wrong answer: 'wrong'"
    assert cases["a"].find("failure") is None and cases["d"].find("failure") is None


def test_a_wrong_cell_is_a_junit_failure_under_xdist_too(pytester):
    pytester.makepyfile(test_mine=GRADED)
    result = run(pytester, "--junitxml=junit.xml", "--srbench-junit-wrong=failure", "-n", "2")
    assert result.ret == 1
    cases = junit_cases(pytester.path / "junit.xml")
    assert properties(cases["a"])["correct"] == "true"
    assert (cases["b"].find("failure").get("message") or "").startswith("wrong answer")  # type: ignore[union-attr]
    assert "KeyError" in (cases["c"].find("failure").get("message") or "")  # type: ignore[union-attr]
