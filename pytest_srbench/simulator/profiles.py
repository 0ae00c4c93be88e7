"""Simulated model profiles and the built-in simulated targets (pure data and arithmetic)."""

from __future__ import annotations

import hashlib
import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_srbench.core.canonical import canonical_json
from pytest_srbench.core.models import Prices, Target

Fault = Literal[
    "http_500", "http_429", "stream_cut", "malformed_chunk", "usage_missing", "stall", "length", "repeat"
]  # fmt: skip


class SimModel(BaseModel):
    """How one simulated model answers: quality, speed, prompt cache, formatting and faults."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    accuracy: float = Field(0.7, ge=0, le=1)
    ttft_s: float = Field(0.1, ge=0)
    tokens_per_s: float = Field(100.0, gt=0)
    latency_s: float | None = Field(
        None, ge=0, description="Fixed total latency; overrides ttft/speed."
    )
    chunks: int | None = Field(
        None, ge=1, le=100_000, description="Pad answers to this many chunks."
    )
    prices: Prices
    cache_hit_rate: float = Field(0.5, ge=0, le=1)
    cache_block: int = Field(16, ge=1)
    report_cache_write: bool = False
    styles: dict[str, float] = Field(
        default_factory=lambda: {"bare": 0.5, "declaration": 0.4, "boxed": 0.1}
    )
    unparsed_rate: float = Field(0.0, ge=0, le=1)
    ambiguous_rate: float = Field(0.0, ge=0, le=1)
    think: bool = False
    reasoning_tokens: int = Field(0, ge=0)
    fault: Fault | None = None
    fault_rate: float = Field(0.0, ge=0, le=1)
    fault_first_attempts: int | None = Field(
        None, ge=1, description="Fault only the first N requests of a prompt."
    )
    fault_after_chunks: int = Field(2, ge=0)
    stall_s: float = Field(120.0, ge=0)
    retry_after_s: float = Field(1.0, ge=0)
    response_model: str | None = Field(
        None, description="Model name the responses carry (default: name)."
    )
    judge_format: Literal["json", "fenced", "prose"] = Field(
        "json", description="How this model answers judge prompts (prose is a malformed verdict)."
    )
    flip_rate: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Share of requests answered from a fresh draw instead of the case's fixed "
        "one: nondeterminism, so repeats of a case can disagree.",
    )
    inject_markup: str | None = Field(
        None,
        description="Text put in front of every answer (e.g. a <script> tag), to check that "
        "renderers treat model output as data.",
    )
    ignore_max_tokens: bool = Field(
        False, description="Answer in full even past the request's max_tokens."
    )


_SUBJECT_MODELS: dict[str, SimModel] = {
    "sim-large": SimModel(
        name="sim-large",
        accuracy=0.85,
        ttft_s=0.25,
        tokens_per_s=60.0,
        prices=Prices(input=2.5, cached_input=1.25, cache_write=0.0, output=10.0),
        cache_hit_rate=0.5,
        styles={"bare": 0.3, "declaration": 0.6, "boxed": 0.1},
    ),
    "sim-small": SimModel(
        name="sim-small",
        accuracy=0.55,
        ttft_s=0.06,
        tokens_per_s=200.0,
        prices=Prices(input=0.15, cached_input=0.075, cache_write=0.0, output=0.6),
        cache_hit_rate=0.3,
        unparsed_rate=0.05,
        ambiguous_rate=0.03,
        styles={"bare": 0.6, "declaration": 0.35, "boxed": 0.05},
    ),
}
DEFAULT_SIM_TARGETS = ("sim-large", "sim-small")
AUXILIARY_MODELS = {
    "sim-judge": SimModel(
        name="sim-judge",
        accuracy=1.0,
        ttft_s=0.05,
        tokens_per_s=300.0,
        prices=Prices(input=0.5, cached_input=0.25, cache_write=0.0, output=1.5),
    ),
    "sim-user": SimModel(
        name="sim-user",
        accuracy=1.0,
        ttft_s=0.05,
        tokens_per_s=300.0,
        prices=Prices(input=0.5, cached_input=0.25, cache_write=0.0, output=1.5),
    ),
}


def simulated_target(model: SimModel, target_id: str | None = None) -> Target:
    """A frozen target served by the built-in simulator."""
    served = model.response_model or model.name
    return Target(
        id=target_id or model.name,
        kind="single",
        model=model.name,
        prices={served: model.prices},
        simulated=True,
    )


def unit(*parts: Any) -> float:
    """A deterministic number in [0, 1) from any JSON-able parts (all of the simulator's draws but ``flip_rate``)."""
    raw = hashlib.sha256(canonical_json(list(parts)).encode("utf-8")).digest()
    return int.from_bytes(raw[:7], "big") / float(1 << 56)


def count_tokens(text: str) -> int:
    """A stable token estimate: one token per four characters, at least one."""
    return max(1, math.ceil(len(text) / 4))


def prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """Tokens of a chat prompt: content tokens plus four per message of framing."""
    total = 0
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else canonical_json(content)
        total += 4 + count_tokens(text or "")
    return total


BUILTIN_MODELS: dict[str, SimModel] = {**_SUBJECT_MODELS, **AUXILIARY_MODELS}
