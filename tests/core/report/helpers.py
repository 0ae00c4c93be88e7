"""Builders for the report tests: smoke plans whose suites record data origins and their
reports, and a plan with a RAG benchmark over retrieval targets."""

from __future__ import annotations

from typing import Any

from pytest_srbench.benchmarks.rag import RagAdapter
from pytest_srbench.core.models import DatasetInfo, Target
from pytest_srbench.core.plan.srbench import PROFILE_COUNTS
from pytest_srbench.core.report.build import build_report
from pytest_srbench.core.report.model import ReportModel
from tests.core.helpers import call, case, manifest, result, run, target

SHA = "d" * 64
ORIGINS = {
    "released": {
        "kind": "released",
        "source": "https://example.org/release",
        "revision": "0123456789abcdef0123456789abcdef01234567",
        "files": {"test.parquet": SHA},
        "license": "MIT",
        "via": "huggingface_hub",
    },
    "original": {"kind": "original", "note": "original smoke items written for pytest-srbench"},
    "synthetic": {
        "kind": "synthetic",
        "generator": "pytest-srbench 0.1.0 datasets synth",
        "seed": 3,
    },
    "user": {"kind": "user", "source": "our own suite", "files": {"cases.jsonl": SHA}},
}


def smoke_plan(kinds, *, drop=0, benchmarks=None, **extra):
    """A smoke plan at sr-bench's smoke counts (``drop`` cases fewer on mmlu-pro) whose
    suites record the origin of each benchmark's kind in ``kinds`` (None: no origin)."""
    names = benchmarks or sorted(PROFILE_COUNTS)
    cases = [
        case(name, str(i))
        for name in names
        for i in range(PROFILE_COUNTS[name]["smoke"] - (drop if name == "mmlu-pro" else 0))
    ]
    suites = [
        {"benchmark": name, **({"origin": ORIGINS[kinds[name]]} if kinds[name] else {})}
        for name in names
    ]
    info = DatasetInfo(profile="smoke", seed=1, suites=suites)
    return manifest(cases, [target("t")], dataset=info, **extra)


def report_of(plan):
    results = [result(c.id, "t", correct=int(c.id.rsplit("/", 1)[1]) % 2 == 0) for c in plan.cases]
    report = build_report(plan, run(), results, [call(c.id, "t") for c in plan.cases])
    ReportModel.model_validate(report)
    return report, report["summary"]["targets"][0]


def every(kind):
    return dict.fromkeys(PROFILE_COUNTS, kind)


ROW = {"case_id": "q1", "query": "Which command promotes the replica?",
       "expected_note_ids": ["n01"], "expected_block_ids": ["n01-b3"], "citation_required": True}  # fmt: skip
FTS = Target(id="fts", kind="retrieval", model="notes", base_url="http://127.0.0.1:9",
             retrieval={"mode": "fts"})  # fmt: skip
HYBRID = Target(id="hybrid", kind="retrieval", model="notes", base_url="http://127.0.0.1:9",
                retrieval={"mode": "hybrid", "top_k": 3, "rrf_k": 10, "reranker": "none"})  # fmt: skip
ROUTED = {"source": "api", "model_id": "text-embedding-3-small", "dimensions": 1536,
          "version": None, "fallback_reason": None, "route_version": 4,
          "requested_route": {"provider_id": "p1", "model": "text-embedding-3-small"},
          "attempted_space": "p1/text-embedding-3-small/1536"}  # fmt: skip


def rag_plan(targets: list[Target] | None = None, suites: list[dict[str, Any]] | None = None):
    rag_case = RagAdapter.for_dataset("rag-x").render(ROW, 1)
    return manifest(
        [rag_case, case("mmlu-pro", "0")], [*(targets or [FTS, HYBRID]), target("chat")],
        dataset=DatasetInfo(profile="smoke", seed=1, suites=suites or [
            {"benchmark": "rag-x", "kind": "rag", "version": "1", "sha256": "s", "selected": 1},
            {"benchmark": "mmlu-pro", "kind": None, "selected": 1}]),
        target_kinds={"rag-x": ["retrieval"]},
    )  # fmt: skip
