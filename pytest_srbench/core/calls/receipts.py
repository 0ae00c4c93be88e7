"""Turning a finished stream and its response headers into receipt fields: the model that
answered, usage, cost, router metadata (MoM receipts) and the session phase.

Pure functions of the frozen target, the stream outcome and the headers
(reference/report-and-accounting.md §2.4–2.5, §5.2).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.sse import StreamOutcome
from pytest_srbench.core.calls.usage import add_buckets, cost_for, is_known_cost, normalize_usage
from pytest_srbench.core.canonical import digest

if TYPE_CHECKING:  # annotations only: the simulator imports this module without the models
    from pytest_srbench.core.models import Target
    from pytest_srbench.core.records import CallReceipt

MODEL_USAGE_HEADER = "x-vsr-model-usage"
SIMULATOR_HEADER = "x-srbench-simulator"  # every answer of the built-in simulator carries it
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


def _count(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def proxy_of(headers: Mapping[str, str]) -> dict[str, Any] | None:
    """Which proxy answered and what it did, from LiteLLM's ``x-litellm-*`` headers: the model
    group that served (after a fallback, not the one asked for), the backend model behind it,
    and how many fallbacks and retries it attempted; None without the headers LiteLLM puts on
    every answer (``PROXY_USAGE_HEADERS``: another ``x-litellm-*`` header proves nothing)."""
    if not any(name in headers for name in PROXY_USAGE_HEADERS):  # as usage_via_proxy
        return None
    return {
        "name": "litellm",
        "version": headers.get("x-litellm-version"),
        "model_group": headers.get("x-litellm-model-group"),
        "backend_model": headers.get("x-litellm-model-name"),
        "attempted_fallbacks": _count(headers.get("x-litellm-attempted-fallbacks")),
        "attempted_retries": _count(headers.get("x-litellm-attempted-retries")),
    }


def reported_by_backend(raw_usage: Mapping[str, Any] | None) -> bool:
    """Whether a proxied usage object shows that the backend counted it. LiteLLM passes a
    backend's usage on unchanged, ``prompt_tokens_details`` included; when the backend sent
    none it counts tokens itself and that object has no ``prompt_tokens_details``. A backend
    that reports usage but never those details is therefore treated as estimated too (the
    cost stays unknown: fail closed)."""
    return isinstance(raw_usage, Mapping) and isinstance(
        raw_usage.get("prompt_tokens_details"), Mapping
    )


def pricing_problem(target: Target, fields: Mapping[str, Any]) -> str:
    """Why a priced call has no known cost, naming what is missing (the failure reason)."""
    proxy = fields.get("proxy") or {}
    if fields.get("usage_estimated"):
        return (
            f"Priced call's usage estimated by the proxy '{proxy.get('name')}' (its backend "
            "sent no usage): its cost is unknown; use cost_policy = 'capability_only' to run "
            "without cost"
        )
    if fields.get("usage") is None:
        return "Priced call returned incomplete usage (the server sent none)"
    priced = set(target.prices)
    answered = [
        str(part.get("selected_model") or part.get("model"))
        for part in (fields.get("model_usage") or [fields])
    ]
    missing = next((model for model in answered if model not in priced), None)
    if missing is None:
        return "Priced call returned incomplete usage or unknown model pricing"
    context = []
    if missing != target.model:
        context.append(f"requested '{target.model}'")
    fallbacks = proxy.get("attempted_fallbacks")
    if fallbacks:
        behind = f", backend {proxy['backend_model']}" if proxy.get("backend_model") else ""
        times = "once" if fallbacks == 1 else f"{fallbacks} times"
        context.append(f"the proxy {proxy.get('name')} fell back {times} to it{behind}")
    said = f" ({'; '.join(context)})" if context else ""
    return (
        f"Priced call returned unknown model pricing: no frozen price for model '{missing}'"
        f"{said}; add it to the target's prices"
    )


def receipt_fields(
    target: Target, outcome: StreamOutcome, headers: Mapping[str, str]
) -> CallReceipt:
    """Usage, cost and identity of one finished call, priced by the model that answered.

    Usage a proxy estimated (``reported_by_backend`` is false) is kept as the proxy's count,
    marked ``usage_estimated``; its cost is not a known cost (``cost_usd`` null, the price of
    the estimate in ``estimated_cost_usd``)."""
    response_model = outcome.model or target.model
    selected = headers.get("x-vsr-selected-model") or response_model
    proxy = proxy_of(headers)
    fields: CallReceipt = {
        "model": response_model,
        "selected_model": selected,
        "decision": headers.get("x-vsr-selected-decision") or None,
        "response_usage": outcome.usage,
        "raw_usage": outcome.raw_usage,
        "cache_read_usage": outcome.cache_read_usage,
        "usage_via_proxy": any(name in headers for name in PROXY_USAGE_HEADERS) or None,
        "config_hash": headers.get("x-sr-bench-config-hash") or headers.get("x-vsr-config-hash"),
        "proxy": proxy,
        "usage_estimated": None,
        "usage_conflict": outcome.usage_conflict,
    }
    if target.expected_response_model and response_model != target.expected_response_model:
        raise CallFailure(
            f"Response model identity mismatch: expected {target.expected_response_model!r}, "
            f"got {response_model!r}"
        )
    if target.kind == "single":
        cost = cost_for(outcome.usage, response_model, _prices(target))
        estimated = (
            proxy is not None
            and outcome.usage is not None
            and not reported_by_backend(outcome.raw_usage)
        )
        fields.update(
            {
                "usage": outcome.usage,
                "cost_usd": None if estimated else cost,
                "inference_call_count": 1,
                "usage_complete": outcome.usage is not None and not estimated,
                "cache_read_reported": outcome.cache_read_reported,
                "cache_write_reported": outcome.cache_write_reported,
            }
        )
        if estimated:
            fields.update({"usage_estimated": True, "estimated_cost_usd": cost})
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


def answered_by_simulator(headers: Mapping[str, str]) -> bool:
    """Whether the built-in simulator answered (its header is on every response it sends):
    a receipt is ``simulated`` only then, whatever the target was declared to be, so a call
    that reached a real server, or no server, is never labelled simulated."""
    return headers.get(SIMULATOR_HEADER) == "1"


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
