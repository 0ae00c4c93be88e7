"""The agent benchmark grades the user's own loop (an ``AgentRun`` a test body returns) by the
same rules, and to the same grade, as the engine's own loop; a wrong shape is not graded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import pytest_srbench
from pytest_srbench.benchmarks import NotesToolbox
from pytest_srbench.benchmarks.agent_bench import AgentAdapter
from pytest_srbench.benchmarks.base import Grade, ModelReply, NotGraded
from pytest_srbench.core.models import Case

SUITE = Path(pytest_srbench.__file__).parent / "suites" / "agent-smoke.json"
ADAPTER = AgentAdapter.for_dataset("agent-smoke")
CASES = {
    case.metadata["case_id"]: case
    for case in (ADAPTER.render(row, 1) for row in json.loads(SUITE.read_text())["cases"])
}


def reply(step: Mapping[str, Any], index: int) -> ModelReply:
    calls = [
        {"id": f"call_{index}_{n}", "type": "function",
         "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
        for n, c in enumerate(step.get("tool_calls") or [])
    ]  # fmt: skip
    text = str(step.get("say", ""))
    return ModelReply(call_id=f"c{index}", final_text=text, content=text, reasoning="",
                      finish_reason="tool_calls" if calls else "stop", output_complete=True,
                      tool_calls=calls, model="scripted")  # fmt: skip


@dataclass
class ScriptedContext:
    """A cell whose model plays the simulator's plan for the case (``drop``: leave out the
    last tool step, as a wrong simulated model does)."""

    case: Case
    drop: bool = False
    seed: int = 1
    sent: list[dict[str, Any]] = field(default_factory=list)

    async def call(
        self, messages: Sequence[Mapping[str, Any]], *, extra_body: Any = None, **_: Any
    ) -> ModelReply:
        ((_, script),) = ADAPTER.simulator_scripts(self.case)
        plan = list(script["plan"])
        tool_steps = [i for i, step in enumerate(plan) if step.get("tool_calls")]
        if self.drop and tool_steps:
            plan.pop(tool_steps[-1])
        self.sent.append(dict(extra_body or {}))
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        return reply(plan[turn] if turn < len(plan) else {"say": "?"}, turn)


async def own_loop(ctx: ScriptedContext, max_steps: int = 8) -> pytest_srbench.AgentRun:
    """A user's agent loop, as the example writes it."""
    tools = NotesToolbox.for_case(ctx.case)
    messages = [m.model_dump(exclude_none=True) for m in ctx.case.messages]
    for _ in range(max_steps):
        answer = await ctx.call(messages, extra_body={"tools": tools.schemas})
        if not answer.tool_calls:
            return tools.run(answer.final_text)
        messages.append({"role": "assistant", "content": None, "tool_calls": answer.tool_calls})
        for call in answer.tool_calls:
            result = tools.call(call["function"]["name"], call["function"]["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return tools.run("", completed=False)


def graded(case_id: str, answer: object) -> Grade:
    return asyncio.run(ADAPTER.grade_answer(ScriptedContext(CASES[case_id]), answer))


def not_graded(case_id: str, answer: object) -> str:
    with pytest.raises(NotGraded) as raised:
        graded(case_id, answer)
    return str(raised.value)


@pytest.mark.parametrize("drop", [False, True])
@pytest.mark.parametrize("case_id", sorted(CASES))
def test_the_users_loop_gets_the_grade_of_the_engines_loop(case_id, drop):
    engine = asyncio.run(ADAPTER.evaluate(ScriptedContext(CASES[case_id], drop)))
    ctx = ScriptedContext(CASES[case_id], drop)
    run = asyncio.run(own_loop(ctx))
    mine = asyncio.run(ADAPTER.grade_answer(ctx, run))
    assert mine == engine
    assert mine.correct is (not drop or not CASES[case_id].metadata["expected_tool_calls"])
    assert len(ctx.sent) == len(run.tool_calls) + 1  # one model call per step, then the answer
    assert ctx.sent[0]["tools"] == NotesToolbox.for_case(ctx.case).schemas


def test_a_dropped_step_is_judged_by_the_rules_with_their_reasons():
    ctx = ScriptedContext(CASES["a01-pto-days"], drop=True)
    grade = asyncio.run(ADAPTER.grade_answer(ctx, asyncio.run(own_loop(ctx))))
    assert not grade.correct
    assert grade.details["agent"]["reasons"] == ["missing tool call read_note"]


def test_a_mapping_without_results_is_replayed_on_the_cases_workspace():
    run = {"final_answer": "Book the bus: created T-1",
           "tool_calls": [{"name": "create_task", "arguments": '{"title": "Bus", "due": "2024-09-01"}'}]}  # fmt: skip
    grade = graded("a04-approved-task", run)
    assert grade.correct, grade.details["agent"]["reasons"]
    assert grade.details["agent"]["created_tasks"] == [
        {"task_id": "T-1", "title": "Bus", "due": "2024-09-01"}
    ]


def test_tool_results_count_as_the_tools_make_them_not_as_the_loop_says():
    # a05 approves nothing: the write is refused on replay, whatever the loop claims
    run = pytest_srbench.AgentRun(
        "I need your approval.",
        [pytest_srbench.ToolCall("create_task", {"title": "Descale"})],
    )
    reasons = graded("a05-no-approval", run).details["agent"]["reasons"]
    assert "extra tool call create_task" in reasons
    assert any(r.startswith("tool result failed: create_task (") for r in reasons)
    invalid = pytest_srbench.AgentRun(
        "27 [note:n15]", [pytest_srbench.ToolCall("read_note", "{oops")]
    )
    reasons = graded("a01-pto-days", invalid).details["agent"]["reasons"]
    assert "invalid tool call read_note (invalid JSON arguments)" in reasons


def test_a_run_stopped_at_its_step_cap_did_not_complete():
    grade = graded("a05-no-approval", pytest_srbench.AgentRun("approval", completed=False))
    assert not grade.correct and grade.details["answer_status"] == "max_steps"
    assert grade.details["agent"]["reasons"] == ["run did not complete (failed)"]


def test_a_recorded_result_that_the_tool_does_not_return_is_not_graded():
    run = pytest_srbench.AgentRun(
        "27 [note:n15]",
        [pytest_srbench.ToolCall("read_note", {"note_id": "n15"}, '{"days": 27}')],
    )
    assert not_graded("a01-pto-days", run) == (
        "benchmark 'agent-smoke' grades an agent run; the test body returned a run whose tool "
        "call 1 (read_note) has a result that tool does not return for its arguments"
    )


def test_text_or_a_wrong_shape_is_not_graded_with_the_reason():
    assert not_graded("a01-pto-days", "27 [note:n15]") == (
        "benchmark 'agent-smoke' grades an agent run; the test body returned str, not an "
        "AgentRun (the final answer and the tool calls)"
    )
    assert not_graded("a01-pto-days", {"final_answer": "27", "tool_calls": [{"tool": "x"}]}) == (
        "benchmark 'agent-smoke' grades an agent run; the test body returned a run whose tool "
        "call 1 has unknown keys ['tool'] (known: name, arguments, result)"
    )


def test_the_toolbox_reads_only_the_approvals_and_the_reference_keys_are_declared():
    @dataclass
    class View:  # what a test body sees once the reference keys are hidden
        metadata: dict[str, Any]

    for case in CASES.values():
        visible = set(case.metadata) - ADAPTER.reference_metadata
        assert visible == {"case_id", "approved_tools", "tags"}
        box = NotesToolbox.for_case(View({k: case.metadata[k] for k in visible}))
        assert box.workspace.approved == frozenset(case.metadata["approved_tools"])
    box = NotesToolbox.for_case(View({}))
    denied = json.loads(box.call("create_task", {"title": "x"}))
    assert denied["error"].startswith("permission_denied")
    assert box.run("no").tool_calls[0].result == json.dumps(denied)
    box.schemas.clear()  # a copy
    assert [tool["function"]["name"] for tool in box.schemas] == [
        "search_notes", "read_note", "create_task"
    ]  # fmt: skip
