"""Worked examples 5–8: usage normalisation, pricing, presence flags, invalid usage."""

import pytest

from pytest_srbench.core.calls.failures import UsageObjectError
from pytest_srbench.core.calls.usage import (
    cache_neutral_cost,
    cost_for,
    is_known_cost,
    normalize_usage,
    sum_cost,
    usage_presence,
)

PRICES = {"m": {"input": 1, "cached_input": 0.1, "cache_write": 1.25, "output": 3}}


@pytest.mark.parametrize("write_key", ["created_cache_tokens", "cache_creation_tokens"])
def test_example_5_openai_usage_and_cost(write_key):
    raw = {
        "prompt_tokens": 100,
        "completion_tokens": 10,
        "prompt_tokens_details": {"cached_tokens": 20, write_key: 30},
    }
    usage = normalize_usage(raw)
    assert usage == {
        "input_tokens": 50,
        "cached_input_tokens": 20,
        "cache_write_tokens": 30,
        "output_tokens": 10,
    }
    assert cost_for(usage, "m", PRICES) == pytest.approx(0.0001195, rel=1e-12)
    assert cache_neutral_cost(usage, "m", PRICES) == pytest.approx(0.00013, rel=1e-12)


def test_example_6_real_provider_receipt():
    raw = {
        "prompt_tokens": 4175,
        "completion_tokens": 4096,
        "prompt_tokens_details": {"cached_tokens": 0, "created_cache_tokens": 3136},
    }
    usage = normalize_usage(raw)
    assert usage["input_tokens"] == 1039
    prices = {"x": {"input": 0.65, "cached_input": 0.065, "cache_write": 0.8125, "output": 1.95}}
    assert cost_for(usage, "x", prices) == pytest.approx(0.01121055, rel=1e-12)


@pytest.mark.parametrize(
    "raw",
    [
        {
            "prompt_tokens": 100,
            "completion_tokens": 1,
            "prompt_tokens_details": {"created_cache_tokens": 30, "cache_creation_tokens": 31},
        },
        {
            "prompt_tokens": 100,
            "completion_tokens": 1,
            "prompt_tokens_details": {"created_cache_tokens": True},
        },
        {"prompt_tokens": -1, "completion_tokens": 1},
        {
            "prompt_tokens": 100,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 20, "created_cache_tokens": 90},
        },
        {"prompt_tokens": 2, "completion_tokens": 1, "cache_read_input_tokens": 3},
        {
            "prompt_tokens": 10,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": None},
        },
        "not a dict",
        {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": ["x"]},
    ],
)
def test_example_7_invalid_usage_raises(raw):
    with pytest.raises(UsageObjectError):
        normalize_usage(raw)


FULLY_CACHED = {
    "input_tokens": 0,
    "cached_input_tokens": 120,
    "cache_write_tokens": 0,
    "output_tokens": 7,
}


@pytest.mark.parametrize(
    ("raw", "provider_input"),
    [
        (  # Chat Completions: the whole prompt of 120 tokens read from the cache
            {
                "prompt_tokens": 120,
                "completion_tokens": 7,
                "prompt_tokens_details": {"cached_tokens": 120},
            },
            True,
        ),
        (  # Responses API: input_tokens is the whole prompt there
            {
                "input_tokens": 120,
                "output_tokens": 7,
                "input_tokens_details": {"cached_tokens": 120},
            },
            True,
        ),
        (  # Anthropic style: no fresh input beside 120 cache-read tokens
            {"input_tokens": 0, "cache_read_input_tokens": 120, "output_tokens": 7},
            True,
        ),
        (  # sr-bench's own reading (a router's model-usage receipt): input_tokens is the prompt
            {"input_tokens": 120, "cache_read_input_tokens": 120, "output_tokens": 7},
            False,
        ),
    ],
)
def test_a_prompt_served_entirely_from_the_cache_has_no_fresh_input(raw, provider_input):
    # cached + written == the whole prompt is valid (only more than the prompt is invalid)
    usage = normalize_usage(raw, provider_input=provider_input)
    assert usage == FULLY_CACHED
    assert cost_for(usage, "m", PRICES) == pytest.approx((120 * 0.1 + 7 * 3) / 1e6, rel=1e-12)


def test_conflict_is_checked_before_missing_totals():
    with pytest.raises(UsageObjectError, match="Conflicting"):
        normalize_usage(
            {"prompt_tokens_details": {"created_cache_tokens": 1, "cache_write_tokens": 2}}
        )


@pytest.mark.parametrize(
    "raw",
    [
        {"completion_tokens": 3},
        {"prompt_tokens": 3},
        {"prompt_tokens": None, "completion_tokens": 2},
    ],
)
def test_missing_totals_mean_unknown_never_zero(raw):
    assert normalize_usage(raw) is None


def test_example_8_presence_flags():
    assert usage_presence({"prompt_tokens": 4, "completion_tokens": 1}) == (False, False)
    assert normalize_usage({"prompt_tokens": 4, "completion_tokens": 1}) == {
        "input_tokens": 4,
        "cached_input_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 1,
    }
    zeros = {
        "prompt_tokens": 4,
        "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": 0, "cache_creation_tokens": 0},
    }
    assert usage_presence(zeros) == (True, True)
    alias = {
        "prompt_tokens": 10,
        "completion_tokens": 1,
        "input_tokens_details": {"cached_tokens": 2, "cache_write_tokens": 3},
    }
    assert usage_presence(alias) == (True, True)
    assert normalize_usage(alias) == {
        "input_tokens": 5,
        "cached_input_tokens": 2,
        "cache_write_tokens": 3,
        "output_tokens": 1,
    }
    only_writes = {"prompt_tokens_details": {"created_cache_tokens": 1, "cache_write_tokens": 2}}
    assert usage_presence(only_writes) == (False, True)


def test_anthropic_style_usage_reads_input_tokens_as_fresh_input():
    """Seed divergence: Anthropic's ``input_tokens`` excludes the cache tokens.

    input 100 (fresh) + cache read 30 + cache creation 10 = a prompt of 140 tokens:
    buckets 100 / 30 / 10 / 5. sr-bench read 100 as the whole prompt: 100 - 30 - 10 = 60 fresh.
    Cost at {1, 0.1, 1.25, 3}: (100·1 + 30·0.1 + 10·1.25 + 5·3) / 1e6 = 130.5e-6;
    cache-neutral: (140·1 + 5·3) / 1e6 = 155e-6."""
    raw = {
        "input_tokens": 100,
        "output_tokens": 5,
        "cache_read_input_tokens": 30,
        "cache_creation_input_tokens": 10,
    }
    usage = normalize_usage(raw)
    assert usage == {
        "input_tokens": 100,
        "cached_input_tokens": 30,
        "cache_write_tokens": 10,
        "output_tokens": 5,
    }
    assert cost_for(usage, "m", PRICES) == pytest.approx(130.5e-6, rel=1e-12)
    assert cache_neutral_cost(usage, "m", PRICES) == pytest.approx(155e-6, rel=1e-12)
    assert usage_presence(raw) == (True, True)
    # a router's model-usage receipt keeps sr-bench's reading (its aliases are ours)
    assert normalize_usage(raw, provider_input=False)["input_tokens"] == 60


def test_a_warm_anthropic_cache_no_longer_fails_the_call():
    """Cache reads above fresh input are a normal warm cache: input 5, cache read 100,
    creation 20 is a prompt of 125 (buckets 5 / 100 / 20 / 10). sr-bench's reading made it
    5 - 100 - 20 < 0: "Invalid token usage buckets"."""
    raw = {
        "input_tokens": 5,
        "output_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    }
    assert normalize_usage(raw) == {
        "input_tokens": 5,
        "cached_input_tokens": 100,
        "cache_write_tokens": 20,
        "output_tokens": 10,
    }
    with pytest.raises(UsageObjectError, match="Invalid token usage buckets"):
        normalize_usage(raw, provider_input=False)
    only_reads = {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 100}
    assert normalize_usage(only_reads)["cached_input_tokens"] == 100  # prompt 105
    for bad in ({"input_tokens": -1}, {"input_tokens": True}, {"cache_read_input_tokens": "x"}):
        with pytest.raises(UsageObjectError, match="Invalid token usage buckets"):
            normalize_usage({**raw, **bad})
    assert normalize_usage({**raw, "input_tokens": None}) is None  # unknown, never 0


@pytest.mark.parametrize(
    ("raw", "fresh"),
    [
        # OpenAI chat: prompt_tokens is the whole prompt, exactly as before (LiteLLM also adds
        # Anthropic's top-level cache fields beside it): 100 - 20 - 10 = 70
        (
            {
                "prompt_tokens": 100,
                "completion_tokens": 1,
                "cache_read_input_tokens": 20,
                "cache_creation_input_tokens": 10,
            },
            70,
        ),
        # OpenAI Responses API: input_tokens with a details object is the whole prompt
        (
            {
                "input_tokens": 100,
                "output_tokens": 1,
                "input_tokens_details": {"cached_tokens": 20},
            },
            80,
        ),
        # no cache field at all: input_tokens is the whole prompt either way
        ({"input_tokens": 100, "output_tokens": 1}, 100),
    ],
)
def test_openai_shapes_keep_the_whole_prompt_reading(raw, fresh):
    assert normalize_usage(raw)["input_tokens"] == fresh


def test_cost_unknown_without_usage_or_price():
    usage = normalize_usage({"prompt_tokens": 1, "completion_tokens": 1})
    assert cost_for(None, "m", PRICES) is None
    assert cost_for(usage, "unpriced-model", PRICES) is None
    assert cache_neutral_cost(usage, "unpriced-model", PRICES) is None


def test_known_cost_predicate_and_sum():
    assert is_known_cost(0) and is_known_cost(0.5)
    assert not any(is_known_cost(v) for v in (None, True, -1.0, float("nan"), float("inf"), "1"))
    assert sum_cost([]) is None
    assert sum_cost([0.1, None]) is None
    assert sum_cost([0.1, 0.2]) == pytest.approx(0.3)
