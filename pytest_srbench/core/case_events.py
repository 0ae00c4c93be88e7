"""The data of a cell's terminal event (store kind ``case_<status>``; SSE ``CaseCompleted`` /
``CaseFailed``): the case's result in small — whether it was right, its answer status,
latencies and cost; a RAG cell's per-sample metrics and embedding record; an agent cell's
outcome and number of tool calls; for a cell that ended otherwise, the public code and its
controlled one-line reason. Never the answer, a transcript or a raw error message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_srbench.core.benchmark_errors import safe_message, without_paths
from pytest_srbench.core.calls.failures import summarize_failure
from pytest_srbench.core.report.tasks import cell_embedding

CASE_FAILED = "BENCHMARK_CASE_EVALUATION_FAILED"


def case_event_data(row: Mapping[str, Any], target_kind: str | None) -> dict[str, Any]:
    """The event data of a cell's final result row (``target_kind``: its target's kind)."""
    details = row.get("details") or {}
    data: dict[str, Any] = {
        "case_id": row["case_id"],
        "target_id": row["target_id"],
        "benchmark": row.get("benchmark"),
        "correct": row.get("correct"),
        "answer_status": details.get("answer_status"),
        "latency_s": row.get("latency_s"),
        "subject_latency_s": row.get("subject_latency_s"),
        "cost_usd": row.get("cost_usd"),
    }
    rag = details.get("rag")
    embedding = cell_embedding(row, target_kind)
    if isinstance(rag, Mapping) or embedding is not None:
        metrics = rag.get("metrics") if isinstance(rag, Mapping) else None
        data["metrics"] = dict(metrics) if isinstance(metrics, Mapping) else None
        data["embedding"] = embedding
    agent = details.get("agent")
    if isinstance(agent, Mapping):
        calls = agent.get("tool_calls")
        data["agent"] = {
            "succeeded": agent.get("succeeded"),
            "status": agent.get("status"),
            "tool_calls": len(calls) if isinstance(calls, list) else None,
        }
    if row.get("status") != "completed":
        error = row.get("error")
        data["code"] = CASE_FAILED
        data["reason"] = (
            safe_message(without_paths(summarize_failure(str(error)))) if error else None
        )
    return data
