"""A tool-using agent run as the user's own loop reports it (pure): ``AgentRun`` — the final
answer, the tool calls in call order with their arguments and results, and whether the loop
ended on an answer — and the check that turns what a test body returned into one.

An agent benchmark grades the run by its rules (``core/report/agent_metrics.py``); this module
only says what a run looks like and rejects anything else with a one-line reason.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

RUN_KEYS = frozenset({"final_answer", "tool_calls", "completed"})
CALL_KEYS = frozenset({"name", "arguments", "result"})


class AgentRunError(ValueError):
    """What a test body returned is not an agent run; ``str()`` names what it is instead, as
    the object of "the test body returned …" (``str, not an AgentRun …``, ``a run whose …``)."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call the agent made.

    ``arguments`` is the object the tool received, or the model's raw JSON text (text that is
    not a JSON object counts as an invalid call, as it does in the engine's own loop);
    ``result`` is the text the loop fed back to the model (None: not recorded).
    """

    name: str
    arguments: Mapping[str, Any] | str | None = field(default_factory=dict)
    result: str | None = None


@dataclass(frozen=True)
class AgentRun:
    """What one run of an agent did: its final answer, every tool call in call order, and
    ``completed`` — False when the loop stopped without an answer (a step cap)."""

    final_answer: str
    tool_calls: Sequence[ToolCall] = ()
    completed: bool = True


def _kind(value: object) -> str:
    return type(value).__name__


def _tool_call(position: int, value: object) -> ToolCall:
    where = f"a run whose tool call {position}"
    if isinstance(value, Mapping):
        unknown = sorted(str(key) for key in value if key not in CALL_KEYS)
        if unknown:
            raise AgentRunError(
                f"{where} has unknown keys {unknown} (known: name, arguments, result)"
            )
        value = ToolCall(
            name=value.get("name"),  # type: ignore[arg-type]  # checked below
            arguments=value.get("arguments", {}),
            result=value.get("result"),
        )
    if not isinstance(value, ToolCall):
        raise AgentRunError(f"{where} is {_kind(value)}, not a ToolCall or a mapping")
    if not isinstance(value.name, str) or not value.name.strip():
        raise AgentRunError(f"{where} has no tool name")
    where = f"{where} ({value.name})"
    if value.arguments is not None and not isinstance(value.arguments, Mapping | str):
        raise AgentRunError(
            f"{where} has arguments of type {_kind(value.arguments)}, not an object or JSON text"
        )
    if value.result is not None and not isinstance(value.result, str):
        raise AgentRunError(f"{where} has a result of type {_kind(value.result)}, not text")
    return value


def agent_run_of(returned: object) -> AgentRun:
    """``returned`` as a checked ``AgentRun``: an ``AgentRun`` or a mapping with the same keys
    (``final_answer``; optional ``tool_calls``, each a ``ToolCall`` or a mapping with ``name``,
    ``arguments`` and ``result``; optional ``completed``). Tool calls are numbered from 1 in
    the messages; anything else raises ``AgentRunError``."""
    if isinstance(returned, Mapping):
        unknown = sorted(str(key) for key in returned if key not in RUN_KEYS)
        if unknown:
            raise AgentRunError(
                f"a run with unknown keys {unknown} (known: final_answer, tool_calls, completed)"
            )
        if "final_answer" not in returned:
            raise AgentRunError("a run without 'final_answer'")
        returned = AgentRun(
            final_answer=returned["final_answer"],
            tool_calls=returned.get("tool_calls", ()),
            completed=returned.get("completed", True),
        )
    if not isinstance(returned, AgentRun):
        raise AgentRunError(
            f"{_kind(returned)}, not an AgentRun (the final answer and the tool calls)"
        )
    if not isinstance(returned.final_answer, str):
        raise AgentRunError(f"a run whose final_answer is {_kind(returned.final_answer)}, not text")
    if not isinstance(returned.completed, bool):
        raise AgentRunError(f"a run whose completed is {_kind(returned.completed)}, not a bool")
    calls = returned.tool_calls
    if isinstance(calls, str | bytes | Mapping) or not isinstance(calls, Sequence):
        raise AgentRunError(f"a run whose tool_calls are {_kind(calls)}, not a list")
    checked = tuple(_tool_call(position, call) for position, call in enumerate(calls, start=1))
    return AgentRun(final_answer=returned.final_answer, tool_calls=checked,
                    completed=returned.completed)  # fmt: skip
