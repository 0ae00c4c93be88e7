"""Terminal-Bench 2.1: an agent loop in which the subject runs shell commands (a ``run_shell``
tool) up to ``max_steps``; the task's verifier script then decides the reward, and only reward
1 is correct.

Where the commands run: a task whose row declares a ``container`` (its image, or its
Dockerfile and build context) runs in its own Docker container — the verifier's files copied to
``/tests``, ``tests/test.sh`` run there and the reward read from ``/logs/verifier/reward.txt``
(else the script's exit code). When Docker is not usable the cell fails with
``BENCHMARK_CONTAINER_UNAVAILABLE``; it never runs in another environment. A task without a
container runs in the sandbox, in the case's own task directory seeded with its files."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from pytest_srbench.benchmarks.agent_tools import (
    assistant_message,
    function_tool,
    parse_arguments,
    tool_message,
)
from pytest_srbench.benchmarks.base import (
    Adapter,
    CellContext,
    CodeRun,
    Grade,
    SuiteRowError,
    TaskContainer,
    require,
)
from pytest_srbench.core.container_spec import ContainerSpec
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
VERIFIER_TIMEOUT_S = 60.0
TESTS_DIR = "/tests"  # where Terminal-Bench's harness puts tests/ in the container
REWARD_FILE = "/logs/verifier/reward.txt"
RUN_VERIFIER = (
    "mkdir -p /logs/verifier /logs/agent; "
    "if command -v bash >/dev/null 2>&1; then bash /tests/test.sh; else sh /tests/test.sh; fi"
)
Shell = Callable[[str], Awaitable[CodeRun]]


def _observation(status: str, exit_code: int | None, stdout: str, stderr: str) -> str:
    text = f"exit code: {exit_code} ({status})\nstdout:\n{stdout}\nstderr:\n{stderr}"
    return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + "\n…[output truncated]"


class TerminalBenchAdapter(Adapter):
    """Rows: ``task_id``, ``instruction``, ``files``, ``verifier``, optional ``max_steps``,
    ``verifier_timeout_s`` and ``container`` (see ``core.container_spec``)."""

    benchmark = "terminal-bench-2.1"
    body_answer_hint = (
        "its protocol is an agent loop of shell commands in the task's own sandbox or "
        "container, checked by the task's verifier"
    )

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
        container = row.get("container")
        if container is not None:
            try:
                ContainerSpec.from_row(container)
            except ValueError as error:
                raise SuiteRowError(str(error)) from None
        extra: dict[str, Any] = {}  # only what the row declares (older rows keep their hash)
        if container is not None:
            extra["container"] = container
        timeout = row.get("verifier_timeout_s")
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
                raise SuiteRowError("'verifier_timeout_s' must be a positive number of seconds")
            extra["verifier_timeout_s"] = float(timeout)
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
                **extra,
            },
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        case = ctx.case
        if case.metadata.get("container"):
            async with ctx.container(case.metadata["container"]) as box:
                return await self._in_container(ctx, box)
        ctx.seed_files(case.metadata["files"])
        steps, commands = await self._agent(ctx, ctx.run_shell)
        ctx.seed_files(case.metadata.get("verifier_files") or {})
        verdict = await ctx.run_shell(
            case.metadata["verifier"],
            timeout_s=case.metadata.get("verifier_timeout_s", VERIFIER_TIMEOUT_S),
        )
        return _grade(1 if verdict.ok else 0, verdict, steps, commands, None)

    async def _in_container(self, ctx: CellContext, box: TaskContainer) -> Grade:
        meta = ctx.case.metadata
        steps, commands = await self._agent(ctx, box.run)
        await box.put_files(
            {**meta.get("verifier_files", {}), "test.sh": meta["verifier"]}, TESTS_DIR
        )
        verdict = await box.run(
            RUN_VERIFIER, timeout_s=meta.get("verifier_timeout_s", VERIFIER_TIMEOUT_S)
        )
        written = await box.read_text(REWARD_FILE)
        reward = _reward(written) if written is not None else (1 if verdict.ok else 0)
        source = "reward.txt" if written is not None else "exit_code"
        return _grade(reward, verdict, steps, commands, {"name": box.name, "reward_from": source})

    async def _agent(self, ctx: CellContext, shell: Shell) -> tuple[int, int]:
        """The agent loop: (steps taken, commands run)."""
        case = ctx.case
        messages: list[dict[str, Any]] = [m.model_dump() for m in case.messages]
        steps = 0
        commands = 0
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
                commands += 1
                run = await shell(command)
                messages.append(
                    tool_message(
                        call, _observation(run.status, run.exit_code, run.stdout, run.stderr)
                    )
                )
        return steps, commands

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        return {"kind": "terminal", "commands": case.metadata.get("reference_commands") or []}


def _reward(text: str) -> int:
    """Terminal-Bench's reward file: a number, 1 (or more) passes."""
    try:
        return 1 if float(text.strip()) >= 1 else 0
    except ValueError:
        return 0


def _grade(
    reward: int, verdict: CodeRun, steps: int, commands: int, container: dict[str, Any] | None
) -> Grade:
    details: dict[str, Any] = {
        "grader_version": GRADER_VERSION,
        "reward": reward,
        "steps": steps,
        "commands": commands,
        "verifier": {
            "status": verdict.status,
            "exit_code": verdict.exit_code,
            "stdout": verdict.stdout[-500:],
        },
        "answer_status": "answered",
    }
    if container is not None:
        details["container"] = container
    return Grade(correct=reward == 1, answer=None, details=details)
