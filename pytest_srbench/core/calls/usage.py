"""Token usage in four exclusive buckets, pricing, and the cache-neutral counterfactual.

Follows sr-bench 1.0 (reference/report-and-accounting.md §2): unknown usage is ``None`` and
never 0; conflicting or invalid usage raises ``UsageObjectError``. One deliberate difference:
Anthropic-style usage (``input_tokens`` beside a top-level ``cache_read_input_tokens`` /
``cache_creation_input_tokens``, without ``prompt_tokens`` or a details object) is read with
the provider's meaning, fresh input excluding the cache tokens (see ``anthropic_style``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

from pytest_srbench.core.calls.failures import UsageObjectError

BUCKETS = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
WRITE_ALIASES_IN_DETAILS = ("cache_write_tokens", "cache_creation_tokens", "created_cache_tokens")
CACHE_NEUTRAL_BASIS = (
    "Counterfactual token-equivalent subject cost: all prompt tokens at the frozen fresh-input "
    "rate plus output; not billed spend."
)


class UsageBuckets(TypedDict):
    """Four mutually exclusive token buckets; input + cached + write = total prompt tokens."""

    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _details(raw: Mapping[str, Any]) -> Any:
    return raw.get("prompt_tokens_details") or raw.get("input_tokens_details") or {}


CACHE_FIELDS = ("cache_read_input_tokens", "cache_creation_input_tokens")


def anthropic_style(raw: Mapping[str, Any]) -> bool:
    """Whether ``input_tokens`` is the provider's *fresh* input (Anthropic's meaning).

    Anthropic reports ``input_tokens`` after the cache breakpoint, beside
    ``cache_read_input_tokens`` and ``cache_creation_input_tokens``: the whole prompt is their
    sum. sr-bench reads ``input_tokens`` as the whole prompt and subtracts the cache tokens
    from it, which under-counts fresh input and fails every call once cache reads exceed
    fresh input (a warm cache). The OpenAI shapes are unchanged: ``prompt_tokens``, and the
    Responses API's ``input_tokens`` with ``input_tokens_details`` (whole prompt there)."""
    return (
        "prompt_tokens" not in raw
        and "input_tokens" in raw
        and not _details(raw)
        and any(raw.get(key) is not None for key in CACHE_FIELDS)
    )


def normalize_usage(raw: object, *, provider_input: bool = True) -> UsageBuckets | None:
    """Normalise a provider usage object into four buckets, or ``None`` when totals are missing.

    ``provider_input=False`` keeps sr-bench's reading of ``input_tokens`` as the whole prompt
    for every shape (a router's model-usage receipt, whose aliases are ours, not a provider's).
    """
    if not isinstance(raw, dict):
        raise UsageObjectError("Invalid token usage object")
    details = _details(raw)
    if not isinstance(details, dict):
        raise UsageObjectError("Invalid token usage object (details)")
    fresh_input = provider_input and anthropic_style(raw)
    total = raw["prompt_tokens"] if "prompt_tokens" in raw else raw.get("input_tokens")
    output = raw["completion_tokens"] if "completion_tokens" in raw else raw.get("output_tokens")
    if "cached_tokens" in details:
        cached = details["cached_tokens"]
    else:
        cached = raw.get("cache_read_input_tokens", 0)
    writes = [details.get(alias) for alias in WRITE_ALIASES_IN_DETAILS]
    writes.append(raw.get("cache_creation_input_tokens"))
    present = [value for value in writes if value is not None]
    for value in present[1:]:
        if value != present[0] or type(value) is not type(present[0]):
            raise UsageObjectError("Conflicting cache-write token usage")
    written = present[0] if present else 0
    if total is None or output is None:
        return None
    if not all(_is_count(value) for value in (total, output, cached, written)):
        raise UsageObjectError("Invalid token usage buckets")
    if fresh_input:
        total += cached + written  # the whole prompt: fresh + cache reads + cache writes
    if cached + written > total:
        raise UsageObjectError("Invalid token usage buckets")
    return UsageBuckets(
        input_tokens=total - cached - written,
        cached_input_tokens=cached,
        cache_write_tokens=written,
        output_tokens=output,
    )


def usage_presence(raw: object) -> tuple[bool, bool]:
    """Whether the provider reported cache reads and cache writes (an explicit 0 counts)."""
    if not isinstance(raw, dict):
        return (False, False)
    details = _details(raw)
    if not isinstance(details, dict):
        return (False, False)
    read = (
        details.get("cached_tokens") is not None or raw.get("cache_read_input_tokens") is not None
    )
    write = any(details.get(alias) is not None for alias in WRITE_ALIASES_IN_DETAILS) or (
        raw.get("cache_creation_input_tokens") is not None
    )
    return (read, write)


def is_known_cost(value: object) -> bool:
    """A known cost is a finite, non-negative int or float that is not a bool."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )


def known_cost(value: object) -> float | None:
    """A known cost (``is_known_cost``) as a float; ``None`` for an unknown one."""
    return float(value) if is_known_cost(value) else None  # type: ignore[arg-type]


def _price(
    usage: object, model: str | None, prices: Mapping[str, Mapping[str, float]]
) -> Mapping[str, float] | None:
    """The frozen prices of ``model`` when both the usage and the model are known."""
    if usage is None or model is None:
        return None
    return prices.get(model)


def cost_for(
    usage: UsageBuckets | Mapping[str, int] | None,
    model: str | None,
    prices: Mapping[str, Mapping[str, float]],
) -> float | None:
    """USD cost of ``usage`` at the frozen prices of ``model``; ``None`` if either is unknown."""
    price = _price(usage, model, prices)
    if usage is None or price is None:
        return None
    return (
        usage["input_tokens"] * price["input"]
        + usage["cached_input_tokens"] * price["cached_input"]
        + usage["cache_write_tokens"] * price["cache_write"]
        + usage["output_tokens"] * price["output"]
    ) / 1_000_000


def cache_neutral_cost(
    usage: UsageBuckets | Mapping[str, int] | None,
    model: str | None,
    prices: Mapping[str, Mapping[str, float]],
) -> float | None:
    """Counterfactual cost with every prompt token at the fresh-input rate; not billed spend."""
    price = _price(usage, model, prices)
    if usage is None or price is None:
        return None
    prompt = usage["input_tokens"] + usage["cached_input_tokens"] + usage["cache_write_tokens"]
    return (prompt * price["input"] + usage["output_tokens"] * price["output"]) / 1_000_000


def sum_cost(costs: Iterable[object]) -> float | None:
    """Sum of costs; ``None`` when the list is empty or any member is unknown.

    ``math.fsum`` makes the sum exact-then-rounded, so it does not depend on the order in which
    calls were stored (xdist interleaves them differently from a single process).
    """
    known: list[float] = []
    for cost in costs:
        if not is_known_cost(cost):
            return None
        known.append(float(cost))  # type: ignore[arg-type]
    return math.fsum(known) if known else None


def add_buckets(parts: Iterable[UsageBuckets | Mapping[str, int]]) -> UsageBuckets:
    """Per-bucket sum; a missing key counts as 0."""
    totals = dict.fromkeys(BUCKETS, 0)
    for part in parts:
        mapping: Mapping[str, Any] = part
        for key in BUCKETS:
            totals[key] += int(mapping.get(key, 0))
    return UsageBuckets(
        input_tokens=totals["input_tokens"],
        cached_input_tokens=totals["cached_input_tokens"],
        cache_write_tokens=totals["cache_write_tokens"],
        output_tokens=totals["output_tokens"],
    )
