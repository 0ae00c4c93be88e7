"""The two records the engine writes on the hot path: a call's receipt and a cell's result.

They are typed dicts, not pydantic models: the engine builds tens of thousands per run and the
store keeps them as JSON, so a dict that mypy checks costs nothing to build or serialise. Every
key is optional (``total=False``) because a receipt grows in stages (the ``sent`` row, then
what the response told) and older stored rows may lack newer keys; readers use ``.get``.
Status values come from the Literals in ``core/models.py``, so a misspelt status fails mypy.
"""

from __future__ import annotations

from typing import Any, TypedDict

from pytest_srbench.core.calls.usage import UsageBuckets
from pytest_srbench.core.models import CallStatus, CellStatus


class CallReceipt(TypedDict, total=False):
    """One journaled request: what was sent, what came back, what it cost."""

    # the ``sent`` row, journaled before the request leaves
    id: str
    case_id: str
    target_id: str
    role: str
    kind: str
    status: CallStatus
    attempt: int
    requested_model: str | None
    simulated: bool
    session_id: str | None
    phase: str | None
    phase_source: str | None
    request: dict[str, Any]
    started_at: str
    cache_key: str | None  # the response cache's key of the request (core/calls/cache.py)
    # identity and usage, from the response (core/calls/receipts.py)
    model: str | None
    selected_model: str | None
    decision: str | None
    response_usage: UsageBuckets | None
    raw_usage: dict[str, Any] | None
    cache_read_usage: Any
    usage_via_proxy: bool | None
    config_hash: str | None
    proxy: dict[str, Any] | None  # a proxy's provenance (receipts.proxy_of)
    usage_estimated: bool | None  # the proxy counted the tokens, not the backend
    # two usage objects in the stream disagreed: {"earlier": raw, "billed": raw} (the last is
    # billed, as sr-bench does); absent or None otherwise
    usage_conflict: dict[str, Any] | None
    estimated_cost_usd: float | None  # the price of estimated usage (never a known cost)
    usage: UsageBuckets | None
    cost_usd: float | None
    cost_complete: bool
    inference_call_count: int | None
    usage_complete: bool
    cache_read_reported: bool | None
    cache_write_reported: bool | None
    model_usage: list[dict[str, Any]]
    # a call answered from the response cache (status ``replayed``; core/calls/cache.py)
    source_call_id: str
    source_run_id: str | None
    estimated_usage: UsageBuckets | None  # the source's usage: never counted as spend
    cache_avoided_cost_usd: float | None  # the source's cost: what the cache saved
    # the finished stream
    latency_s: float | None
    ttft_s: float | None
    finish_reason: str | None
    output_complete: bool | None
    final: str | None
    reasoning: str | None
    tool_calls: list[dict[str, Any]] | None
    server_timings: dict[str, Any] | None
    http_status: int | None
    router: dict[str, str] | None
    evidence_bytes: int
    evidence: dict[str, Any] | None  # where the raw bytes are kept (the store's locator)
    finished_at: str
    error: str
    # JSON calls (routing previews, retrieval searches)
    routing: dict[str, Any]
    retrieval: dict[str, Any]


class CellResult(TypedDict, total=False):
    """The one row of a cell: ``running`` while it runs, then its terminal outcome."""

    case_id: str
    target_id: str
    benchmark: str
    status: CellStatus
    queue_wait_s: float
    started_at: str
    correct: bool | None
    answer: Any
    score: int | None
    details: dict[str, Any]
    error: str | None
    latency_s: float
    subject_latency_s: float | None
    ttft_s: float | None
    usage: UsageBuckets | None
    cost_usd: float | None
    call_count: int
    cached_calls: int  # calls answered from the response cache (status ``replayed``)
    finished_at: str
