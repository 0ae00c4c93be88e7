"""One reason everywhere, through a real session: a failed cell's own reason is the same in
the terminal, the JSON cell, the failure groups and the HTML; a python target whose fixture
fails in set-up leaves its cells pending with that reason; a python target's cells without a
journaled call are noted; ``srbench_client`` without the ``openai`` package says what to
install; an unparsed MCQ reply carries the grader's reason and the accepted forms."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

pytestmark = pytest.mark.slow

BUDGET = "Per-case call budget exhausted (max_calls_per_case)"
OPENAI = "srbench_client needs the openai package: pip install openai"

REASONS = """
import sys
import pytest


@pytest.mark.srbench("gpqa-diamond")
async def test_loop(srbench_case, srbench_target):
    for _ in range(1000):
        await srbench_target.ask(srbench_case.messages)
    return "A"


@pytest.mark.srbench("mmlu-pro")
async def test_mine(srbench_case, srbench_target, srbench_client):
    if srbench_case.id.endswith("biology-001"):
        return None
    if srbench_case.id.endswith("business-001"):
        sys.modules["openai"] = None  # as if the package were not installed
        try:
            srbench_client.async_openai()
        finally:
            del sys.modules["openai"]
    if srbench_case.id.endswith("chemistry-001"):
        raise KeyError("zzz")
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""


def run(pytester: pytest.Pytester, *args: str) -> tuple[Any, dict]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-json=report.json",
        "--srbench-html=report.html", "--srbench-store=store", *args,
    )  # fmt: skip
    return result, json.loads((pytester.path / "report.json").read_text())


def test_a_failures_own_reason_is_the_same_in_terminal_json_groups_and_html(pytester):
    pytester.makepyfile(test_mine=REASONS)
    result, report = run(pytester, "test_mine.py", "--srbench-target=sim-small")
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"*test_loop*could not be graded — failed: {BUDGET}"])
    # the item shows the body's own exception (its traceback), the JSON its one line
    result.stdout.fnmatch_lines([f"E *ModuleNotFoundError: {OPENAI}"])
    errors = {c["case_id"]: c["error"] for c in report["cells"] if c["error"]}
    assert {errors[f"gpqa-diamond/smoke-00{i}"] for i in range(1, 5)} == {BUDGET}
    assert errors["mmlu-pro/smoke-business-001"] == (
        f"the test body raised ModuleNotFoundError: {OPENAI}"
    )
    assert errors["mmlu-pro/smoke-chemistry-001"] == "the test body raised KeyError: 'zzz'"
    assert errors["mmlu-pro/smoke-biology-001"].startswith("the test body returned no answer")
    groups = {g["reason"]: g for g in report["failure_groups"]}
    budget = groups["Frozen request or cost budget exhausted"]
    assert budget["reasons"] == [{"reason": BUDGET, "count": 4}]
    body = groups["The test body failed"]
    assert body["count"] == 3 and len(body["reasons"]) == 3
    assert {r["reason"] for r in body["reasons"]} == {
        errors[f"mmlu-pro/smoke-{name}-001"] for name in ("biology", "business", "chemistry")
    }
    result.stdout.fnmatch_lines(["*cells without a graded outcome, by reason:*", f"*4 × {BUDGET}"])
    html = (pytester.path / "report.html").read_text()
    assert f"4 × {BUDGET}" in html and OPENAI in html


USER_TARGETS = """
import pytest
import pytest_srbench


@pytest_srbench.target("broken-bot")
@pytest.fixture(scope="session")
def broken_bot():
    raise RuntimeError("cannot connect to my app\\nsecond line")


class QuietBot:
    def __call__(self, messages):
        return "B"  # answers through no journaled client (as if through its own)


@pytest_srbench.target("quiet-bot")
@pytest.fixture(scope="session")
def quiet_bot():
    return QuietBot()
"""

GPQA = """
import pytest


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""


def test_pending_cells_say_why_and_cells_without_journaled_calls_are_noted(pytester):
    pytester.makeconftest(USER_TARGETS)
    pytester.makepyfile(test_mine=GPQA)
    result, report = run(
        pytester, "test_mine.py", "--srbench-target=broken-bot", "--srbench-target=quiet-bot"
    )
    setup = "target fixture set-up failed: RuntimeError: cannot connect to my app"
    pending = [c for c in report["cells"] if c["target_id"] == "broken-bot"]
    assert len(pending) == 4 and {c["status"] for c in pending} == {"pending"}
    assert {c["error"] for c in pending} == {setup}
    (group,) = [g for g in report["failure_groups"] if "pending" in g["statuses"]]
    assert group["reasons"] == [{"reason": setup, "count": 4}]
    quiet = (
        "4 cells of quiet-bot made no journaled call: calls through other clients are not counted"
    )
    assert report["notes"] == [f"4 cells of broken-bot pending: {setup}", quiet]
    result.stdout.fnmatch_lines([f"note: 4 cells of broken-bot pending: {setup}", f"note: {quiet}"])
    html = (pytester.path / "report.html").read_text()
    assert quiet in html and setup in html


UNPARSED = """
import pytest


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target):
    await srbench_target.ask(srbench_case.messages)
    if srbench_case.id.endswith("-004"):
        return "B"
    return "B. GUG"  # what a real small model writes: a letter and an option's text
"""


def test_an_unparsed_reply_carries_the_graders_reason_and_the_table_its_accepted_forms(pytester):
    pytester.makepyfile(test_mine=UNPARSED)
    result, report = run(pytester, "test_mine.py", "--srbench-target=sim-small")
    db = sqlite3.connect(pytester.path / "store" / "journal.sqlite3")
    details = {
        case: json.loads(data)["details"]
        for case, data in db.execute("SELECT case_id, data FROM results")
    }
    unparsed = details["gpqa-diamond/smoke-001"]
    assert unparsed["answer_status"] == "unparsed"
    assert unparsed["parse_reason"].startswith(
        "the reply 'B. GUG' is not a bare letter, an 'Answer: X' declaration or \\boxed{X}"
    )
    assert "accepted forms: a first line that is only the letter" in unparsed["parse_reason"]
    assert "parse_reason" not in details["gpqa-diamond/smoke-004"]  # answered: no reason
    (row,) = report["outcomes"]
    assert row["counts"]["unparsed"] == 3 and row["accepted_forms"].startswith("a first line")
    result.stdout.fnmatch_lines(
        ["*gpqa-diamond [[]sim-small[]] 3 of 4 answered cells unparsed; the grader accepts a "
         "first line that is only the letter*"]
    )  # fmt: skip
