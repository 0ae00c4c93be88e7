"""Offline regrade and training-matrix export on rows built in memory (no store, no network)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_srbench.core.grading.mcq import GRADER_VERSION
from pytest_srbench.core.models import Case, Cell, DatasetInfo, Manifest, Message, Run
from pytest_srbench.core.offline.ops import (
    GridGrader,
    McqGrader,
    OfflineError,
    Regraded,
    regrade,
    training_matrix,
)
from tests.core.helpers import call, case, manifest, result, target

GRADERS = {
    "mmlu-pro": McqGrader(),
    "gpqa-diamond": McqGrader(),
    "arc-agi-2": GridGrader("sr-bench-grid-exact-v1"),
}
TARGETS = [target("t-a"), target("t-b")]


def run_of(plan: Manifest, status: str = "completed", **extra: Any) -> Run:
    return Run(
        id="run-off",
        status=status,
        created_at="2026-11-30T00:00:00+00:00",
        updated_at="2026-11-30T00:00:10+00:00",
        plan_sha256=plan.plan_sha256,
        **extra,
    )


def smoke_plan(cases: list[Case], **extra: Any) -> Manifest:
    dataset = extra.pop("dataset", DatasetInfo(profile="smoke", seed=20260918))
    return manifest(cases, TARGETS, dataset=dataset, **extra)


def cell_rows(
    plan: Manifest, finals: dict[tuple[str, str], str], saved: dict[tuple[str, str], bool]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One completed result and one completed subject call per planned cell."""
    results, calls = [], []
    for cell in plan.planned_cells():
        key = (cell.case_id, cell.target_id)
        results.append(
            result(
                *key,
                correct=saved[key],
                answer=None,
                score=int(saved[key]),
                benchmark=cell.case_id.split("/")[0],
                subject_latency_s=0.5,
                usage=call(*key)["usage"],
                cost_usd=0.002,
                details={"grader_version": "sr-bench-mcq-final-v1", "answer_status": "answered"},
            )
        )
        calls.append(call(*key, final=finals[key], output_complete=True))
    return results, calls


def grid_case(native: str, expected: list[list[list[int]]]) -> Case:
    return Case(
        id=f"arc-agi-2/{native}",
        benchmark="arc-agi-2",
        messages=[Message(role="user", content="grids")],
        answer=expected,
        metadata={"output_format": "grids", "tests": len(expected)},
    )


# -- regrade ------------------------------------------------------------------------------------


def test_a_grader_change_flips_the_cells_it_reads_differently():
    plan = smoke_plan([case("mmlu-pro", "q1", "B"), case("mmlu-pro", "q2", "A")])
    finals = {
        ("mmlu-pro/q1", "t-a"): "The answer is B or C",  # now ambiguous
        ("mmlu-pro/q1", "t-b"): "B",
        ("mmlu-pro/q2", "t-a"): "Working... \\boxed{A}",  # now read as A
        ("mmlu-pro/q2", "t-b"): "C",
    }
    saved = {
        ("mmlu-pro/q1", "t-a"): True,  # an older, lenient grader took the first letter
        ("mmlu-pro/q1", "t-b"): True,
        ("mmlu-pro/q2", "t-a"): False,  # an older grader ignored \boxed
        ("mmlu-pro/q2", "t-b"): False,
    }
    results, calls = cell_rows(plan, finals, saved)
    artifact = regrade(plan, run_of(plan), results, calls, GRADERS)
    assert artifact["kind"] == "offline-regrade" and artifact["model_requests"] == 0
    assert artifact["source_run_id"] == "run-off"
    assert artifact["source_plan_sha256"] == plan.plan_sha256
    assert artifact["grader_version"] == GRADER_VERSION
    assert artifact["grader_versions"] == {"mmlu-pro": GRADER_VERSION}
    rows = {(row["case_id"], row["target_id"]): row for row in artifact["results"]}
    flipped = rows[("mmlu-pro/q1", "t-a")]
    assert flipped["previous_correct"] is True and flipped["correct"] is False
    assert flipped["answer_status"] == "ambiguous" and flipped["answer"] is None
    assert flipped["changed"] is True
    assert flipped["previous_grader_version"] == "sr-bench-mcq-final-v1"
    boxed = rows[("mmlu-pro/q2", "t-a")]
    assert boxed["previous_correct"] is False and boxed["correct"] is True
    assert boxed["answer"] == "A" and boxed["changed"] is True
    assert not rows[("mmlu-pro/q1", "t-b")]["changed"]
    assert not rows[("mmlu-pro/q2", "t-b")]["changed"]
    assert artifact["changed_count"] == 2
    assert [(row["case_id"], row["target_id"]) for row in artifact["results"]] == [
        (cell.case_id, cell.target_id) for cell in plan.planned_cells()
    ]


def test_the_graders_passed_in_are_the_ones_used():
    class Strict:
        version = "strict-v9"

        def grade(self, case: Case, final: str) -> Regraded:
            return Regraded(correct=final == case.answer, answer=final, answer_status="answered")

    plan = smoke_plan([case("mmlu-pro", "q1", "B")])
    finals = {("mmlu-pro/q1", "t-a"): "B", ("mmlu-pro/q1", "t-b"): "**B**"}
    saved = dict.fromkeys(finals, True)
    results, calls = cell_rows(plan, finals, saved)
    artifact = regrade(plan, run_of(plan), results, calls, {"mmlu-pro": Strict()})
    assert artifact["grader_version"] == "strict-v9"
    assert [row["changed"] for row in artifact["results"]] == [False, True]
    assert artifact["changed_count"] == 1


def test_grid_cells_are_regraded_by_exact_match():
    expected = [[[1, 0], [0, 1]]]
    plan = smoke_plan([grid_case("g1", expected), case("mmlu-pro", "q1", "A")])
    finals = {
        ("arc-agi-2/g1", "t-a"): "```json\n[[[1,0],[0,1]]]\n```",
        ("arc-agi-2/g1", "t-b"): "[[1,0],[0,2]]",
        ("mmlu-pro/q1", "t-a"): "A",
        ("mmlu-pro/q1", "t-b"): "A",
    }
    saved = dict.fromkeys(finals, True)
    saved[("arc-agi-2/g1", "t-b")] = False
    results, calls = cell_rows(plan, finals, saved)
    artifact = regrade(plan, run_of(plan), results, calls, GRADERS)
    rows = {(row["case_id"], row["target_id"]): row for row in artifact["results"]}
    assert rows[("arc-agi-2/g1", "t-a")]["answer"] == expected
    assert rows[("arc-agi-2/g1", "t-a")]["correct"] is True
    assert rows[("arc-agi-2/g1", "t-b")]["correct"] is False
    assert artifact["changed_count"] == 0
    assert artifact["grader_versions"] == {
        "arc-agi-2": "sr-bench-grid-exact-v1",
        "mmlu-pro": GRADER_VERSION,
    }
    assert artifact["grader_version"] == f"sr-bench-grid-exact-v1+{GRADER_VERSION}"


@pytest.mark.parametrize(
    ("call_extra", "details"),
    [
        (
            {"finish_reason": "length", "output_complete": False},
            {"quality_failure": "output_limit"},
        ),
        ({"finish_reason": "length"}, {}),
        ({}, {"quality_failure": "output_limit"}),
    ],
)
def test_a_truncated_answer_stays_incorrect(call_extra, details):
    plan = manifest([case("mmlu-pro", "q1", "A")], [target("t-a")])
    row = result("mmlu-pro/q1", "t-a", correct=False, details=details)
    receipt = call("mmlu-pro/q1", "t-a", final="A", **call_extra)
    assert McqGrader().grade(plan.cases[0], "A").correct  # the text alone would pass
    artifact = regrade(plan, run_of(plan), [row], [receipt], GRADERS)
    (regraded,) = artifact["results"]
    assert regraded["correct"] is False and regraded["changed"] is False
    assert regraded["answer"] == "A" and regraded["quality_failure"] == "output_limit"


@pytest.mark.parametrize("benchmark", ["simpleqa-verified", "hle"])
def test_regrade_of_a_run_with_a_judged_benchmark_is_rejected(benchmark):
    plan = manifest([case("mmlu-pro", "q1"), case(benchmark, "j1")], [target("t-a")])
    with pytest.raises(OfflineError, match="judged benchmarks is rejected") as caught:
        regrade(plan, run_of(plan), [], [], GRADERS)
    assert benchmark in str(caught.value)


def test_an_unknown_benchmark_with_judge_calls_counts_as_judged():
    plan = manifest([case("my-qa", "j1")], [target("t-a")])
    calls = [call("my-qa/j1", "t-a"), call("my-qa/j1", "t-a", role="judge")]
    with pytest.raises(OfflineError, match=r"judged benchmarks is rejected \(my-qa\)"):
        regrade(plan, run_of(plan), [], calls, GRADERS)


@pytest.mark.parametrize(
    ("benchmark", "message"),
    [
        ("livecodebench", "livecodebench is a code benchmark"),
        ("tau3", "tau3 is an agent benchmark"),
        ("my-quiz", "my-quiz has no offline grader"),
    ],
)
def test_code_agent_and_unknown_benchmarks_are_rejected(benchmark, message):
    plan = manifest([case(benchmark, "x1")], [target("t-a")])
    with pytest.raises(OfflineError, match=f"only MCQ and grid benchmarks; {message}"):
        regrade(plan, run_of(plan), [], [], GRADERS)


@pytest.mark.parametrize("count", [0, 2])
def test_a_cell_needs_exactly_one_completed_subject_call(count):
    plan = manifest([case("mmlu-pro", "q1")], [target("t-a")])
    rows = [result("mmlu-pro/q1", "t-a")]
    calls = [call("mmlu-pro/q1", "t-a", final="A", id=f"call-{i}") for i in range(count)] + [
        call("mmlu-pro/q1", "t-a", final="A", id="call-failed", status="failed")
    ]
    with pytest.raises(OfflineError) as caught:
        regrade(plan, run_of(plan), rows, calls, GRADERS)
    assert f"cell mmlu-pro/q1 × t-a has {count}" in str(caught.value)
    assert "exactly one completed subject call" in str(caught.value)


def test_a_failed_attempt_before_the_completed_call_is_fine():
    plan = manifest([case("mmlu-pro", "q1")], [target("t-a")])
    calls = [
        call("mmlu-pro/q1", "t-a", id="call-1", status="failed", final=None),
        call("mmlu-pro/q1", "t-a", id="call-2", final="A"),
    ]
    artifact = regrade(plan, run_of(plan), [result("mmlu-pro/q1", "t-a")], calls, GRADERS)
    assert artifact["results"][0]["call_id"] == "call-2"
    assert artifact["changed_count"] == 0


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([], "cell mmlu-pro/q1 × t-a has no saved result"),
        (
            [result("mmlu-pro/q1", "t-a", status="failed", correct=None)],
            "cell mmlu-pro/q1 × t-a is failed",
        ),
    ],
)
def test_every_planned_cell_needs_a_completed_result(rows, message):
    plan = manifest([case("mmlu-pro", "q1")], [target("t-a")])
    with pytest.raises(OfflineError, match=message):
        regrade(plan, run_of(plan), rows, [call("mmlu-pro/q1", "t-a", final="A")], GRADERS)


@pytest.mark.parametrize("status", ["failed", "cancelled", "interrupted", "running"])
def test_only_a_completed_run_is_regraded_or_exported(status):
    plan = smoke_plan([case("mmlu-pro", "q1")])
    run = run_of(plan, status=status)
    with pytest.raises(
        OfflineError, match=f"requires a completed live run; run run-off is {status}"
    ):
        regrade(plan, run, [], [], GRADERS)
    with pytest.raises(OfflineError, match="training export requires a completed live run"):
        training_matrix(plan, run, [], [])


def test_a_preview_plan_or_a_foreign_manifest_is_refused():
    plan = smoke_plan([case("mmlu-pro", "q1")])
    preview = plan.model_copy(update={"mode": "preview"})
    with pytest.raises(OfflineError, match="is a preview run"):
        regrade(preview, run_of(plan), [], [], GRADERS)
    other = run_of(plan).model_copy(update={"plan_sha256": "f" * 64})
    with pytest.raises(OfflineError, match="is bound to plan ffffffffffff"):
        training_matrix(plan, other, [], [])


# -- training-matrix export ---------------------------------------------------------------------


def test_the_training_matrix_holds_every_case_and_target():
    plan = smoke_plan([case("mmlu-pro", "q1", "B"), case("gpqa-diamond", "g1", "C")])
    finals = {(c.case_id, c.target_id): "B" for c in plan.planned_cells()}
    saved = {key: key[0] == "mmlu-pro/q1" for key in finals}
    results, calls = cell_rows(plan, finals, saved)
    matrix = training_matrix(plan, run_of(plan), results, calls)
    assert matrix["kind"] == "training-matrix" and matrix["split"] == "dev"
    assert matrix["model_requests"] == 0 and matrix["accounting_correction"] is None
    assert matrix["source_run_id"] == "run-off"
    assert matrix["source_plan_sha256"] == plan.plan_sha256
    assert [row["case_id"] for row in matrix["cases"]] == ["mmlu-pro/q1", "gpqa-diamond/g1"]
    first = matrix["cases"][0]
    assert first["benchmark"] == "mmlu-pro" and first["reference_answer"] == "B"
    assert first["messages"] == [{"role": "user", "content": "question q1"}]
    assert set(first["targets"]) == {"t-a", "t-b"}
    cell = first["targets"]["t-a"]
    assert cell == {
        "answer": None,
        "correct": True,
        "score": 1,
        "usage": call("x", "y")["usage"],
        "cost_usd": 0.002,
        "subject_latency_s": 0.5,
        "final": "B",
    }
    assert matrix["cases"][1]["targets"]["t-b"]["correct"] is False


def test_an_accounting_correction_replaces_usage_and_cost():
    plan = smoke_plan([case("mmlu-pro", "q1")])
    finals = {(c.case_id, c.target_id): "A" for c in plan.planned_cells()}
    results, calls = cell_rows(plan, finals, dict.fromkeys(finals, True))
    fixed = {
        "input_tokens": 7,
        "cached_input_tokens": 1,
        "cache_write_tokens": 0,
        "output_tokens": 1,
    }
    correction = {
        "id": "accounting-abc",
        "run_id": "run-off",
        "version": "sr-bench-accounting-v1",
        "calls": [
            {"call_id": calls[0]["id"], "usage": fixed, "cost_usd": 0.001, "verified": True},
            {"call_id": calls[1]["id"], "usage": None, "cost_usd": None, "verified": False},
        ],
    }
    matrix = training_matrix(plan, run_of(plan), results, calls, correction)
    assert matrix["accounting_correction"] == {
        "id": "accounting-abc",
        "run_id": "run-off",
        "version": "sr-bench-accounting-v1",
    }
    targets = matrix["cases"][0]["targets"]
    assert targets["t-a"]["usage"] == fixed and targets["t-a"]["cost_usd"] == 0.001
    assert targets["t-b"]["usage"] is None and targets["t-b"]["cost_usd"] is None
    foreign = {**correction, "run_id": "run-other"}
    with pytest.raises(OfflineError, match="belongs to run run-other"):
        training_matrix(plan, run_of(plan), results, calls, foreign)


def test_export_of_a_standard_profile_run_is_refused():
    standard = manifest(
        [case("mmlu-pro", "q1")],
        [target("t-a")],
        dataset=DatasetInfo(profile="standard", seed=20260918),
    )
    with pytest.raises(OfflineError, match=r"standard-profile \(holdout\) run is rejected"):
        training_matrix(standard, run_of(standard), [], [])


def test_export_of_a_holdout_case_is_refused():
    held = Case(
        id="mmlu-pro/h1",
        benchmark="mmlu-pro",
        messages=[Message(role="user", content="q")],
        answer="A",
        metadata={"letters": "ABCD", "split": "holdout"},
    )
    plan = smoke_plan([case("mmlu-pro", "q1"), held])
    with pytest.raises(OfflineError, match="case mmlu-pro/h1 belongs to the holdout split"):
        training_matrix(plan, run_of(plan), [], [])


def test_export_of_an_unknown_profile_is_refused():
    plan = smoke_plan(
        [case("mmlu-pro", "q1")], dataset=DatasetInfo(profile="custom", seed=20260918)
    )
    with pytest.raises(OfflineError, match="profile 'custom' has no dev split"):
        training_matrix(plan, run_of(plan), [], [])


def test_export_of_a_recovery_child_is_refused():
    child = smoke_plan([case("mmlu-pro", "q1")], recovery={"parent_run_id": "run-parent"})
    with pytest.raises(OfflineError, match=r"recovery child is rejected .*recovers run-parent"):
        training_matrix(child, run_of(child), [], [])
    plain = smoke_plan([case("mmlu-pro", "q1")])
    with pytest.raises(OfflineError, match="recovery child is rejected"):
        training_matrix(plain, run_of(plain, parent_run_id="run-parent"), [], [])


def test_export_of_a_partial_rectangle_is_refused():
    plan = smoke_plan(
        [case("mmlu-pro", "q1"), case("mmlu-pro", "q2")],
        execution_cells=[
            Cell(case_id="mmlu-pro/q1", target_id="t-a"),
            Cell(case_id="mmlu-pro/q2", target_id="t-b"),
        ],
    )
    assert plan.execution_cells is not None
    with pytest.raises(OfflineError, match="full case × target rectangle"):
        training_matrix(plan, run_of(plan), [], [])


def test_export_needs_a_completed_result_for_every_cell():
    plan = smoke_plan([case("mmlu-pro", "q1")])
    finals = {(c.case_id, c.target_id): "A" for c in plan.planned_cells()}
    results, calls = cell_rows(plan, finals, dict.fromkeys(finals, True))
    with pytest.raises(OfflineError, match="cell mmlu-pro/q1 × t-b has no saved result"):
        training_matrix(plan, run_of(plan), results[:1], calls)
