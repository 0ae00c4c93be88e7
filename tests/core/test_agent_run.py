"""What a test body may return as an agent run, and the one-line reason for anything else."""

from __future__ import annotations

import pytest

import pytest_srbench
from pytest_srbench.core.agent_run import AgentRun, AgentRunError, ToolCall, agent_run_of


def test_the_public_names_are_the_core_dataclasses():
    assert pytest_srbench.AgentRun is AgentRun and pytest_srbench.ToolCall is ToolCall


def test_a_run_is_checked_and_its_calls_become_a_tuple():
    calls = [ToolCall("search_notes", {"query": "pto"}, '{"results": []}'),
             ToolCall("read_note", '{"note_id": "n15"}')]  # fmt: skip
    run = agent_run_of(AgentRun("27 [note:n15]", calls))
    assert run == AgentRun("27 [note:n15]", tuple(calls), completed=True)


def test_a_mapping_with_the_same_keys_is_a_run():
    run = agent_run_of(
        {"final_answer": "done", "completed": False,
         "tool_calls": [{"name": "read_note", "arguments": {"note_id": "n1"}, "result": "{}"},
                        {"name": "search_notes"}]}
    )  # fmt: skip
    assert run.completed is False and run.final_answer == "done"
    assert run.tool_calls == (ToolCall("read_note", {"note_id": "n1"}, "{}"),
                              ToolCall("search_notes", {}, None))  # fmt: skip


def test_arguments_may_be_json_text_or_none_for_unparsable_ones():
    run = agent_run_of(AgentRun("x", [ToolCall("read_note", "{not json"), ToolCall("a", None)]))
    assert [call.arguments for call in run.tool_calls] == ["{not json", None]


@pytest.mark.parametrize(
    ("returned", "reason"),
    [
        ("27", "str, not an AgentRun (the final answer and the tool calls)"),
        (None, "NoneType, not an AgentRun (the final answer and the tool calls)"),
        ({"answer": "27"}, "a run with unknown keys ['answer'] (known: final_answer, "
                           "tool_calls, completed)"),
        ({"tool_calls": []}, "a run without 'final_answer'"),
        (AgentRun(27), "a run whose final_answer is int, not text"),  # type: ignore[arg-type]
        (AgentRun("x", completed="yes"), "a run whose completed is str, not a bool"),  # type: ignore[arg-type]
        ({"final_answer": "x", "tool_calls": {"name": "read_note"}},
         "a run whose tool_calls are dict, not a list"),
        ({"final_answer": "x", "tool_calls": "read_note"},
         "a run whose tool_calls are str, not a list"),
        (AgentRun("x", ["read_note"]), "a run whose tool call 1 is str, not a ToolCall or a mapping"),  # type: ignore[list-item]
        (AgentRun("x", [ToolCall("a"), {"arguments": {}}]), "a run whose tool call 2 has no tool name"),
        (AgentRun("x", [ToolCall(" ")]), "a run whose tool call 1 has no tool name"),
        (AgentRun("x", [{"name": "a", "args": {}}]),
         "a run whose tool call 1 has unknown keys ['args'] (known: name, arguments, result)"),
        (AgentRun("x", [ToolCall("read_note", ["n1"])]),  # type: ignore[arg-type]
         "a run whose tool call 1 (read_note) has arguments of type list, not an object or JSON "
         "text"),
        (AgentRun("x", [ToolCall("read_note", {}, {"ok": True})]),  # type: ignore[arg-type]
         "a run whose tool call 1 (read_note) has a result of type dict, not text"),
    ],
)  # fmt: skip
def test_a_wrong_shape_names_what_is_wrong_in_one_line(returned, reason):
    with pytest.raises(AgentRunError) as raised:
        agent_run_of(returned)
    assert str(raised.value) == reason and "\n" not in reason
