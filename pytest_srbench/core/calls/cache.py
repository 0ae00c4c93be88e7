"""The response cache's pure parts: a call's cache key and the receipt of a call answered
from the cache (docs/caching-honestly.md).

A cache key is the SHA-256 of the canonical JSON of the frozen request — target identity and
its config hash, model, messages, sampling and request parameters, tools — without the
transport's own fields (``stream``, ``stream_options``). A repeat's number is part of the key
unless repeats may share answers (``--srbench-cache-repeats``): each repeat is a fresh sample.

A cached call's receipt has status ``replayed`` and ``source_call_id``; the source's usage is
``estimated_usage`` and its cost ``cache_avoided_cost_usd``: the call itself used no tokens
and cost 0, and has no latency or TTFT (never the source's).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pytest_srbench.core.calls.failures import CACHE_MISS_ONLY
from pytest_srbench.core.canonical import digest
from pytest_srbench.core.records import CallReceipt

CacheMode = Literal["off", "use", "only"]
CACHE_MODES = ("off", "use", "only")
__all__ = ["CACHE_MISS_ONLY", "CACHE_MODES", "CacheMode", "cache_key", "replayed_receipt"]
KEY_VERSION = 1
TRANSPORT_FIELDS = frozenset({"stream", "stream_options"})
ZERO_USAGE = {
    "input_tokens": 0,
    "cached_input_tokens": 0,
    "cache_write_tokens": 0,
    "output_tokens": 0,
}
# what a replayed receipt copies from its source (what the answer was, not how it was made)
ANSWER_FIELDS = (
    "model",
    "selected_model",
    "decision",
    "config_hash",
    "finish_reason",
    "output_complete",
    "final",
    "reasoning",
    "tool_calls",
    "phase",
    "phase_source",
    "router",
    "simulated",
    "evidence",
    "evidence_bytes",
    "raw_usage",
)


def cache_key(
    target_id: str,
    target_kind: str,
    config_hash: str | None,
    body: Mapping[str, Any],
    repeat: Any = None,
) -> str:
    """The cache key of one request (``body`` as it would be sent)."""
    request = {key: value for key, value in body.items() if key not in TRANSPORT_FIELDS}
    return digest(
        {
            "v": KEY_VERSION,
            "target": target_id,
            "kind": target_kind,
            "config_hash": config_hash,
            "request": request,
            "repeat": repeat,
        }
    )


def replayed_receipt(row: CallReceipt, source: Mapping[str, Any], now: str) -> CallReceipt:
    """The receipt of the call ``row`` (its ``sent`` fields) answered by the completed live call
    ``source``: status ``replayed``, no spend, no latency, the source's usage as an estimate."""
    replayed: CallReceipt = row.copy()
    for key in ANSWER_FIELDS:
        if key in source:
            replayed[key] = source[key]  # type: ignore[literal-required]
    usage = source.get("usage")
    cost = source.get("cost_usd")
    replayed.update(
        {
            "status": "replayed",
            "source_call_id": str(source.get("id")),
            "source_run_id": source.get("run_id"),
            "usage": dict(ZERO_USAGE),  # type: ignore[typeddict-item]
            "estimated_usage": usage if isinstance(usage, dict) else None,  # type: ignore[typeddict-item]
            "cost_usd": 0.0,
            "cost_complete": True,
            "cache_avoided_cost_usd": cost
            if isinstance(cost, int | float) and not isinstance(cost, bool)
            else None,
            "inference_call_count": 0,
            "latency_s": None,
            "ttft_s": None,
            "server_timings": None,
            "http_status": None,
            "finished_at": now,
        }
    )
    return replayed
