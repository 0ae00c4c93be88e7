"""How big a managed model server must be for a plan, and whether the plan's time limits give
its slowest case time: arithmetic over token counts and throughput measured on the server.

A llama-server slot holds one conversation; its context must take the longest prompt the plan
sends plus ``max_tokens``. Every slot gets that context (the total is times the slots). A case
that cannot fit the model's trained context is refused before the run, unless the target sets
its context itself. Time: with every slot busy on a prompt as long as the longest, the last
first token comes after ``slots × longest / prompt throughput`` (a throughput that falls with
the prompt's length: ``LENGTH_SCALE``); the plan's ``idle_timeout_s``
(silence before a first token) and ``total_timeout_s`` must cover that, with a margin.
Without a plan (benchmarks written as tests are known only after collection) the context is
the model's trained context.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pytest_srbench.core.models import LIMIT_PRESETS, Limits

CONTEXT_STEP = 256  # contexts are rounded up to this many tokens
MIN_CONTEXT = 512
TEMPLATE_MARGIN = 16  # tokens a server may add around a rendered prompt (BOS, generation cue)
TIME_MARGIN = 1.5  # measured throughput varies with load: limits must cover 1.5 × the estimate
DEFAULT_SLOTS = 4
# Prompt throughput at length L is about the short probe's / (1 + L / LENGTH_SCALE): measured on
# SmolLM2-135M (llama.cpp, one thread), 3,426 tokens went at 0.54x and 6,852 at 0.40x the rate
# of a 200-token prompt. Larger models spend relatively less on attention: this is cautious.
LENGTH_SCALE = 4096


@dataclass(frozen=True)
class PromptSize:
    """A case's first request, in the server's own tokens."""

    case_id: str
    tokens: int


@dataclass(frozen=True)
class Throughput:
    """Tokens per second one slot of the server processed (prompt) and generated."""

    prompt_per_s: float
    generated_per_s: float


@dataclass(frozen=True)
class ServerSize:
    """What a managed server is started with, and why."""

    slots: int
    context_per_slot: int
    longest: PromptSize | None
    max_tokens: int
    chosen: str  # "plan", "configured", or "model" (no plan known: the trained context)

    @property
    def total_context(self) -> int:
        return self.context_per_slot * self.slots


class DoesNotFit(ValueError):
    """A case of the plan cannot be served: the message names it and what to change."""


def default_slots(concurrency: int) -> int:
    """As many slots as cells in flight, at most four (llama-server's own default)."""
    return max(1, min(DEFAULT_SLOTS, concurrency))


def size_server(
    *,
    target_id: str,
    longest: PromptSize | None,
    max_tokens: int,
    slots: int,
    trained_context: int | None,
    configured_context: int | None = None,
) -> ServerSize:
    """The context per slot: the configured one, or the longest prompt plus ``max_tokens``
    rounded up (at least 512 tokens). A case that does not fit is refused, naming it."""
    need = (longest.tokens + TEMPLATE_MARGIN if longest else 0) + max_tokens
    if longest is None and configured_context is None and trained_context is not None:
        if max_tokens > trained_context:
            raise DoesNotFit(
                f"target {target_id!r}: max_tokens {max_tokens} is more than the model's "
                f"trained context of {trained_context}: lower max_tokens"
            )
        return ServerSize(slots, trained_context, None, max_tokens, "model")
    if configured_context is not None:
        if longest is not None and need > configured_context:
            raise DoesNotFit(
                f"target {target_id!r}: case {longest.case_id} needs {need} tokens (its prompt "
                f"{longest.tokens} + max_tokens {max_tokens}), more than the configured context "
                f"of {configured_context} per slot: raise [tool.srbench.targets.server] "
                "context, lower max_tokens, or deselect the case"
            )
        return ServerSize(slots, configured_context, longest, max_tokens, "configured")
    context = max(MIN_CONTEXT, math.ceil(need / CONTEXT_STEP) * CONTEXT_STEP)
    if trained_context is not None and need > trained_context:
        culprit = (
            f"case {longest.case_id} needs {need} tokens (its prompt {longest.tokens} + "
            f"max_tokens {max_tokens})"
            if longest is not None
            else f"max_tokens {max_tokens} needs {need} tokens"
        )
        raise DoesNotFit(
            f"target {target_id!r}: {culprit}, more than the model's trained context of "
            f"{trained_context}: deselect the case (-k, --srbench-limit), lower max_tokens, or "
            f"set [tool.srbench.targets.server] context = {context} to run it past that "
            "context (the model's answers there are unreliable)"
        )
    if trained_context is not None:
        context = min(context, trained_context)
    return ServerSize(slots, context, longest, max_tokens, "plan")


def first_token_s(size: ServerSize, speed: Throughput) -> float:
    """Seconds to the first token of the longest prompt while every slot works on one as
    long: the prompts share the server's prompt throughput, which falls with a prompt's
    length (attention over it) as ``1 / (1 + tokens / LENGTH_SCALE)`` of the short probe's."""
    longest = size.longest.tokens if size.longest else 0
    slowdown = 1 + longest / LENGTH_SCALE
    return size.slots * longest * slowdown / max(speed.prompt_per_s, 1e-9)


def time_problem(target_id: str, size: ServerSize, speed: Throughput, limits: Limits) -> str | None:
    """Why the plan's time limits would cut the slowest first token short on this server, or
    None. (Generation is not held against the limits: most answers end well before
    ``max_tokens``, and one that runs past ``total_timeout_s`` fails with that reason.)"""
    first = first_token_s(size, speed)
    needed = first * TIME_MARGIN
    short_limits = [
        (name, value)
        for name, value in (
            ("idle_timeout_s", limits.idle_timeout_s),
            ("total_timeout_s", limits.total_timeout_s),
        )
        if needed > value
    ]
    short = [f"{name} {value:g}" for name, value in short_limits]
    if not short or size.longest is None:
        return None
    slow = LIMIT_PRESETS["slow_server"]
    fixes = []
    if needed <= min(slow["idle_timeout_s"], slow["total_timeout_s"]) and (
        limits.idle_timeout_s < slow["idle_timeout_s"]
        or limits.total_timeout_s < slow["total_timeout_s"]
    ):  # the preset is enough and not yet in force
        fixes.append('set [tool.srbench.limits] preset = "slow_server"')
    fixes.append(f"raise {' and '.join(name for name, _ in short_limits)} in [tool.srbench.limits]")
    if size.slots > 1:
        fixes.append("use fewer slots ([tool.srbench.targets.server] slots = 1)")
    return (
        f"target {target_id!r}: at the measured {speed.prompt_per_s:.0f} prompt tokens/s, its "
        f"longest prompt ({size.longest.case_id}, {size.longest.tokens} tokens) with "
        f"{size.slots} slot(s) busy waits about {first:.0f} s for its first token; the plan's "
        f"{' and '.join(short)} must be at least {math.ceil(needed)} s (1.5 × that): "
        + ", or ".join(fixes)
    )
