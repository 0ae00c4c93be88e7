"""RAG-retrieval benchmarks: each case's query goes to a retrieval target (one search per
cell, in the target's frozen mode); the sample is scored by the RAG metrics of
``core/report/rag_metrics.py``. A cell is "correct" when an expected note is among the first five
results (``hit_at_5``); the report's RAG section carries every metric per mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import ValidationError

from pytest_srbench.benchmarks.base import Adapter, CellContext, Grade, SuiteRowError
from pytest_srbench.core.calls.retrieval import cited_block_ids
from pytest_srbench.core.models import Case
from pytest_srbench.core.plan.datasets import RagCase
from pytest_srbench.core.report.rag_metrics import sample_metrics
from pytest_srbench.core.report.tasks import rag_sample

GRADER_VERSION = "rag-metrics-v1"


class RagAdapter(Adapter):
    """A RAG dataset (``kind: rag``) bound to its dataset id."""

    version = "rag-1"
    target_kinds: ClassVar[tuple[str, ...]] = ("retrieval",)

    benchmark = "rag"

    def profile_counts(self, suite_meta: Mapping[str, Any]) -> dict[str, int]:
        count = int(suite_meta.get("count", 0))
        return {"smoke": count, "quick": count, "standard": count}

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
        params = ctx.target.retrieval
        mode, top_k = str(params["mode"]), int(params.get("top_k", 5))
        answer, latency_s = await ctx.retrieve(str(ctx.case.metadata["query"]))
        results = list(answer.get("results") or [])[:top_k]
        rag: dict[str, Any] = {
            "mode": mode,
            "top_k": top_k,
            "ranked_note_ids": [str(r["note_id"]) for r in results],
            "ranked_block_ids": [str(r["block_id"]) for r in results],
            "cited_block_ids": [block for r in results for block in cited_block_ids(r)],
            "latency_ms": latency_s * 1000,
            "embedding": answer.get("embedding"),
        }
        # the same sample the report aggregates, built by the core from these details
        sample = rag_sample(ctx.case, ctx.target, {"status": "completed", "details": {"rag": rag}})
        rag["metrics"] = sample_metrics(sample)
        return Grade(
            correct=rag["metrics"]["hit_at_5"] == 1.0,
            answer=rag["ranked_note_ids"],
            details={"grader_version": GRADER_VERSION, "answer_status": "answered", "rag": rag},
        )
