"""Terminal-Bench 2.1: an agent loop in which the subject runs shell commands (a ``run_shell``
tool) in the case's own task directory, up to ``max_steps``; the task's verifier script then
decides the reward, and only reward 1 is correct."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_srbench.benchmarks.agent_tools import (
    assistant_message,
    function_tool,
    parse_arguments,
    tool_message,
)
from pytest_srbench.benchmarks.base import Adapter, CellContext, Grade, SuiteRowError, require
from pytest_srbench.core.models import Case, Message

GRADER_VERSION = "sr-bench-terminal-verifier-v1"
DEFAULT_MAX_STEPS = 30
RUN_SHELL = function_tool(
    "run_shell",
    "Run one shell command in the task directory and return its exit code and output.",
    {"command": {"type": "string", "description": "the command line to run with /bin/sh"}},
    ["command"],
)
SYSTEM = (
    "You are working in a terminal. Use the run_shell tool to run commands in the task "
    "directory (your current directory). When the task is done, reply with a short summary "
    "and no tool call."
)
OUTPUT_LIMIT = 4000


def _observation(status: str, exit_code: int | None, stdout: str, stderr: str) -> str:
    text = f"exit code: {exit_code} ({status})\nstdout:\n{stdout}\nstderr:\n{stderr}"
    return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + "\n…[output truncated]"


class TerminalBenchAdapter(Adapter):
    """Rows: ``task_id``, ``instruction``, ``files``, ``verifier``, optional ``max_steps``."""

    benchmark = "terminal-bench-2.1"

    def stratum(self, row: Mapping[str, Any]) -> str:
        return str(row.get("category") or "")

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = require(row, "task_id", (str, int))
        instruction = require(row, "instruction")
        files = row.get("files") or {}
        if not isinstance(files, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in files.items()
        ):
            raise SuiteRowError("'files' must map relative paths to text")
        verifier = require(row, "verifier")
        max_steps = int(row.get("max_steps") or DEFAULT_MAX_STEPS)
        if not 1 <= max_steps <= 1000:
            raise SuiteRowError("'max_steps' must be in 1..1000")
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[
                Message(role="system", content=SYSTEM),
                Message(role="user", content=instruction.strip()),
            ],
            answer=None,
            metadata={
                "files": files,
                "verifier": verifier,
                "max_steps": max_steps,
                "category": self.stratum(row),
                "reference_commands": row.get("reference_commands"),
                "verifier_files": (row.get("metadata") or {}).get("verifier_files") or {},
            },
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        case = ctx.case
        ctx.seed_files(case.metadata["files"])
        messages: list[dict[str, Any]] = [m.model_dump() for m in case.messages]
        steps = 0
        commands = []
        for steps in range(1, case.metadata["max_steps"] + 1):  # noqa: B007 - the count is reported
            reply = await ctx.call(
                messages, extra_body={"tools": [RUN_SHELL], "tool_choice": "auto"}
            )
            messages.append(assistant_message(reply))
            if not reply.tool_calls:
                break
            for call in messages[-1]["tool_calls"]:
                arguments = parse_arguments(call)
                command = (arguments or {}).get("command")
                if not isinstance(command, str) or not command.strip():
                    messages.append(tool_message(call, "error: run_shell needs a 'command' string"))
                    continue
                commands.append(command)
                run = await ctx.run_shell(command)
                messages.append(
                    tool_message(
                        call, _observation(run.status, run.exit_code, run.stdout, run.stderr)
                    )
                )
        ctx.seed_files(case.metadata.get("verifier_files") or {})
        verdict = await ctx.run_shell(case.metadata["verifier"], timeout_s=60.0)
        reward = 1 if verdict.ok else 0
        return Grade(
            correct=reward == 1,
            answer=None,
            details={
                "grader_version": GRADER_VERSION,
                "reward": reward,
                "steps": steps,
                "commands": len(commands),
                "verifier": {
                    "status": verdict.status,
                    "exit_code": verdict.exit_code,
                    "stdout": verdict.stdout[-500:],
                },
                "answer_status": "answered",
            },
        )

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        return {"kind": "terminal", "commands": case.metadata.get("reference_commands") or []}
