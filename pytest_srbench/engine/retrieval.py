"""One journaled search request of a retrieval target (RAG benchmarks)."""

from __future__ import annotations

from typing import Any

from pytest_srbench.core.calls.retrieval import SEARCH_PATH, parse_search, search_body
from pytest_srbench.core.records import CallReceipt
from pytest_srbench.engine.call import CellCalls
from pytest_srbench.engine.json_call import json_call
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.transport.auth import auth_header


def _receipt(answer: dict[str, Any]) -> CallReceipt:
    return {
        "retrieval": {
            "mode": answer.get("mode"),
            "result_count": len(answer.get("results") or []),
            "embedding": answer.get("embedding"),
            "reranker": answer.get("reranker"),
        },
        "usage": None,
        "cost_usd": None,
    }


async def retrieval_call(
    rt: RunRuntime, cell: CellCalls, query: str
) -> tuple[dict[str, Any], float]:
    """Search the cell's retrieval target; the answer and the request latency in seconds."""
    target = cell.target
    return await json_call(
        rt,
        cell,
        kind="retrieval",
        url=rt.base_url(target) + SEARCH_PATH,
        body=search_body(target, query),
        headers=auth_header(target.api_key_env),
        label="Retrieval",
        parse=parse_search,
        receipt=_receipt,
    )
