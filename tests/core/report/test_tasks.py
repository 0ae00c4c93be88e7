"""The Benchmark Service kinds in the report and in events, pure: a run's kind, a RAG cell's
embedding record (passed through, or ``unavailable`` for a failed search), the static config
snapshot (effective retrieval defaults, the local baseline) that the report repeats, and the
small data of a cell's terminal event."""

from __future__ import annotations

import pytest

from pytest_srbench.core.case_events import case_event_data
from pytest_srbench.core.report.build import build_report
from pytest_srbench.core.report.model import ReportModel
from pytest_srbench.core.report.tasks import (
    EMBEDDING_FIELDS,
    cell_embedding,
    config_snapshot,
    manifest_kind,
    run_kind,
)
from tests.core.helpers import case, manifest, result, run, target
from tests.core.report.helpers import ROUTED, rag_plan

BASELINE = {"model_id": "m", "version": "2", "dimensions": 384, "fallback_reason": None}


@pytest.mark.parametrize(
    ("kinds", "kind"),
    [(["rag"], "rag"), (["agent", "agent"], "agent"), ([None, "python"], "suite"), ([], "suite"),
     (["rag", "agent"], "mixed"), (["rag", None], "mixed")],
)  # fmt: skip
def test_the_kind_of_a_run(kinds, kind):
    assert run_kind(kinds) == kind


def test_a_dataset_without_selected_cases_does_not_make_a_run_mixed():
    plan = rag_plan(suites=[{"benchmark": "rag-x", "kind": "rag", "selected": 1},
                            {"benchmark": "mmlu-pro", "kind": None, "selected": 0}])  # fmt: skip
    assert manifest_kind(plan) == "rag" and manifest_kind(rag_plan()) == "mixed"


def test_an_embedding_record_passes_through_and_a_failed_search_is_unavailable():
    done = result("rag-x/q1", "hybrid", details={"rag": {"embedding": ROUTED}})
    assert cell_embedding(done, "retrieval") == ROUTED  # unchanged, attempted_space included
    failed = result("rag-x/q1", "fts", "failed", None, error="Retrieval HTTP 503")
    assert cell_embedding(failed, "retrieval") == {
        **dict.fromkeys(EMBEDDING_FIELDS), "source": "unavailable",
        "fallback_reason": "Retrieval HTTP 503"}  # fmt: skip
    timed_out = result("rag-x/q1", "fts", "cancelled", None, error="/srv/x: read timeout")
    assert cell_embedding(timed_out, "retrieval")["fallback_reason"] == "Target idle/read timeout"
    assert cell_embedding(None, "retrieval") is None  # pending: unknown
    assert cell_embedding({**failed, "target_id": "mine"}, "python") is None  # not our search


def test_report_cells_carry_the_embedding_record_of_rag_cells_only():
    plan = rag_plan()
    rows = [result("rag-x/q1", "hybrid", details={"rag": {"embedding": ROUTED}}),
            result("rag-x/q1", "fts", "failed", None, error="Retrieval HTTP 503"),
            result("mmlu-pro/0", "chat")]  # fmt: skip
    report = build_report(plan, run(), rows, [], local_embedding=BASELINE)
    ReportModel.model_validate(report)
    cells = {(c["case_id"], c["target_id"]): c for c in report["cells"]}
    assert cells[("rag-x/q1", "hybrid")]["embedding"] == ROUTED
    assert cells[("rag-x/q1", "fts")]["embedding"]["source"] == "unavailable"
    assert cells[("mmlu-pro/0", "chat")]["embedding"] is None
    assert report["rag"]["config_snapshot"]["embedding"] == {
        "policy": "per_case", "sources": {"api": 1, "unavailable": 1}}  # fmt: skip


def test_the_config_snapshot_has_effective_defaults_and_the_report_repeats_it():
    plan = rag_plan()
    snapshot = config_snapshot(plan, BASELINE)
    assert snapshot is not None and set(snapshot) == {"rag"}
    rag = snapshot["rag"]
    assert rag["retrieval"]["fts"] == {"mode": "fts", "top_k": 5, "rrf_k": 60, "reranker": "none"}
    assert rag["retrieval"]["hybrid"] == {"mode": "hybrid", "top_k": 3, "rrf_k": 10,
                                          "reranker": "none"}  # fmt: skip
    assert rag["reranker"] == {"fts": "none", "hybrid": "none"}
    assert rag["modes"] == ["fts", "hybrid"] and rag["local_embedding"] == BASELINE
    assert rag["datasets"] == [{"dataset_id": "rag-x", "version": "1", "sha256": "s",
                                "cases": 1, "location": None}]  # fmt: skip
    report = build_report(plan, run(), [], [], local_embedding=BASELINE)["rag"]["config_snapshot"]
    assert {key: report[key] for key in rag if key != "embedding"} == {
        key: value for key, value in rag.items() if key != "embedding"}  # fmt: skip
    assert report["embedding"]["policy"] == rag["embedding"]["policy"] == "per_case"
    unknown = config_snapshot(plan, None)
    assert unknown is not None and set(unknown["rag"]["local_embedding"].values()) == {None}
    plain = manifest([case("mmlu-pro", "0")], [target("chat")])
    assert config_snapshot(plain, BASELINE) is None


def test_a_completed_rag_cells_event_carries_its_metrics_and_embedding_not_its_answer():
    metrics = {"hit_at_1": 1.0, "hit_at_5": 1.0, "recall_at_k": 1.0, "mrr": 1.0}
    row = result("rag-x/q1", "hybrid", answer=["n01"], benchmark="rag-x", cost_usd=None,
                 subject_latency_s=None, details={"answer_status": "answered",
                 "rag": {"metrics": metrics, "embedding": ROUTED, "ranked_note_ids": ["n01"]}})  # fmt: skip
    data = case_event_data(row, "retrieval")
    assert data == {"case_id": "rag-x/q1", "target_id": "hybrid", "benchmark": "rag-x",
                    "correct": True, "answer_status": "answered", "latency_s": 1.0,
                    "subject_latency_s": None, "cost_usd": None, "metrics": metrics,
                    "embedding": ROUTED}  # fmt: skip


def test_a_failed_cells_event_has_the_code_and_a_controlled_reason():
    row = result("rag-x/q1", "fts", "failed", None,
                 error="connection refused by /home/me/secret/proj (token sk-123)")  # fmt: skip
    data = case_event_data(row, "retrieval")
    assert data["code"] == "BENCHMARK_CASE_EVALUATION_FAILED"
    assert data["reason"] == "Target connection failed"
    assert data["embedding"]["source"] == "unavailable" and data["metrics"] is None
    assert data["correct"] is None and "/home" not in str(data) and "sk-123" not in str(data)


def test_an_agent_cells_event_summarizes_its_run():
    agent = {"succeeded": False, "status": "completed", "reasons": ["extra call"],
             "tool_calls": [{"name": "search_notes"}, {"name": "read_note"}]}  # fmt: skip
    row = result("agent-x/a1", "chat", correct=False, details={"agent": agent})
    data = case_event_data(row, "single")
    assert data["agent"] == {"succeeded": False, "status": "completed", "tool_calls": 2}
    assert "embedding" not in data and "code" not in data
