"""RAG-retrieval benchmarks: each case's query is searched once per cell and the ranked results
are scored by the RAG metrics of ``core/report/rag_metrics.py``. The search is either the
engine's own (one journaled call to a ``retrieval`` target, in the target's frozen mode) or the
user's pipeline, whose ranked results a test body marked with the benchmark returns
(``ranked_results`` says the shape; the sample's mode is the ``python`` target's id).

A cell is "correct" when an expected note is among the first five results (``hit_at_5``); the
report's RAG section carries every metric per mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationError

from pytest_srbench.benchmarks.base import (
    Adapter,
    CellContext,
    Grade,
    NotGraded,
    SuiteRowError,
    one_list_profiles,
)
from pytest_srbench.core.calls.retrieval import cited_block_ids, missing_id
from pytest_srbench.core.models import Case
from pytest_srbench.core.plan.datasets import RagCase
from pytest_srbench.core.report.rag_metrics import sample_metrics
from pytest_srbench.core.report.tasks import rag_mode, rag_sample

GRADER_VERSION = "rag-metrics-v1"
ANSWER_SHAPE = "a list of {'note_id': str, 'block_id': str} mappings, best first"


def ranked_results(benchmark: str, answer: object) -> list[Mapping[str, Any]]:
    """The ranked results a test body returned for a RAG benchmark.

    Accepted: a list (or tuple), best first, of mappings each with a ``note_id`` and a
    ``block_id`` string — optionally ``citation`` / ``citations`` naming the blocks it cites
    (else it cites its own block), as in a retrieval service's results — or a mapping whose
    ``results`` is such a list (a retrieval service's whole answer). An empty list is a search
    that found nothing. Anything else raises ``NotGraded`` naming what came instead.
    """
    results = answer.get("results") if isinstance(answer, Mapping) else answer
    if not isinstance(results, list | tuple):
        returned = type(answer).__name__
        if isinstance(answer, Mapping):
            returned += " without a 'results' list"
        raise NotGraded(
            f"benchmark {benchmark!r} grades ranked results ({ANSWER_SHAPE}); "
            f"the test body returned {returned}"
        )
    for position, result in enumerate(results, start=1):
        missing = missing_id(result)
        if missing is not None:
            found = (
                f"has no {missing!r} string"
                if isinstance(result, Mapping)
                else f"is a {type(result).__name__}"
            )
            raise NotGraded(
                f"benchmark {benchmark!r} grades ranked results ({ANSWER_SHAPE}); "
                f"result {position} of the test body's answer {found}"
            )
    return list(results)


def search_timing(answer: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """(latency_ms, request_ms) of a search answer: the latency is the search engine's own time
    (``took_ms``, which the notes engine reports) when the service says it, else the request's;
    ``request_ms`` is the whole request as measured here (``latency_ms`` in the answer), queue
    wait included. A search that waited behind others is not counted as a slow search."""

    def number(key: str) -> float | None:
        value = answer.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
            return float(value)
        return None

    request = number("latency_ms")
    took = number("took_ms")
    return (took if took is not None else request), request


class RagAdapter(Adapter):
    """A RAG dataset (``kind: rag``) bound to its dataset id."""

    version = "rag-1"
    target_kinds: ClassVar[tuple[str, ...]] = ("retrieval",)
    reference_metadata: ClassVar[frozenset[str]] = frozenset(
        {"expected_note_ids", "expected_block_ids"}
    )

    benchmark = "rag"

    def profile_counts(self, suite_meta: Mapping[str, Any]) -> dict[str, int]:
        return one_list_profiles(int(suite_meta.get("count", 0)))

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        try:
            spec = RagCase.model_validate(dict(row))
        except ValidationError as error:
            raise SuiteRowError(str(error.errors()[0]["msg"])) from None
        return Case(
            id=f"{self.benchmark}/{spec.case_id}",
            benchmark=self.benchmark,
            metadata={"case_id": spec.case_id, "query": spec.query,
                      "expected_note_ids": list(spec.expected_note_ids),
                      "expected_block_ids": list(spec.expected_block_ids),
                      "citation_required": spec.citation_required, "tags": list(spec.tags)},
        )  # fmt: skip

    async def evaluate(self, ctx: CellContext) -> Grade:
        if ctx.target.kind != "retrieval":
            raise NotGraded(
                f"benchmark {self.benchmark!r} searches only through retrieval targets; for "
                f"target {ctx.target.id!r} return its ranked results from a test body marked "
                f'@pytest.mark.srbench("{self.benchmark}")'
            )
        answer, latency_s = await ctx.retrieve(str(ctx.case.metadata["query"]))
        results = list(answer.get("results") or [])
        timing = search_timing({**answer, "latency_ms": latency_s * 1000})
        return self._graded(ctx, results, timing, answer)

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        """Score the ranked results a test body returned (``ranked_results``) with the same
        metrics as a retrieval target's search. A returned mapping may carry the search's
        timing (``srbench_target.search`` does: ``search_timing``); without it the latency is
        unknown."""
        results = ranked_results(self.benchmark, answer)
        if not isinstance(answer, Mapping):
            return self._graded(ctx, results, (None, None), {})
        return self._graded(ctx, results, search_timing(answer), answer)

    def _graded(
        self,
        ctx: CellContext,
        results: list[Mapping[str, Any]],
        timing: tuple[float | None, float | None],
        answer: Mapping[str, Any],
    ) -> Grade:
        """The sample's metrics and details; the search's own ``embedding`` and ``reranker``
        records (null when it gave none) are kept with them."""
        mode, top_k = rag_mode(ctx.target)
        kept = results[:top_k]
        rag: dict[str, Any] = {
            "mode": mode,
            "top_k": top_k,
            "ranked_note_ids": [str(r["note_id"]) for r in kept],
            "ranked_block_ids": [str(r["block_id"]) for r in kept],
            "cited_block_ids": [block for r in kept for block in cited_block_ids(r)],
            "latency_ms": timing[0],
            "request_ms": timing[1],
            "embedding": answer.get("embedding"),
            "reranker": answer.get("reranker"),
        }
        # the same sample the report aggregates, built by the core from these details
        sample = rag_sample(ctx.case, ctx.target, {"status": "completed", "details": {"rag": rag}})
        rag["metrics"] = sample_metrics(sample)
        return Grade(
            correct=rag["metrics"]["hit_at_5"] == 1.0,
            answer=rag["ranked_note_ids"],
            details={"grader_version": GRADER_VERSION, "answer_status": "answered", "rag": rag},
        )
