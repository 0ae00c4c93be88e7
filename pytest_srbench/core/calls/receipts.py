"""Turning a finished stream and its response headers into receipt fields: the model that
answered, usage, cost, router metadata (MoM receipts) and the session phase.

Pure functions of the frozen target, the stream outcome and the headers
(reference/report-and-accounting.md §2.4–2.5, §5.2).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.sse import StreamOutcome
from pytest_srbench.core.calls.usage import add_buckets, cost_for, is_known_cost, normalize_usage
from pytest_srbench.core.canonical import digest
from pytest_srbench.core.models import Target
from pytest_srbench.core.records import CallReceipt

MODEL_USAGE_HEADER = "x-vsr-model-usage"
MODEL_USAGE_MAX_BYTES = 12288
PHASES = frozenset({"user_turn", "tool_loop", "provider_state"})
PROXY_USAGE_HEADERS = (
    "x-litellm-model-api-base",
    "x-litellm-response-duration-ms",
    "x-litellm-call-id",
)


_PRICES: dict[int, tuple[Target, dict[str, dict[str, float]]]] = {}


def _prices(target: Target) -> dict[str, dict[str, float]]:
    """The target's price table as plain dicts, made once per (frozen) target, not per call."""
    known = _PRICES.get(id(target))
    if known is not None and known[0] is target:
        return known[1]
    prices = {model: price.model_dump() for model, price in target.prices.items()}
    if len(_PRICES) > 256:  # a long-lived process sees few targets; never grow without end
        _PRICES.clear()
    _PRICES[id(target)] = (target, prices)
    return prices


def _mom_receipt(raw: str, target: Target) -> CallReceipt:
    if len(raw.encode("utf-8")) > MODEL_USAGE_MAX_BYTES:
        raise CallFailure("Router model-usage receipt exceeds 12288 bytes")
    try:
        receipt = json.loads(raw)
    except ValueError as error:
        raise CallFailure("Router model-usage receipt is not valid JSON") from error
    if not isinstance(receipt, dict) or receipt.get("version") != 1:
        raise CallFailure("Router model-usage receipt has an unsupported version")
    complete = receipt.get("complete")
    calls = receipt.get("calls")
    if not isinstance(complete, bool) or not isinstance(calls, list) or not 1 <= len(calls) <= 256:
        raise CallFailure("Router model-usage receipt is malformed (complete / calls)")
    prices = _prices(target)
    segments = []
    for child in calls:
        if not isinstance(child, dict) or not isinstance(child.get("model"), str):
            raise CallFailure("Router model-usage receipt entry needs a string model")
        raw_usage = dict(child.get("usage") or {k: v for k, v in child.items() if k != "model"})
        if "cached_input_tokens" in raw_usage:
            raw_usage["cache_read_input_tokens"] = raw_usage.pop("cached_input_tokens")
        if "cache_write_tokens" in raw_usage:
            raw_usage["cache_creation_input_tokens"] = raw_usage.pop("cache_write_tokens")
        usage = normalize_usage(raw_usage, provider_input=False)
        segments.append(
            {
                "model": child["model"],
                "selected_model": child["model"],
                "usage": usage,
                "cost_usd": cost_for(usage, child["model"], prices),
                "cache_read_reported": None,
                "cache_write_reported": None,
            }
        )
    usages = [segment["usage"] for segment in segments]
    costs = [segment["cost_usd"] for segment in segments]
    usage_known = complete and all(usage is not None for usage in usages)
    cost_known = complete and all(is_known_cost(cost) for cost in costs)
    return {
        "model_usage": segments,
        "usage": add_buckets(u for u in usages if u is not None) if usage_known else None,
        "cost_usd": math.fsum(c for c in costs if c is not None) if cost_known else None,
        "inference_call_count": len(segments),
        "usage_complete": complete,
        "cache_read_reported": None,
        "cache_write_reported": None,
    }


def receipt_fields(
    target: Target, outcome: StreamOutcome, headers: Mapping[str, str]
) -> CallReceipt:
    """Usage, cost and identity of one finished call, priced by the model that answered."""
    response_model = outcome.model or target.model
    selected = headers.get("x-vsr-selected-model") or response_model
    fields: CallReceipt = {
        "model": response_model,
        "selected_model": selected,
        "decision": headers.get("x-vsr-selected-decision") or None,
        "response_usage": outcome.usage,
        "raw_usage": outcome.raw_usage,
        "cache_read_usage": outcome.cache_read_usage,
        "usage_via_proxy": any(name in headers for name in PROXY_USAGE_HEADERS) or None,
        "config_hash": headers.get("x-sr-bench-config-hash") or headers.get("x-vsr-config-hash"),
    }
    if target.expected_response_model and response_model != target.expected_response_model:
        raise CallFailure(
            f"Response model identity mismatch: expected {target.expected_response_model!r}, "
            f"got {response_model!r}"
        )
    if target.kind == "single":
        fields.update(
            {
                "usage": outcome.usage,
                "cost_usd": cost_for(outcome.usage, response_model, _prices(target)),
                "inference_call_count": 1,
                "usage_complete": outcome.usage is not None,
                "cache_read_reported": outcome.cache_read_reported,
                "cache_write_reported": outcome.cache_write_reported,
            }
        )
        return fields
    if target.config_hash is not None and fields["config_hash"] != target.config_hash:
        raise CallFailure("Runtime configuration identity acknowledgement missing or mismatched")
    receipt = headers.get(MODEL_USAGE_HEADER)
    if receipt is not None:
        fields.update(_mom_receipt(receipt, target))
    elif headers.get("x-vsr-inference-call-count") == "1" and headers.get("x-vsr-selected-model"):
        fields.update(
            {
                "usage": outcome.usage,
                "cost_usd": cost_for(
                    outcome.usage, headers["x-vsr-selected-model"], _prices(target)
                ),
                "inference_call_count": 1,
                "usage_complete": outcome.usage is not None,
                "cache_read_reported": outcome.cache_read_reported,
                "cache_write_reported": outcome.cache_write_reported,
            }
        )
    else:
        fields.update(
            {"usage": None, "cost_usd": None, "inference_call_count": None, "usage_complete": False}
        )
    count = fields.get("inference_call_count")
    if (
        target.max_inference_calls is not None
        and count is not None
        and count > target.max_inference_calls
    ):
        raise CallFailure(
            f"Router made {count} inference calls; the frozen limit is {target.max_inference_calls}"
        )
    return fields


def session_id(run_id: str, case_id: str, target_id: str) -> str:
    """The opaque session id a session-aware target receives for one case."""
    return "sr-bench-" + digest([run_id, case_id, target_id])[:32]


def _is_tool_result(message: Any) -> bool:
    if not isinstance(message, Mapping):
        return False
    if message.get("role") in ("tool", "function"):
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, Mapping) and part.get("type") == "tool_result" for part in content
    )


def request_phase(messages: Sequence[Any]) -> str:
    """The session phase a request is in, derived from its messages."""
    if not messages or not isinstance(messages[-1], Mapping):
        return "user_turn"
    last = messages[-1]
    if _is_tool_result(last) or (last.get("role") == "assistant" and last.get("tool_calls")):
        return "tool_loop"
    if last.get("role") == "user" and len(messages) >= 2 and _is_tool_result(messages[-2]):
        return "tool_loop"
    return "user_turn"


def response_phase(headers: Mapping[str, str], messages: Sequence[Any]) -> tuple[str, str]:
    """(phase, phase_source): the router's header when present, else the request's shape."""
    value = (headers.get("x-vsr-session-phase") or "").strip()
    if value:
        return (value if value in PHASES else "unknown", "router")
    return (request_phase(messages), "request")
