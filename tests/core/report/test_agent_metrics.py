"""Agent judging by rules only: one-to-one tool matching, arguments, results, output, tasks."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_srbench.core.plan.agent_case_spec import AgentCaseSpec, ExpectedToolCall
from pytest_srbench.core.report.agent_metrics import (
    AgentTranscript,
    ToolCallRecord,
    aggregate_agent,
    differing_arguments,
    judge_agent_case,
    match_calls,
)


def expect(name: str, **arguments: Any) -> ExpectedToolCall:
    return {"name": name, "arguments": arguments}


def made(
    name: str,
    arguments: dict[str, Any] | None = None,
    *,
    valid: bool = True,
    ok: bool = True,
    error: str | None = None,
) -> ToolCallRecord:
    return {
        "name": name,
        "arguments": {} if arguments is None and valid else arguments,
        "valid": valid,
        "result_ok": ok,
        "error": error,
    }


SPEC = AgentCaseSpec(
    case_id="a1",
    expected_tool_calls=[
        expect("search_notes", query="budget"),
        expect("read_note", note_id="n03"),
    ],
    required_substrings=["Friday"],
    required_citations=["n03"],
)
GOOD_CALLS = [
    made("search_notes", {"query": "  budget ", "limit": 5}),  # undeclared key, padded string
    made("read_note", {"note_id": "n03"}),
]
GOOD_OUTPUT = "The budget is due on friday [note:n03]."


def judge(
    calls: list[ToolCallRecord], output: str = GOOD_OUTPUT, spec: AgentCaseSpec = SPEC, **kw: Any
) -> dict[str, Any]:
    return judge_agent_case(
        spec,
        AgentTranscript(kw.get("status", "completed"), calls, output, kw.get("created_tasks", 0)),
    )


def test_a_clean_run_succeeds_with_its_counts():
    assert judge(GOOD_CALLS) == {
        "case_id": "a1",
        "status": "completed",
        "succeeded": True,
        "reasons": [],
        "expected_calls": 2,
        "selected_correctly": 2,
        "argument_checked": 2,
        "argument_correct": 2,
        "calls_made": 2,
        "invalid_calls": 0,
    }


def test_extra_call():
    result = judge([*GOOD_CALLS, made("read_note", {"note_id": "n09"})])
    assert result["reasons"] == ["extra tool call read_note"]
    assert (result["selected_correctly"], result["argument_correct"], result["calls_made"]) == (
        2,
        2,
        3,
    )


def test_missing_call():
    result = judge(GOOD_CALLS[1:])
    assert result["reasons"] == ["missing tool call search_notes"]
    assert (result["expected_calls"], result["selected_correctly"]) == (2, 1)


def test_argument_mismatch():
    result = judge([GOOD_CALLS[0], made("read_note", {"note_id": "n04"})])
    assert result["reasons"] == ["arguments differ for read_note: note_id"]
    # both selected (2/2), one of the two matched pairs has the declared arguments right
    assert (
        result["selected_correctly"],
        result["argument_checked"],
        result["argument_correct"],
    ) == (2, 2, 1)


def test_duplicate_expected_calls_match_one_to_one_preferring_argument_matches():
    spec = AgentCaseSpec(
        "a2", [expect("read_note", note_id="n01"), expect("read_note", note_id="n02")]
    )
    # made in the other order: pairing in call order would give 0 argument matches, the
    # preferred maximum matching gives 2
    result = judge(
        [made("read_note", {"note_id": "n02"}), made("read_note", {"note_id": "n01"})], spec=spec
    )
    assert result["succeeded"] and result["argument_correct"] == 2
    # one call cannot satisfy two expectations
    result = judge([made("read_note", {"note_id": "n01"})], spec=spec)
    assert result["reasons"] == ["missing tool call read_note"]
    assert (result["selected_correctly"], result["argument_correct"]) == (1, 1)


def test_matching_reassigns_a_loose_expectation_to_free_a_strict_one():
    # expected A declares nothing (matches any read_note), B wants n1; made m0 = n1, m1 = n2.
    # Greedy A->m0 leaves B with m1 (mismatch); the augmenting path gives A->m1, B->m0.
    expected = [expect("read_note"), expect("read_note", note_id="n1")]
    calls = [made("read_note", {"note_id": "n1"}), made("read_note", {"note_id": "n2"})]
    assert match_calls(expected, calls) == [(0, 1), (1, 0)]


def test_invalid_json_arguments_count_as_invalid_and_not_argument_correct():
    result = judge(
        [GOOD_CALLS[0], made("read_note", None, valid=False, ok=False, error="bad json")]
    )
    assert result["reasons"] == [
        "invalid tool call read_note (invalid JSON arguments)",
        "tool result failed: read_note (bad json)",
    ]
    assert (result["selected_correctly"], result["argument_correct"]) == (2, 1)
    assert (result["invalid_calls"], result["calls_made"]) == (1, 2)


def test_rejected_call_with_right_arguments_is_still_not_argument_correct():
    result = judge([GOOD_CALLS[0], made("read_note", {"note_id": "n03"}, valid=False)])
    assert result["reasons"] == ["invalid tool call read_note"]
    assert result["argument_correct"] == 1 and result["invalid_calls"] == 1


def test_failed_tool_result():
    spec = AgentCaseSpec("a3", [expect("create_task", title="Call Bob")])
    calls = [made("create_task", {"title": "Call Bob"}, ok=False, error="permission_denied")]
    assert judge(calls, "", spec=spec)["reasons"] == [
        "tool result failed: create_task (permission_denied)"
    ]
    calls = [made("create_task", {"title": "Call Bob"}, ok=False)]
    assert judge(calls, "", spec=spec)["reasons"] == [
        "tool result failed: create_task (unknown error)"
    ]


def test_required_substrings_are_case_insensitive():
    spec = AgentCaseSpec("a4", required_substrings=["Friday", "Straße", "Monday"])
    # casefold: "FRIDAY" contains "friday", "STRASSE" contains "strasse" ("Straße".casefold())
    assert judge([], "due FRIDAY at the STRASSE office", spec=spec)["reasons"] == [
        "output lacks 'Monday'"
    ]


def test_citation_forms():
    spec = AgentCaseSpec("a5", required_citations=["n03", "n04", "b7", "n05", "n06", "N07"])
    output = "See [n03], [note:n04] and [block:b7]; n05 bare, (n06) in parentheses, [n07]."
    assert judge([], output, spec=spec)["reasons"] == [
        "citation missing: n05",
        "citation missing: n06",
        "citation missing: N07",  # ids compare case-sensitively
    ]


def test_task_count_uses_successful_create_task_results_and_created_tasks():
    spec = AgentCaseSpec("a6", [expect("create_task")] * 2, expected_task_count=1)
    calls = [made("create_task"), made("create_task")]
    # 2 successful create_task results, and the workspace reports 2 created
    assert judge(calls, "", spec=spec, created_tasks=2)["reasons"] == [
        "task count 2 != 1",
        "created tasks 2 != 1",
    ]
    # a failed create_task result is not a task: 1 == 1, only the failure is reported
    calls = [made("create_task"), made("create_task", ok=False, error="quota")]
    assert judge(calls, "", spec=spec, created_tasks=1)["reasons"] == [
        "tool result failed: create_task (quota)"
    ]
    assert judge([], "", spec=AgentCaseSpec("a7"), created_tasks=3)["succeeded"]


def test_unfinished_run_fails_but_keeps_its_counts():
    result = judge(GOOD_CALLS, status="cancelled")
    assert result["reasons"] == ["run did not complete (cancelled)"]
    assert not result["succeeded"] and result["selected_correctly"] == 2


@pytest.mark.parametrize(
    ("declared", "given", "differ"),
    [
        ({"n": 1}, {"n": 1.0}, []),  # integral floats equal ints
        ({"flag": 1}, {"flag": True}, ["flag"]),  # JSON true is not 1
        ({"o": {"a": " x ", "b": [" y"]}}, {"o": {"b": ["y "], "a": "x"}}, []),  # nested strip
        ({"a": "x", "b": "y"}, {"a": "x"}, ["b"]),  # absent key
        ({"v": float("nan")}, {"v": float("nan")}, ["v"]),  # no JSON form: never equal
        ({"a": 1}, None, ["a"]),
    ],
)
def test_differing_arguments(declared, given, differ):
    assert differing_arguments(declared, given) == differ


def test_aggregate_sums_and_rates():
    judged = [
        judge(GOOD_CALLS),  # succeeded; 2 expected, 2 selected, 2/2 args, 2 calls, 0 invalid
        judge(
            [GOOD_CALLS[0], made("read_note", None, valid=False)]
        ),  # 2, 2, 1/2, 2 calls, 1 invalid
        judge([*GOOD_CALLS, made("read_note", {"note_id": "n9"})]),  # 2, 2, 2/2, 3 calls, 0
    ]
    assert aggregate_agent(judged, total_cases=4) == {
        "total_cases": 4,
        "evaluated_cases": 3,
        "succeeded_cases": 1,
        "success_rate": 0.25,  # 1 / 4: the unevaluated case counts as not succeeded
        "tool_selection_accuracy": 1.0,  # 6 / 6
        "argument_accuracy": 5 / 6,  # (2 + 1 + 2) / 6
        "invalid_call_rate": 1 / 7,  # 1 / (2 + 2 + 3)
        "expected_calls": 6,
        "argument_checked": 6,
        "calls_made": 7,
    }


def test_aggregate_null_rules():
    nothing = aggregate_agent([], total_cases=0)
    assert nothing["success_rate"] is None and nothing["evaluated_cases"] == 0
    no_calls = aggregate_agent([judge([], "", spec=AgentCaseSpec("x"))], total_cases=2)
    assert no_calls["success_rate"] == 0.5
    assert no_calls["tool_selection_accuracy"] is None  # no expected call
    assert no_calls["argument_accuracy"] is None  # no matched pair
    assert no_calls["invalid_call_rate"] is None  # no call made
    with pytest.raises(ValueError, match="exceed total_cases"):
        aggregate_agent([judge(GOOD_CALLS)], total_cases=0)
