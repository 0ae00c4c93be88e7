"""RAG benchmarks graded from a test body's answer: the shape of the ranked results, their
scoring (the retrieval path's metrics, mode = the python target's id) and the report's rows."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_srbench.benchmarks.base import Grade, NotGraded
from pytest_srbench.benchmarks.rag import RagAdapter, ranked_results, search_timing
from pytest_srbench.core.models import Case, DatasetInfo, Target
from pytest_srbench.core.report.tasks import rag_mode, rag_section
from tests.core.helpers import manifest

SHAPE = "ranked results (a list of {'note_id': str, 'block_id': str} mappings, best first)"
ROW = {"case_id": "q1", "query": "Which command promotes the replica?",
       "expected_note_ids": ["n01"], "expected_block_ids": ["n01-b3"],
       "citation_required": True}  # fmt: skip
ADAPTER = RagAdapter.for_dataset("rag-smoke")
MINE = Target(id="my-search", kind="python", model="my-search")
FTS = Target(id="sim-rag-fts", kind="retrieval", model="fts", base_url="http://127.0.0.1:9",
             retrieval={"mode": "fts", "top_k": 3})  # fmt: skip


def hit(note: str, block: str, **extra: Any) -> dict[str, Any]:
    return {"note_id": note, "block_id": block, **extra}


@dataclass
class Ctx:
    """The part of a cell's context a RAG grader uses; ``retrieve`` plays a search service."""

    target: Target
    case: Case = field(default_factory=lambda: ADAPTER.render(ROW, 1))
    service_results: list[dict[str, Any]] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)

    async def retrieve(self, query: str) -> tuple[dict[str, Any], float]:
        self.searches.append(query)
        return {"results": self.service_results}, 0.012


def grade(ctx: Ctx, answer: object) -> Grade:
    return asyncio.run(ADAPTER.grade_answer(ctx, answer))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "answer",
    [
        [hit("n01", "n01-b3"), hit("n02", "n02-b1", text="...", score=0.3)],
        (hit("n01", "n01-b3"),),
        {"results": [hit("n01", "n01-b3")], "took_ms": 3},  # a search service's whole answer
        [],  # found nothing: a valid, empty ranking
    ],
)
def test_ranked_results_accepts_mappings_with_note_and_block_ids(answer):
    results = ranked_results("rag-smoke", answer)
    expected = answer["results"] if isinstance(answer, dict) else list(answer)
    assert results == expected


@pytest.mark.parametrize(
    ("answer", "says"),
    [
        ("n01", "the test body returned str"),
        (None, "the test body returned NoneType"),
        ({"hits": []}, "the test body returned dict without a 'results' list"),
        (["n01", "n02"], "result 1 of the test body's answer is a str"),
        ([hit("n01", "n01-b3"), {"note_id": "n02"}],
         "result 2 of the test body's answer has no 'block_id' string"),
        ([{"note_id": 1, "block_id": "n01-b1"}],
         "result 1 of the test body's answer has no 'note_id' string"),
    ],
)  # fmt: skip
def test_anything_else_is_not_graded_with_a_one_line_reason(answer, says):
    with pytest.raises(NotGraded) as refused:
        ranked_results("rag-smoke", answer)
    assert str(refused.value) == f"benchmark 'rag-smoke' grades {SHAPE}; {says}"
    assert "\n" not in str(refused.value)


def test_a_python_targets_results_are_scored_like_a_search_in_its_own_mode():
    # ranks: n04, n01 (cites n01-b3 explicitly), then 4 more; only the first 5 count
    answer = [hit("n04", "n04-b1"), hit("n01", "n01-b1", citations=[{"block_id": "n01-b3"}]),
              *[hit(f"n1{i}", f"n1{i}-b1") for i in range(4)]]  # fmt: skip
    graded = grade(Ctx(MINE), answer)
    rag = graded.details["rag"]
    assert (rag["mode"], rag["top_k"], rag["latency_ms"]) == ("my-search", 5, None)
    assert rag["ranked_note_ids"] == ["n04", "n01", "n10", "n11", "n12"]
    assert rag["cited_block_ids"] == ["n04-b1", "n01-b3", "n10-b1", "n11-b1", "n12-b1"]
    # hit@1 0 (n04), hit@5 1 (n01 at rank 2), recall 1/1, MRR 1/2, cited n01-b3 -> 1
    assert rag["metrics"] == {"hit_at_1": 0.0, "hit_at_5": 1.0, "recall_at_k": 1.0,
                              "mrr": 0.5, "citation_hit": 1.0}  # fmt: skip
    assert graded.correct is True and graded.answer == rag["ranked_note_ids"]


def test_a_miss_is_wrong_not_failed():
    graded = grade(Ctx(MINE), [hit("n02", "n02-b1")])
    assert graded.correct is False
    assert graded.details["rag"]["metrics"]["hit_at_5"] == 0.0


def test_a_returned_search_answer_is_scored_with_its_latency():
    answer = {"results": [hit("n09", "n09-b1"), hit("n01", "n01-b3")], "latency_ms": 12.0}
    graded = grade(Ctx(FTS), answer)  # what srbench_target.search returns for a service
    rag = graded.details["rag"]
    assert (rag["mode"], rag["top_k"], rag["latency_ms"]) == ("fts", 3, 12.0)
    assert rag["ranked_note_ids"] == ["n09", "n01"] and rag["metrics"]["mrr"] == 0.5
    assert grade(Ctx(FTS), {**answer, "latency_ms": True}).details["rag"]["latency_ms"] is None
    with pytest.raises(NotGraded):
        grade(Ctx(FTS), "n01")


def test_the_engines_own_search_refuses_a_python_target():
    with pytest.raises(NotGraded, match="searches only through retrieval targets"):
        asyncio.run(ADAPTER.evaluate(Ctx(MINE)))  # type: ignore[arg-type]


def test_the_mode_of_a_python_target_is_its_id():
    assert rag_mode(MINE) == ("my-search", 5)
    assert rag_mode(FTS) == ("fts", 3)


def test_the_report_has_a_row_in_the_python_targets_own_mode():
    case = ADAPTER.render(ROW, 1)
    plan = manifest(
        [case], [FTS, MINE],
        dataset=DatasetInfo(profile="smoke", seed=1, suites=[
            {"benchmark": "rag-smoke", "kind": "rag", "version": "1", "sha256": "x"}]),
        target_kinds={"rag-smoke": ["retrieval", "python"]},
    )  # fmt: skip
    answered = grade(Ctx(MINE), [hit("n01", "n01-b3")])
    rows = [{"case_id": case.id, "target_id": "my-search", "status": "completed",
             "details": answered.details}]  # fmt: skip
    section = rag_section(plan, rows, None, {})
    assert section is not None
    by_target = {row["target_id"]: row for row in section["rows"]}
    mine, fts = by_target["my-search"], by_target["sim-rag-fts"]
    assert (mine["mode"], mine["top_k"], mine["hit_at_1"], mine["successful_cases"]) == (
        "my-search", 5, 1.0, 1)  # fmt: skip
    assert mine["p50_latency_ms"] is None
    assert (fts["mode"], fts["top_k"], fts["failed_cases"]) == ("fts", 3, 1)  # no result: 0
    snapshot = section["config_snapshot"]
    assert snapshot["modes"] == ["fts"] and snapshot["python_targets"] == ["my-search"]
    assert set(snapshot["retrieval"]) == {"sim-rag-fts"}


@pytest.mark.parametrize(
    ("answer", "timing"),
    [
        ({"took_ms": 3.5, "latency_ms": 5240.0}, (3.5, 5240.0)),  # queued behind other searches
        ({"latency_ms": 40.0}, (40.0, 40.0)),  # a service that does not say its own time
        ({"took_ms": 2, "latency_ms": None}, (2.0, None)),
        ({"took_ms": True, "latency_ms": -1}, (None, None)),
        ({}, (None, None)),
    ],
)
def test_a_search_is_timed_by_the_engine_not_by_its_queue(answer, timing):
    assert search_timing(answer) == timing


def test_the_sample_keeps_both_times():
    answer = {"results": [hit("n01", "n01-b3")], "took_ms": 3.5, "latency_ms": 5240.0}
    rag = grade(Ctx(FTS), answer).details["rag"]
    assert (rag["latency_ms"], rag["request_ms"]) == (3.5, 5240.0)
