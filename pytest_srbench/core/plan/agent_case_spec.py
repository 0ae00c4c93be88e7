"""What one agent case requires of a run (pure): ``AgentCaseSpec`` and the tool calls it
expects (``ExpectedToolCall``). A planned agent case gives its spec
(``core.plan.datasets.AgentCase.spec``); the rule judge (``core.report.agent_metrics``) checks
a run's transcript against it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict


class ExpectedToolCall(TypedDict):
    """A call the case expects: the tool and the arguments it declares (only those are checked)."""

    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class AgentCaseSpec:
    """What one agent case requires of a run."""

    case_id: str
    expected_tool_calls: list[ExpectedToolCall] = field(default_factory=list)
    required_substrings: list[str] = field(default_factory=list)
    required_citations: list[str] = field(default_factory=list)
    expected_task_count: int | None = None
