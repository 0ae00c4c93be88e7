"""Agent (tool-use) benchmarks over the notes corpus: the model gets the case's prompt and the
notes tools, calls tools until it answers, and the case is judged by rules only (no LLM
judge, ``core/report/agent_metrics.py``): run completed, expected tools with their declared
arguments matched one to one, no extra call, every tool result ok, required substrings and
citations in the answer, and the expected number of created tasks.

The loop is the engine's own (``evaluate``) or the user's (a test body that returns an
``AgentRun``, ``grade_answer``); both runs are judged by the same rules, the user's after its
tool calls are replayed on a fresh workspace of the case, so a result counts as the tools made
it and not as the loop reports it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationError

from pytest_srbench.benchmarks.agent_tools import (
    assistant_message,
    decode_arguments,
    parse_arguments,
    tool_message,
)
from pytest_srbench.benchmarks.base import (
    Adapter,
    CellContext,
    Grade,
    NotGraded,
    SuiteRowError,
    one_list_profiles,
)
from pytest_srbench.benchmarks.notes_tools import TOOLS, NotesWorkspace, case_workspace
from pytest_srbench.core.agent_run import AgentRunError, agent_run_of
from pytest_srbench.core.models import Case, Message
from pytest_srbench.core.plan.agent_case_spec import AgentCaseSpec, ExpectedToolCall
from pytest_srbench.core.plan.datasets import AgentCase
from pytest_srbench.core.report.agent_metrics import (
    AgentTranscript,
    ToolCallRecord,
    judge_agent_case,
)

GRADER_VERSION = "agent-rules-v1"
MAX_STEPS = 8
STOPPED = "failed"  # the status of a run that ended without an answer (its step cap)
REFERENCE_KEYS = frozenset(
    {"expected_tool_calls", "required_substrings", "required_citations", "expected_task_count"}
)
SYSTEM = (
    "You are an assistant for a small company's knowledge base. Use the tools to find facts "
    "in the notes before you answer. Cite every note you rely on as [note:NOTE_ID]. Only "
    "create tasks when the user asks for one."
)


def run_tool(
    workspace: NotesWorkspace, name: str, arguments: dict[str, Any] | None
) -> tuple[ToolCallRecord, str]:
    """Run one tool call in ``workspace``: the judge's record of it and the result text."""
    valid, ok, text = workspace.call(name, arguments)
    record = ToolCallRecord(name=name, arguments=arguments, valid=valid, result_ok=ok,
                            error=None if ok else text)  # fmt: skip
    return record, text


def case_spec(meta: Mapping[str, Any]) -> AgentCaseSpec:
    """What the judge requires of a run of the case whose metadata is ``meta``."""
    return AgentCaseSpec(
        case_id=str(meta["case_id"]),
        expected_tool_calls=[
            ExpectedToolCall(name=str(e["name"]), arguments=dict(e.get("arguments") or {}))
            for e in meta.get("expected_tool_calls") or []
        ],
        required_substrings=list(meta.get("required_substrings") or []),
        required_citations=list(meta.get("required_citations") or []),
        expected_task_count=meta.get("expected_task_count"),
    )


class AgentAdapter(Adapter):
    """An agent dataset (``kind: agent``) bound to its dataset id."""

    benchmark = "agent"
    version = "agent-1"
    reference_metadata: ClassVar[frozenset[str]] = REFERENCE_KEYS

    def profile_counts(self, suite_meta: Mapping[str, Any]) -> dict[str, int]:
        return one_list_profiles(int(suite_meta.get("count", 0)))

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        try:
            spec = AgentCase.model_validate(dict(row))
        except ValidationError as error:
            raise SuiteRowError(str(error.errors()[0]["msg"])) from None
        messages = [Message(role="system", content=spec.system or SYSTEM),
                    Message(role="user", content=spec.prompt)]  # fmt: skip
        return Case(
            id=f"{self.benchmark}/{spec.case_id}",
            benchmark=self.benchmark,
            messages=messages,
            metadata={
                "case_id": spec.case_id,
                **spec.model_dump(mode="json", exclude={"case_id", "prompt", "system"}),
            },
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        workspace = case_workspace(ctx.case)
        view: list[dict[str, Any]] = [m.model_dump(exclude_none=True) for m in ctx.case.messages]
        made: list[ToolCallRecord] = []
        final = ""
        status = STOPPED
        for _ in range(MAX_STEPS):
            reply = await ctx.call(view, extra_body={"tools": TOOLS, "tool_choice": "auto"})
            view.append(assistant_message(reply))
            if not reply.tool_calls:
                final, status = reply.final_text, "completed"
                break
            for call in view[-1]["tool_calls"]:
                record, text = run_tool(workspace, call["function"]["name"], parse_arguments(call))
                made.append(record)
                view.append(tool_message(call, text))
        return self._judged(ctx.case, status, made, final, workspace)

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        """Grade the user's own loop: ``answer`` is an ``AgentRun`` (or a mapping of its keys).
        Its tool calls are replayed in order on a fresh workspace of the case; a recorded
        result must be what the tool returns there (else the run graded is not the one the
        model saw)."""
        refused = f"benchmark {ctx.case.benchmark!r} grades an agent run; the test body returned"
        try:
            run = agent_run_of(answer)
        except AgentRunError as error:
            raise NotGraded(f"{refused} {error}") from None
        workspace = case_workspace(ctx.case)
        made: list[ToolCallRecord] = []
        for position, call in enumerate(run.tool_calls, start=1):
            arguments = None if call.arguments is None else decode_arguments(call.arguments)
            record, text = run_tool(workspace, call.name, arguments)
            if call.result is not None and call.result != text:
                raise NotGraded(
                    f"{refused} a run whose tool call {position} ({call.name}) has a result "
                    "that tool does not return for its arguments"
                )
            made.append(record)
        status = "completed" if run.completed else STOPPED
        return self._judged(ctx.case, status, made, run.final_answer, workspace)

    def _judged(
        self,
        case: Case,
        status: str,
        made: list[ToolCallRecord],
        final: str,
        workspace: NotesWorkspace,
    ) -> Grade:
        transcript = AgentTranscript(
            status=status, tool_calls=made, final_output=final,
            created_tasks=len(workspace.created_tasks),
        )  # fmt: skip
        judged = judge_agent_case(case_spec(case.metadata), transcript)
        return Grade(
            correct=bool(judged["succeeded"]),
            answer=final[:2000],
            details={
                "grader_version": GRADER_VERSION,
                "answer_status": "answered" if status == "completed" else "max_steps",
                "agent": {**judged, "status": status, "tool_calls": made,
                          "created_tasks": workspace.created_tasks},
            },
        )  # fmt: skip

    def simulator_scripts(self, case: Case) -> list[tuple[Any, dict[str, Any]]]:
        """The simulator plays the expected tool calls (with their reference arguments) and
        then answers with the required substrings and citations."""
        meta = case.metadata
        plan: list[dict[str, Any]] = []
        for expected in meta.get("expected_tool_calls") or []:
            arguments = {**dict(expected.get("reference_arguments") or {}),
                         **dict(expected.get("arguments") or {})}  # fmt: skip
            plan.append({"tool_calls": [{"name": expected["name"], "arguments": arguments}]})
        words = [*meta.get("required_substrings", []),
                 *(f"[note:{c}]" for c in meta.get("required_citations", []))]  # fmt: skip
        plan.append({"say": "Here is what the notes say: " + " ".join(str(w) for w in words)})
        user = next(m.content for m in case.messages if m.role == "user")
        return [(user, {"kind": "tau-agent", "plan": plan})]
