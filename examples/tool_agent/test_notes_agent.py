"""A tool-using agent, benchmarked: its own loop over the notes tools, graded by the rules of
the shipped ``agent-smoke`` benchmark (right tools, right arguments, no extra call, cited
answer, only approved writes)."""

from __future__ import annotations

import pytest

from pytest_srbench import AgentRun
from pytest_srbench.benchmarks import NotesToolbox

MAX_STEPS = 8


class NotesAgent:
    """The application under test: ask the model with the tools, run the calls it makes and
    feed the results back, until it answers or runs out of steps."""

    def __init__(self, max_steps: int = MAX_STEPS) -> None:
        self.max_steps = max_steps

    async def run(self, case, target) -> AgentRun:
        tools = NotesToolbox.for_case(case)  # search_notes, read_note, create_task
        messages = list(case.messages)
        for _ in range(self.max_steps):
            reply = await target.ask(messages, tools=tools.schemas, tool_choice="auto")
            if not reply.tool_calls:
                return tools.run(reply.final_text)  # the answer, and every call made
            messages.append(
                {"role": "assistant", "content": reply.content or None,
                 "tool_calls": reply.tool_calls}
            )  # fmt: skip
            for call in reply.tool_calls:
                result = tools.call(call["function"]["name"], call["function"]["arguments"])
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
        return tools.run("", completed=False)  # out of steps: the run did not complete


@pytest.fixture(scope="session")
def agent() -> NotesAgent:
    return NotesAgent()


@pytest.mark.srbench("agent-smoke")
async def test_notes_agent(srbench_case, srbench_target, agent):
    return await agent.run(srbench_case, srbench_target)
