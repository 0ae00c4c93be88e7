"""``srbench_client.judge`` from a test body: bound by default to the judge the shipped suite
binds to the benchmark, journaled as judge calls; a judge call naming another model is refused
before it is sent (never rewritten to the judge); a benchmark without a judge says so."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def run(pytester: pytest.Pytester, *args: str) -> tuple[Any, dict]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-json=report.json",
        "--srbench-store=store", *args,
    )  # fmt: skip
    return result, json.loads((pytester.path / "report.json").read_text())


def journal(pytester: pytest.Pytester) -> list[dict]:
    db = sqlite3.connect(pytester.path / "store" / "journal.sqlite3")
    return [json.loads(data) for (data,) in db.execute("SELECT data FROM calls")]


JUDGED_BY_DEFAULT = """
import pytest

@pytest.mark.srbench("hle")
async def test_hle(srbench_case, srbench_target, srbench_client):
    reply = await srbench_target.ask(srbench_case.messages)
    check = [{"role": "user", "content": "Is this answer sensible? " + reply.final_text}]
    await srbench_client.judge.chat(check)  # the benchmark's bound judge
    await srbench_client.judge.chat(check, model="sim-judge")  # naming it is fine too
    return reply.final_text
"""


def test_a_judge_call_from_user_code_goes_to_the_benchmarks_bound_judge(pytester):
    pytester.makepyfile(test_judge=JUDGED_BY_DEFAULT)
    result, report = run(pytester, "test_judge.py", "--srbench-target=sim-large")
    assert result.ret == 0, result.stdout.str()
    assert {c["status"] for c in report["cells"]} == {"completed"} and len(report["cells"]) == 4
    rows = journal(pytester)
    roles = sorted((row["role"], row["requested_model"]) for row in rows)
    # per cell: the subject's answer, the body's two judge calls, the grader's judge call
    assert roles == [("judge", "sim-judge")] * 12 + [("subject", "sim-large")] * 4
    assert all(row["status"] == "completed" for row in rows)
    (target,) = report["summary"]["targets"]
    assert target["evaluation_cost_usd"] > 0  # judge calls are priced apart from the subject


ANOTHER_MODEL = """
import pytest

@pytest.mark.srbench("hle")
async def test_hle(srbench_case, srbench_target, srbench_client):
    reply = await srbench_target.ask(srbench_case.messages)
    await srbench_client.judge.chat([{"role": "user", "content": "ok?"}], model="sim-large")
    return reply.final_text
"""


def test_a_judge_call_naming_another_model_is_refused_not_rewritten(pytester):
    pytester.makepyfile(test_judge=ANOTHER_MODEL)
    result, report = run(pytester, "test_judge.py", "--srbench-target=sim-large")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*benchmark 'hle' binds the judge 'sim-judge'*this judge call names 'sim-large'*"]
    )
    assert {c["status"] for c in report["cells"]} == {"failed"}
    rows = journal(pytester)  # the refused judge call was never sent, to either model
    assert (
        sorted((row["role"], row["requested_model"]) for row in rows)
        == [("subject", "sim-large")] * 4
    )


NO_JUDGE = """
import pytest

@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target, srbench_client):
    reply = await srbench_target.ask(srbench_case.messages)
    if srbench_case.id.endswith("-001"):
        await srbench_client.judge.chat([{"role": "user", "content": "ok?"}])
    if srbench_case.id.endswith("-002"):  # the cell's own model, as a judge: sent to it
        await srbench_client.judge.chat([{"role": "user", "content": "ok?"}], model="sim-large")
    return reply.final_text
"""


def test_a_benchmark_without_a_judge_takes_the_named_model_and_says_when_none_is(pytester):
    pytester.makepyfile(test_judge=NO_JUDGE)
    result, report = run(pytester, "test_judge.py", "--srbench-target=sim-large")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*benchmark 'gpqa-diamond' binds no judge*name the judge model*"])
    statuses = sorted(c["status"] for c in report["cells"])
    assert statuses == ["completed"] * 3 + ["failed"]
    roles = sorted((row["role"], row["requested_model"]) for row in journal(pytester))
    assert roles == [("judge", "sim-large")] + [("subject", "sim-large")] * 4
