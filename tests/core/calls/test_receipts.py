"""Receipts of calls through a proxy: LiteLLM's provenance (the group that served, the backend
model, fallbacks), usage it estimated marked as such and never a known cost, and pricing
failures that name the model without a price. The streams are the ones LiteLLM 1.108 sent in
front of llama-server (usage passed on) and llama-cpp-python's server (no usage: LiteLLM
counted the tokens itself), shortened."""

from __future__ import annotations

import json

from pytest_srbench.core.calls.failures import summarize_failure
from pytest_srbench.core.calls.receipts import (
    pricing_problem,
    proxy_of,
    receipt_fields,
    reported_by_backend,
)
from pytest_srbench.core.calls.sse import ChatStreamState, SseDecoder, StreamOutcome
from pytest_srbench.core.models import Prices, Target

FREE = Prices(input=0.0, cached_input=0.0, cache_write=0.0, output=0.0)
PAID = Prices(input=1.0, cached_input=0.5, cache_write=0.0, output=2.0)
HEADERS = {
    "x-litellm-call-id": "9f73450d",
    "x-litellm-model-name": "openai/smollm2-135m",
    "x-litellm-version": "1.108.7",
    "x-litellm-response-duration-ms": "71.5",
    "x-litellm-model-group": "smol",
    "x-litellm-attempted-retries": "0",
    "x-litellm-attempted-fallbacks": "0",
}


def stream(model: str, usage: dict) -> StreamOutcome:
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]},
        {"choices": [{"index": 0, "delta": {}}], "usage": usage},
    ]
    body = b"".join(
        b"data: " + json.dumps({"model": model, "object": "chat.completion.chunk", **c}).encode()
        + b"\n\n"
        for c in chunks
    ) + b"data: [DONE]\n\n"  # fmt: skip
    state = ChatStreamState(clock=lambda: 0.0, started=0.0)
    for payload in SseDecoder().feed(body):
        state.feed_payload(payload)
    return state.outcome()


PASSED_ON = {"completion_tokens": 6, "prompt_tokens": 32, "total_tokens": 38,
             "completion_tokens_details": {"reasoning_tokens": 0, "text_tokens": 6},
             "prompt_tokens_details": {"cached_tokens": 31}}  # fmt: skip
COUNTED_BY_PROXY = {"completion_tokens": 6, "prompt_tokens": 9, "total_tokens": 15,
                    "completion_tokens_details": {"reasoning_tokens": 0, "text_tokens": 6}}  # fmt: skip


def target(model: str, prices: dict[str, Prices]) -> Target:
    return Target(id="via-proxy", model=model, base_url="http://127.0.0.1:4000/v1", prices=prices)


def test_a_proxied_call_records_the_group_the_backend_and_the_fallbacks():
    headers = {**HEADERS, "x-litellm-attempted-fallbacks": "1"}
    fields = receipt_fields(target("fallback-group", {"smol": PAID}), stream("smol", PASSED_ON),
                            headers)  # fmt: skip
    assert fields["proxy"] == {
        "name": "litellm", "version": "1.108.7", "model_group": "smol",
        "backend_model": "openai/smollm2-135m", "attempted_fallbacks": 1, "attempted_retries": 0,
    }  # fmt: skip
    assert fields["usage_estimated"] is None and fields["usage_via_proxy"] is True
    assert fields["cost_usd"] is not None and fields["usage_complete"] is True
    assert proxy_of({"content-type": "text/event-stream"}) is None  # no proxy, no provenance
    assert proxy_of({"x-litellm-echo": "a server echoing a header"}) is None


def test_usage_the_proxy_counted_itself_is_estimated_and_never_a_known_cost():
    fields = receipt_fields(target("nousage", {"nousage": PAID}), stream("nousage", COUNTED_BY_PROXY),
                            HEADERS)  # fmt: skip
    assert fields["usage_estimated"] is True and fields["usage_complete"] is False
    assert fields["usage"] is not None  # the proxy's count is kept, marked
    assert fields["cost_usd"] is None
    assert fields["estimated_cost_usd"] == (9 * 1.0 + 6 * 2.0) / 1e6
    problem = pricing_problem(target("nousage", {"nousage": PAID}), fields)
    assert problem.startswith("Priced call's usage estimated by the proxy 'litellm'")
    assert reported_by_backend(PASSED_ON) and not reported_by_backend(COUNTED_BY_PROXY)
    direct = receipt_fields(target("m", {"m": PAID}), stream("m", COUNTED_BY_PROXY), {})
    assert direct["usage_estimated"] is None and direct["cost_usd"] is not None  # no proxy


def test_a_fallback_to_an_unpriced_group_names_that_model():
    headers = {**HEADERS, "x-litellm-attempted-fallbacks": "1"}
    priced_group_only = target("fallback-group", {"fallback-group": FREE})
    fields = receipt_fields(priced_group_only, stream("smol", PASSED_ON), headers)
    assert fields["cost_usd"] is None
    assert pricing_problem(priced_group_only, fields) == (
        "Priced call returned unknown model pricing: no frozen price for model 'smol' "
        "(requested 'fallback-group'; the proxy litellm fell back once to it, backend "
        "openai/smollm2-135m); add it to the target's prices"
    )
    assert summarize_failure(pricing_problem(priced_group_only, fields)).endswith(
        "no frozen price for model 'smol' (requested 'fallback-group'; the proxy litellm fell "
        "back once to it, backend openai/smollm2-135m)"
    )
    no_usage = {**fields, "usage": None}
    assert "incomplete usage" in pricing_problem(priced_group_only, no_usage)
