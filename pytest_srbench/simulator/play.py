"""What the simulator answers to one request: a pure plan of status, text, usage and faults.

The simulator recognises a case by the digest of its first user message (``script_key``)
and plays the script the plugin registered for it (for MCQ: the right letter). Every
choice is a deterministic function of the model, the case and the attempt number, so a
run gives the same answers whether it runs in one process or under xdist — unless the model
has a ``flip_rate``, the one deliberate source of nondeterminism (for repeats).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from pytest_srbench.core.canonical import digest
from pytest_srbench.simulator.profiles import SimModel, prompt_tokens, unit
from pytest_srbench.simulator.protocols import Reply, judge_reply, scripted_reply

FILLER = [
    "let",
    "me",
    "reason",
    "about",
    "each",
    "option",
    "in",
    "turn",
    "and",
    "check",
    "it",
    "against",
    "what",
    "the",
    "question",
    "asks",
    "before",
    "i",
    "commit",
    "to",
    "a",
    "final",
    "choice",
]


def script_key(messages: list[dict[str, Any]]) -> str | None:
    """Identity of a case as the simulator sees it: the digest of the first user message."""
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "user":
            return digest(message.get("content"))
    return None


def opening_key(messages: list[dict[str, Any]]) -> str | None:
    """Identity of a conversation that opens with a system message and a user message (a
    conversation whose first user message many cases share, such as tau2's greeting)."""
    if len(messages) < 2 or not all(isinstance(m, dict) for m in messages[:2]):
        return None
    if [m.get("role") for m in messages[:2]] != ["system", "user"]:
        return None
    return digest([{"role": m.get("role"), "content": m.get("content")} for m in messages[:2]])


def registration_key(opening: Any) -> str | None:
    """The key a script is registered under: ``opening`` is the first user message's content,
    or the opening messages (system and first user message) as a list."""
    if isinstance(opening, list):
        return opening_key(opening)
    return script_key([{"role": "user", "content": opening}])


def lookup_key(messages: list[dict[str, Any]], registered: Any) -> str | None:
    """The key of a request's script: its opening when registered, else its first user
    message (``registered`` supports ``in``)."""
    opened = opening_key(messages)
    if opened is not None and opened in registered:
        return opened
    return script_key(messages)


def words(text: str) -> list[str]:
    """Split text into word tokens that keep their leading spaces."""
    parts = text.split(" ")
    return [parts[0], *(" " + part for part in parts[1:])] if parts else []


@dataclass
class SimPlan:
    """A fully decided response."""

    model: str
    http_status: int = 200
    error_message: str | None = None
    retry_after_s: float | None = None
    content: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    finish_reason: str = "stop"
    usage: dict[str, Any] | None = None
    include_usage: bool = True
    cut_after: int | None = None
    malformed_at: int | None = None
    stall_at: int | None = None
    stall_s: float = 0.0
    first_delay_s: float = 0.0
    tokens_per_s: float | None = None


def _choose(weights: dict[str, float], u: float) -> str:
    total = sum(weights.values()) or 1.0
    acc = 0.0
    for name, weight in sorted(weights.items()):
        acc += weight / total
        if u < acc:
            return name
    return sorted(weights)[-1]


def mcq_text(model: SimModel, key: str, script: dict[str, Any]) -> str:
    """The answer text for a multiple-choice case."""
    letters = str(script["letters"])
    answer = str(script["answer"])
    if unit(model.name, key, "unparsed") < model.unparsed_rate:
        return "I am not certain which of these options is right."
    wrong = [letter for letter in letters if letter != answer] or [answer]
    if unit(model.name, key, "ambiguous") < model.ambiguous_rate:
        other = wrong[int(unit(model.name, key, "other") * len(wrong))]
        return f"The answer is {min(answer, other)} or {max(answer, other)}."
    right = unit(model.name, key, "correct") < model.accuracy
    letter = answer if right else wrong[int(unit(model.name, key, "wrong") * len(wrong))]
    style = _choose(model.styles, unit(model.name, key, "style"))
    if style == "bare":
        return letter
    if style == "boxed":
        return f"So the result is \\boxed{{{letter}}}"
    return f"The answer is {letter}."


def answer(
    model: SimModel, key: str | None, script: dict[str, Any] | None, messages: list[dict[str, Any]]
) -> Reply:
    """The reply for a judge prompt, any known script kind, or a plain refusal."""
    judged = judge_reply(model, messages)
    if judged is not None:
        return judged
    if key is None or script is None:
        return Reply("I do not know the answer to this question.")
    if script.get("kind") == "mcq":
        return Reply(mcq_text(model, key, script))
    return scripted_reply(model, key, script, messages) or Reply(
        "I do not know the answer to this question."
    )


def _cached_tokens(model: SimModel, key: str, messages: list[dict[str, Any]], prompt: int) -> int:
    turns = [m for m in messages if isinstance(m, dict) and m.get("role") != "system"]
    block = model.cache_block
    if len(turns) > 1:
        earlier = prompt_tokens(messages[:-1])
        return min(prompt, earlier // block * block)
    if unit(model.name, key, "cache") < model.cache_hit_rate:
        return prompt // 2 // block * block
    return 0


_ENTROPY = random.Random()


def _draw_key(model: SimModel, key: str | None) -> str | None:
    """The key the answer's draws use: the case's own, or (with probability ``flip_rate``)
    a fresh one, so repeats of one case can disagree the way a sampled model's do."""
    if key is not None and model.flip_rate > 0 and _ENTROPY.random() < model.flip_rate:
        return f"{key}:{_ENTROPY.random()}"
    return key


def plan_response(
    model: SimModel, body: dict[str, Any], script: dict[str, Any] | None, attempt: int
) -> SimPlan:
    """Decide the whole response to one chat-completions request."""
    raw_messages = body.get("messages")
    messages: list[dict[str, Any]] = raw_messages if isinstance(raw_messages, list) else []
    key = script_key(messages) or digest(messages)
    served = model.response_model or model.name
    plan = SimPlan(model=served)
    stream_options = body.get("stream_options") or {}
    plan.include_usage = bool(
        isinstance(stream_options, dict) and stream_options.get("include_usage")
    )
    faulted = (
        model.fault is not None
        and unit(model.name, key, "fault") < model.fault_rate
        and (model.fault_first_attempts is None or attempt <= model.fault_first_attempts)
    )
    fault = model.fault if faulted else None
    if fault == "http_500":
        return SimPlan(model=served, http_status=500, error_message="simulated internal error")
    if fault == "http_429":
        return SimPlan(
            model=served,
            http_status=429,
            error_message="simulated rate limit",
            retry_after_s=model.retry_after_s,
        )
    reply = answer(model, _draw_key(model, script_key(messages)), script, messages)
    if model.inject_markup and reply.text:
        reply = Reply(f"{model.inject_markup}\n{reply.text}", reply.tool_calls)
    content = words(reply.text) if reply.text else []
    plan.tool_calls = reply.tool_calls
    if reply.tool_calls:
        plan.finish_reason = "tool_calls"
    text = reply.text
    if model.chunks is not None and content and len(content) < model.chunks:
        pad = model.chunks - len(content) - 1
        filler = [(" " if i else "") + FILLER[i % len(FILLER)] for i in range(max(pad, 0))]
        content = [*filler, "\n", *words(text)] if filler else content
    if model.think and content:
        content = [
            "<think>",
            *words("i should check the options carefully"),
            "</think>",
            "\n",
            *content,
        ]
    if fault == "repeat":
        content = ["ab"] * 2000
    plan.reasoning = [" thinking"] * model.reasoning_tokens
    max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
    if (
        isinstance(max_tokens, int)
        and not model.ignore_max_tokens
        and len(content) + len(plan.reasoning) > max_tokens
    ):
        content = content[: max(max_tokens - len(plan.reasoning), 0)]
        plan.finish_reason = "length"
    if fault == "length":
        content = content[: max(len(content) // 2, 1)]
        plan.finish_reason = "length"
    plan.content = content
    prompt = prompt_tokens(messages)
    cached = _cached_tokens(model, key, messages, prompt)
    tool_tokens = sum(max(1, len(call["arguments"]) // 4) for call in plan.tool_calls)
    completion = len(content) + len(plan.reasoning) + tool_tokens
    usage: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    if model.report_cache_write:
        written = (prompt - cached) // 2 // model.cache_block * model.cache_block
        usage["cache_creation_input_tokens"] = written
    plan.usage = None if fault == "usage_missing" else usage
    position = min(model.fault_after_chunks, max(len(content) + len(plan.reasoning) - 1, 0))
    if fault == "stream_cut":
        plan.cut_after = position
    elif fault == "malformed_chunk":
        plan.malformed_at = position
    elif fault == "stall":
        plan.stall_at = position
        plan.stall_s = model.stall_s
    if model.latency_s is not None:
        plan.first_delay_s = model.latency_s
        plan.tokens_per_s = None
    else:
        plan.first_delay_s = model.ttft_s
        plan.tokens_per_s = model.tokens_per_s
    return plan


def bursts(total: int, tokens_per_s: float | None, period_s: float = 0.02) -> int:
    """How many chunks to send between sleeps so a stream needs few timers."""
    if tokens_per_s is None:
        return max(total, 1)
    return max(1, math.ceil(tokens_per_s * period_s))
