"""An agent benchmark written as a pytest test: the body runs its own agent loop over the notes
tools and returns an ``AgentRun``; agent-smoke grades it by the rules of its own loop, and a
body that returns anything else is a failed cell with the reason."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytestmark = pytest.mark.slow

OWN_LOOP = """
import pytest
from pytest_srbench.benchmarks import NotesToolbox


async def agent(case, target, max_steps=8):
    tools = NotesToolbox.for_case(case)
    messages = list(case.messages)
    for _ in range(max_steps):
        reply = await target.ask(messages, tools=tools.schemas, tool_choice="auto")
        if not reply.tool_calls:
            return tools.run(reply.final_text)
        messages.append({"role": "assistant", "content": None, "tool_calls": reply.tool_calls})
        for call in reply.tool_calls:
            result = tools.call(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return tools.run("", completed=False)
"""

GOOD = (
    OWN_LOOP
    + """

@pytest.mark.srbench("agent-smoke")
async def test_agent(srbench_case, srbench_target):
    return await agent(srbench_case, srbench_target)
"""
)

WRONG_SHAPES = (
    OWN_LOOP
    + """

@pytest.mark.srbench("agent-smoke")
async def test_agent(srbench_case, srbench_target):
    run = await agent(srbench_case, srbench_target)
    if srbench_case.id.endswith("a01-pto-days"):
        return run.final_answer  # only the text: the calls are missing
    if srbench_case.id.endswith("a02-hotel-limit"):
        return {"final_answer": run.final_answer, "calls": list(run.tool_calls)}
    return run
"""
)


def run(pytester: pytest.Pytester, *args: str, name: str = "report.json") -> tuple[Any, dict]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-offline",
        f"--srbench-json={name}", *args,
    )  # fmt: skip
    return result, json.loads((pytester.path / name).read_text())


def rows(report: dict) -> dict[str, dict]:
    return {row["target_id"]: row for row in report["agent"]["rows"]}


def test_the_users_loop_is_judged_like_the_shipped_agent_loop(pytester):
    pytester.makepyfile(test_agent=GOOD)
    result, mine = run(pytester, "test_agent.py")
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*Agent tasks (rule-judged*"])
    shipped_result, shipped = run(
        pytester, "--srbench-benchmark=agent-smoke", "--ignore=test_agent.py", name="shipped.json"
    )
    assert shipped_result.ret == 0
    assert rows(mine) == rows(shipped)  # the same rules, the same judgement
    for target in mine["summary"]["targets"]:
        assert target["total"] == 5 and target["failed"] == 0
        row = rows(mine)[target["id"]]
        # every step of the loop is one journaled call: one per tool call, then the answer
        assert target["request_count"] == row["calls_made"] + row["evaluated_cases"]
    assert [t["request_count"] for t in mine["summary"]["targets"]] == [
        t["request_count"] for t in shipped["summary"]["targets"]
    ]


def test_a_body_that_returns_no_agent_run_is_a_failed_cell_with_the_reason(pytester):
    pytester.makepyfile(test_agent=WRONG_SHAPES)
    result, report = run(pytester, "test_agent.py")
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        "*failed: benchmark 'agent-smoke' grades an agent run; the test body returned str, not "
        "an AgentRun (the final answer and the tool calls)",
        "*failed: benchmark 'agent-smoke' grades an agent run; the test body returned a run with "
        "unknown keys [[]'calls'[]] (known: final_answer, tool_calls, completed)",
    ])  # fmt: skip
    for target in report["summary"]["targets"]:
        assert target["total"] == 5 and target["failed"] == 2
        assert target["accuracy"] == target["correct"] / 5  # full denominator
        row = rows(report)[target["id"]]
        assert row["total_cases"] == 5 and row["evaluated_cases"] == 3
    failed = [c for c in report["cells"] if c["status"] != "completed"]
    assert {c["case_id"] for c in failed} == {"agent-smoke/a01-pto-days",
                                              "agent-smoke/a02-hotel-limit"}  # fmt: skip


def test_the_body_does_not_see_the_reference(pytester):
    pytester.makepyfile(
        test_agent="""
        import pytest

        @pytest.mark.srbench("agent-smoke")
        async def test_agent(srbench_case):
            assert "expected_tool_calls" not in srbench_case.metadata
            assert "required_substrings" not in srbench_case.metadata
            return {"final_answer": ""}
        """
    )
    result, report = run(pytester, "test_agent.py")
    assert all(t["failed"] == 0 for t in report["summary"]["targets"]), result.stdout.str()
