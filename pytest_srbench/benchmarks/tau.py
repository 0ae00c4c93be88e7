"""tau3: a tool-using agent serves a user played by a simulator target (role ``simulator``)
in a domain whose tools act on a small database. Correct only when the final database equals
the state the expected actions produce and the agent said every required output (reward 1)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_srbench.benchmarks.agent_tools import assistant_message, parse_arguments, tool_message
from pytest_srbench.benchmarks.base import Adapter, CellContext, Grade, SuiteRowError, require
from pytest_srbench.benchmarks.tau_domains import DOMAINS
from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.models import Case, Message

GRADER_VERSION = "sr-bench-tau-db-v1"
STOP = "###STOP###"
DEFAULT_MAX_STEPS = 30
GREETING = "Hi! How can I help you today?"  # tau2's agent opens every conversation with it
# Used when a row carries no released guidelines (``user_guidelines``): this project's own.
USER_SIMULATOR_GUIDELINES = (
    "You play a customer talking to a service agent. Follow the scenario below. Write only "
    "what the customer says, one message at a time. Do not reveal information before it is "
    f"asked for unless the scenario says so. When your goal is met or cannot be met, reply "
    f"with {STOP}."
)


def user_simulator_prompt(scenario: str, guidelines: str | None) -> str:
    """The user simulator's system prompt as tau2 builds it: the guidelines (its persona
    placeholder left empty), then the scenario text in a ``<scenario>`` block."""
    rules = (guidelines or USER_SIMULATOR_GUIDELINES).replace("<PERSONA_GUIDELINES>", "")
    return f"{rules}\n\n<scenario>\n{scenario}\n</scenario>"


class Tau3Adapter(Adapter):
    """Rows: ``task_id``, ``domain``, ``policy``, ``user_scenario``, ``tools``, ``initial_db`` or
    ``db_asset``, ``expected_actions``, ``required_outputs``, optional ``max_steps``."""

    benchmark = "tau3"
    auxiliary_roles = ("simulator",)
    round_robin = True
    body_answer_hint = (
        "its protocol is a conversation with a simulated user and tool calls on the domain's "
        "database, graded by the database it ends with"
    )

    def stratum(self, row: Mapping[str, Any]) -> str:
        return str(row.get("domain") or "")

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = require(row, "task_id", (str, int))
        domain = require(row, "domain")
        if domain not in DOMAINS:
            raise SuiteRowError(
                f"tau domain {domain!r} has no tool implementation here (tau3 runs "
                f"{', '.join(sorted(DOMAINS))})"
            )
        if "initial_db" not in row and "db_asset" not in row:
            raise SuiteRowError("a tau3 row needs 'initial_db' or 'db_asset'")
        actions = require(row, "expected_actions", list)
        for action in actions:
            if not isinstance(action, dict) or not isinstance(action.get("name"), str):
                raise SuiteRowError("every expected action needs a tool 'name' and 'arguments'")
        scenario = require(row, "user_scenario")
        guidelines = row.get("user_guidelines")
        if guidelines is not None and (not isinstance(guidelines, str) or not guidelines.strip()):
            raise SuiteRowError("'user_guidelines' must be non-empty text when present")
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[  # what the user simulator is sent first (tau2's flipped roles)
                Message(role="system", content=user_simulator_prompt(scenario, guidelines)),
                Message(role="user", content=GREETING),
            ],
            answer=None,
            metadata={
                "domain": domain,
                "policy": require(row, "policy"),
                "tools": list(require(row, "tools", list)),
                "initial_db": row.get("initial_db"),
                "db_asset": row.get("db_asset"),
                "expected_actions": actions,
                "required_outputs": list(row.get("required_outputs") or []),
                "max_steps": int(row.get("max_steps") or DEFAULT_MAX_STEPS),
                "reference_dialogue": row.get("reference_dialogue"),
            },
        )

    def _initial(self, ctx: CellContext) -> dict[str, Any]:
        meta = ctx.case.metadata
        if meta.get("initial_db") is not None:
            return dict(meta["initial_db"])
        return dict(json.loads(ctx.asset(meta["db_asset"])))

    async def evaluate(self, ctx: CellContext) -> Grade:
        meta = ctx.case.metadata
        domain = DOMAINS[meta["domain"]]
        initial = self._initial(ctx)
        state = domain.new_state(initial)
        tools = domain.schemas(meta["tools"])
        user_view: list[dict[str, Any]] = [m.model_dump() for m in ctx.case.messages]
        agent_view: list[dict[str, Any]] = [
            {"role": "system", "content": meta["policy"]},
            {"role": "assistant", "content": GREETING},
        ]
        said: list[str] = []
        calls_made = 0
        failed_calls = 0
        user_turn = await ctx.call(user_view, role="simulator")
        steps = 0
        stopped = False
        while steps < meta["max_steps"] and not stopped:
            if STOP in user_turn.final_text:
                break
            user_view.append({"role": "assistant", "content": user_turn.final_text})
            agent_view.append({"role": "user", "content": user_turn.final_text})
            while steps < meta["max_steps"]:
                steps += 1
                reply = await ctx.call(
                    agent_view, extra_body={"tools": tools, "tool_choice": "auto"}
                )
                agent_view.append(assistant_message(reply))
                if not reply.tool_calls:
                    said.append(reply.final_text)
                    break
                for call in agent_view[-1]["tool_calls"]:
                    arguments = parse_arguments(call)
                    if arguments is None:
                        ok, text = False, "error: arguments are not a JSON object"
                    else:
                        ok, text = state.call(call["function"]["name"], arguments)
                    calls_made += 1
                    failed_calls += 0 if ok else 1
                    agent_view.append(tool_message(call, text))
            else:
                stopped = True
                break
            user_view.append({"role": "user", "content": said[-1] if said else ""})
            user_turn = await ctx.call(user_view, role="simulator")
        expected = domain.new_state(initial)
        for action in meta["expected_actions"]:
            ok, text = expected.call(action["name"], dict(action.get("arguments") or {}))
            if not ok:
                raise CallFailure(
                    f"Benchmark harness: expected action {action['name']} fails on the initial database: {text}"
                )
        db_match = state.snapshot() == expected.snapshot()
        transcript = "\n".join(said).lower()
        missing = [text for text in meta["required_outputs"] if str(text).lower() not in transcript]
        reward = 1 if db_match and not missing else 0
        return Grade(
            correct=reward == 1,
            answer=None,
            details={
                "grader_version": GRADER_VERSION,
                "reward": reward,
                "db_match": db_match,
                "missing_outputs": missing,
                "agent_steps": steps,
                "tool_calls": calls_made,
                "failed_tool_calls": failed_calls,
                "max_steps_reached": stopped,
                "answer_status": "answered",
            },
        )

    def simulator_scripts(self, case: Case) -> list[tuple[Any, dict[str, Any]]]:
        """The user simulator's script (keyed by the scenario) and the agent's (keyed by the
        user's first turn); without a reference dialogue one is derived from the expected
        actions, so the simulator can still play real tasks."""
        meta = case.metadata
        dialogue = meta.get("reference_dialogue") or {}
        turns = list(dialogue.get("user") or [])
        if not turns:
            turns = [
                f"Hello, I need help with task {case.id.split('/', 1)[1]}.",
                "Yes, please go ahead.",
                STOP,
            ]
        plan = list(dialogue.get("agent") or [])
        if not plan:
            plan = [{"tool_calls": [action]} for action in meta["expected_actions"]]
            plan.append(
                {"say": "All done. " + " ".join(str(text) for text in meta["required_outputs"])}
            )
        opening = [m.model_dump(include={"role", "content"}) for m in case.messages]
        return [
            (opening, {"kind": "tau-user", "turns": turns}),
            (turns[0], {"kind": "tau-agent", "plan": plan}),
        ]
