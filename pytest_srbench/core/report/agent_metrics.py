"""Deterministic judging of one tool-using agent run against its case's spec
(``core.plan.agent_case_spec.AgentCaseSpec``), and the aggregate (pure).

No LLM judge. A case succeeds only if every rule holds; ``reasons`` lists each broken rule in
this order, with stable wording:

1. The run ended ``completed``: else ``"run did not complete (STATUS)"``.
2. Made calls match expected calls one to one by tool name (see matching): each unmatched
   expected call gives ``"missing tool call NAME"``, each unmatched made call
   ``"extra tool call NAME"``.
3. Each made call is valid (known tool, arguments parsed and accepted): else
   ``"invalid tool call NAME (invalid JSON arguments)"`` when ``arguments`` is None, or
   ``"invalid tool call NAME"``.
4. Each matched pair's declared arguments match: else ``"arguments differ for NAME: K1, K2"``
   (the declared keys that are absent or differ, in declared order; not reported for calls
   whose arguments are None, rule 3 covers them).
5. Each tool result succeeded: else ``"tool result failed: NAME (ERROR)"``.
6. Each required substring occurs in ``final_output``, compared case-insensitively
   (``str.casefold``): else ``"output lacks 'S'"``.
7. Each required citation ID occurs in ``final_output`` as ``[ID]``, ``[note:ID]`` or
   ``[block:ID]`` (exact, case-sensitive): else ``"citation missing: ID"``.
8. When ``expected_task_count`` is not None, the successful ``create_task`` results (n) and the
   transcript's ``created_tasks`` both equal it: else ``"task count n != EXPECTED"`` and
   ``"created tasks CREATED != EXPECTED"``.

Arguments: only the keys an expected call declares are checked. Both values are canonicalised
(strings stripped at every depth, integral floats as ints, keys sorted; ``true`` stays distinct
from ``1``) and compared as canonical JSON; a value that has no JSON form never matches.

Matching: only calls with the same tool name can pair. Within one name, the matching has the
largest possible size (min of expected and made) and, among those, the most pairs whose
declared arguments match (augmenting paths over argument-matching pairs first, then the rest
paired in call order). A pair is ``argument_correct`` only if the call is valid, its arguments
parsed and the declared arguments match.

Aggregate: ``success_rate`` = succeeded / ``total_cases`` (unevaluated cases count as not
succeeded); ``tool_selection_accuracy`` = Σ selected_correctly / Σ expected_calls;
``argument_accuracy`` = Σ argument_correct / Σ argument_checked; ``invalid_call_rate`` =
Σ invalid_calls / Σ calls_made; each null when its denominator is 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

from pytest_srbench.core.canonical import canonical_json, integralize
from pytest_srbench.core.plan.agent_case_spec import AgentCaseSpec, ExpectedToolCall

CREATE_TASK_TOOL = "create_task"


class ToolCallRecord(TypedDict):
    """A call the agent made, in call order."""

    name: str
    arguments: dict[str, Any] | None  # None: the arguments were not valid JSON
    valid: bool  # a known tool with accepted arguments
    result_ok: bool
    error: NotRequired[str | None]


@dataclass(frozen=True)
class AgentTranscript:
    """What one agent run did: its end status, its calls, its final output."""

    status: str
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    final_output: str = ""
    created_tasks: int = 0


_NO_JSON = object()


def _canonical(value: Any) -> str | object:
    def strip(item: Any) -> Any:
        if isinstance(item, str):
            return item.strip()
        if isinstance(item, Mapping):
            return {key: strip(inner) for key, inner in item.items()}
        if isinstance(item, list | tuple):
            return [strip(inner) for inner in item]
        return item

    try:
        return canonical_json(integralize(strip(value)))
    except (TypeError, ValueError):
        return _NO_JSON


def differing_arguments(declared: Mapping[str, Any], made: Mapping[str, Any] | None) -> list[str]:
    """The declared keys whose made value is absent or differs (all of them when ``made`` is None)."""
    if made is None:
        return list(declared)
    differ = []
    for key, want in declared.items():
        want_json = _canonical(want)
        if key not in made or want_json is _NO_JSON or _canonical(made[key]) != want_json:
            differ.append(key)
    return differ


def _augment(exp: int, edges: list[list[int]], owner: dict[int, int], visited: set[int]) -> bool:
    for made in edges[exp]:
        if made in visited:
            continue
        visited.add(made)
        if made not in owner or _augment(owner[made], edges, owner, visited):
            owner[made] = exp
            return True
    return False


def match_calls(
    expected: Sequence[ExpectedToolCall], made: Sequence[ToolCallRecord]
) -> list[tuple[int, int]]:
    """One-to-one (expected index, made index) pairs of the same tool name, sorted by expected
    index: maximum size, and among maximum matchings the most argument-matching pairs."""
    pairs: list[tuple[int, int]] = []
    for name in dict.fromkeys(call["name"] for call in expected):
        exp_idx = [i for i, call in enumerate(expected) if call["name"] == name]
        made_idx = [j for j, call in enumerate(made) if call["name"] == name]
        edges = [
            [
                j
                for j in made_idx
                if not differing_arguments(expected[i]["arguments"], made[j]["arguments"])
            ]
            for i in exp_idx
        ]
        owner: dict[int, int] = {}  # made index -> position in exp_idx
        for pos in range(len(exp_idx)):
            _augment(pos, edges, owner, set())
        taken = {pos: j for j, pos in owner.items()}
        free_made = [j for j in made_idx if j not in owner]
        for pos in range(len(exp_idx)):
            if pos not in taken and free_made:
                taken[pos] = free_made.pop(0)
        pairs.extend((exp_idx[pos], j) for pos, j in taken.items())
    return sorted(pairs)


def _cited(output: str, citation: str) -> bool:
    return any(f"[{prefix}{citation}]" in output for prefix in ("", "note:", "block:"))


def judge_agent_case(spec: AgentCaseSpec, transcript: AgentTranscript) -> dict[str, Any]:
    """``case_id``, ``status``, ``succeeded``, ``reasons`` and the counts the aggregate sums:
    ``expected_calls``, ``selected_correctly``, ``argument_checked``, ``argument_correct``,
    ``calls_made``, ``invalid_calls``."""
    reasons: list[str] = []
    calls = transcript.tool_calls
    expected = spec.expected_tool_calls
    if transcript.status != "completed":
        reasons.append(f"run did not complete ({transcript.status})")
    pairs = match_calls(expected, calls)
    matched_expected = {i for i, _ in pairs}
    matched_made = {j for _, j in pairs}
    reasons.extend(
        f"missing tool call {call['name']}"
        for i, call in enumerate(expected)
        if i not in matched_expected
    )
    reasons.extend(
        f"extra tool call {call['name']}" for j, call in enumerate(calls) if j not in matched_made
    )
    invalid = [call["arguments"] is None or not call["valid"] for call in calls]
    for call, bad in zip(calls, invalid, strict=True):
        if bad:
            detail = " (invalid JSON arguments)" if call["arguments"] is None else ""
            reasons.append(f"invalid tool call {call['name']}{detail}")
    argument_correct = 0
    for i, j in pairs:
        differ = differing_arguments(expected[i]["arguments"], calls[j]["arguments"])
        if differ and calls[j]["arguments"] is not None:
            reasons.append(f"arguments differ for {calls[j]['name']}: {', '.join(differ)}")
        argument_correct += not differ and not invalid[j]
    for call in calls:
        if not call["result_ok"]:
            reasons.append(
                f"tool result failed: {call['name']} ({call.get('error') or 'unknown error'})"
            )
    output = transcript.final_output
    folded = output.casefold()
    reasons.extend(
        f"output lacks {text!r}"
        for text in spec.required_substrings
        if text.casefold() not in folded
    )
    reasons.extend(
        f"citation missing: {cite}" for cite in spec.required_citations if not _cited(output, cite)
    )
    if spec.expected_task_count is not None:
        made_tasks = sum(1 for c in calls if c["name"] == CREATE_TASK_TOOL and c["result_ok"])
        if made_tasks != spec.expected_task_count:
            reasons.append(f"task count {made_tasks} != {spec.expected_task_count}")
        if transcript.created_tasks != spec.expected_task_count:
            reasons.append(
                f"created tasks {transcript.created_tasks} != {spec.expected_task_count}"
            )
    return {
        "case_id": spec.case_id,
        "status": transcript.status,
        "succeeded": not reasons,
        "reasons": reasons,
        "expected_calls": len(expected),
        "selected_correctly": len(pairs),
        "argument_checked": len(pairs),
        "argument_correct": argument_correct,
        "calls_made": len(calls),
        "invalid_calls": sum(invalid),
    }


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


AGENT_TOTALS = ("expected_calls", "selected_correctly", "argument_checked", "argument_correct",
                "calls_made", "invalid_calls")  # fmt: skip


class AgentTotals:
    """``aggregate_agent`` one judged case at a time (running integer totals)."""

    def __init__(self) -> None:
        self.evaluated = 0
        self.succeeded = 0
        self.totals = dict.fromkeys(AGENT_TOTALS, 0)

    def add(self, item: Mapping[str, Any]) -> None:
        self.evaluated += 1
        self.succeeded += bool(item["succeeded"])
        for key in AGENT_TOTALS:
            self.totals[key] += int(item[key])

    def aggregate(self, total_cases: int) -> dict[str, Any]:
        if total_cases < self.evaluated:
            raise ValueError(f"{self.evaluated} judged cases exceed total_cases {total_cases}")
        totals = self.totals
        return {
            "total_cases": total_cases,
            "evaluated_cases": self.evaluated,
            "succeeded_cases": self.succeeded,
            "success_rate": _ratio(self.succeeded, total_cases),
            "tool_selection_accuracy": _ratio(
                totals["selected_correctly"], totals["expected_calls"]
            ),
            "argument_accuracy": _ratio(totals["argument_correct"], totals["argument_checked"]),
            "invalid_call_rate": _ratio(totals["invalid_calls"], totals["calls_made"]),
            "expected_calls": totals["expected_calls"],
            "argument_checked": totals["argument_checked"],
            "calls_made": totals["calls_made"],
        }


def aggregate_agent(judged: Sequence[Mapping[str, Any]], total_cases: int) -> dict[str, Any]:
    """Totals over judged cases (``judge_agent_case`` results) out of ``total_cases`` planned.

    Keys: ``total_cases``, ``evaluated_cases``, ``succeeded_cases``, ``success_rate``,
    ``tool_selection_accuracy``, ``argument_accuracy``, ``invalid_call_rate`` and their
    denominators ``expected_calls``, ``argument_checked``, ``calls_made``.
    """
    if total_cases < len(judged):
        raise ValueError(f"{len(judged)} judged cases exceed total_cases {total_cases}")
    totals = AgentTotals()
    for item in judged:
        totals.add(item)
    return totals.aggregate(total_cases)
