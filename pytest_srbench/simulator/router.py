"""The simulated semantic router (pure data and decisions, no I/O): its rules, config hash,
routing with session stickiness and fusion, the model-usage receipt and the config document.

It mimics vLLM Semantic Router's Mixture-of-Models entrypoint closely enough for the
benchmark to treat it as a ``mom`` target: a request names the router as its model, the
router picks a decision and a simulated model, and sometimes (``fusion_rate``) makes a second
inference call whose usage shows up only in the ``x-vsr-model-usage`` receipt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_srbench.core.calls.receipts import request_phase
from pytest_srbench.core.canonical import digest
from pytest_srbench.simulator.profiles import unit

ReceiptFault = Literal["oversized", "malformed", "wrong_hash", "too_many_calls"]
SelectionReason = Literal["keyword", "length", "default"]


class SimRoute(BaseModel):
    """One routing rule: a decision name, its model and what selects it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    decision: str
    model: str = Field(description="A simulated model name.")
    keywords: list[str] = Field(
        default_factory=list,
        description="Case-insensitive substrings of the latest user message that select it.",
    )
    min_chars: int | None = Field(
        None, ge=0, description="Selects this route when the latest user message is this long."
    )


class SimRouter(BaseModel):
    """A simulated Mixture-of-Models router: ordered rules (first match wins) and a default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    routes: list[SimRoute] = Field(default_factory=list)
    default: SimRoute
    fusion_rate: float = Field(
        0.0, ge=0, le=1, description="Share of requests answered by two inference calls."
    )
    fusion_model: str | None = Field(None, description="The second model of a fused request.")
    sticky_sessions: bool = True
    config_version: int = Field(1, ge=1)
    secret_api_key: str = "sk-sim-router-not-a-real-key"
    backend_base_url: str = "http://10.0.0.7:8000/v1"
    receipt_fault: ReceiptFault | None = Field(
        None, description="Make responses carry a broken receipt or config hash (for tests)."
    )
    active_lag: bool = Field(
        False, description="The running config is the previous version (not yet applied)."
    )

    def models(self) -> list[str]:
        """Every simulated model this router can call, in first-use order."""
        names = [route.model for route in [*self.routes, self.default]]
        if self.fusion_model is not None:
            names.append(self.fusion_model)
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class RouteDecision:
    """Where one request goes: the first of ``inference_models`` answers."""

    decision: str
    model: str
    inference_models: list[str]
    phase: str
    reason: SelectionReason
    sticky: bool = False


def _routing_config(router: SimRouter) -> dict[str, Any]:
    return {
        "routes": [rule.model_dump(mode="json") for rule in router.routes],
        "default": router.default.model_dump(mode="json"),
        "fusion": {"rate": router.fusion_rate, "model": router.fusion_model},
        "sticky_sessions": router.sticky_sessions,
        "config_version": router.config_version,
    }


def config_hash(router: SimRouter) -> str:
    """SHA-256 of the routing-relevant config (never the secret or the backend URL)."""
    return digest(_routing_config(router))


def active_config_hash(router: SimRouter) -> str:
    """The hash of the config the router runs: the previous version while ``active_lag``."""
    if router.active_lag:
        return config_hash(router.model_copy(update={"config_version": router.config_version - 1}))
    return config_hash(router)


def latest_user_text(messages: Sequence[Any]) -> str:
    """The text of the last user message (text parts joined), or ``""``."""
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(
                    str(part.get("text", ""))
                    for part in content
                    if isinstance(part, Mapping) and part.get("type") == "text"
                )
            return ""
    return ""


def _match(router: SimRouter, text: str) -> tuple[SimRoute, SelectionReason]:
    lowered = text.lower()
    for rule in router.routes:
        if any(keyword.lower() in lowered for keyword in rule.keywords if keyword):
            return rule, "keyword"
        if rule.min_chars is not None and len(text) >= rule.min_chars:
            return rule, "length"
    return router.default, "default"


def _rule_for_model(router: SimRouter, model: str) -> tuple[SimRoute, SelectionReason] | None:
    for rule in router.routes:
        if rule.model == model:
            return rule, "keyword" if rule.keywords else "length"
    return (router.default, "default") if router.default.model == model else None


def fused(router: SimRouter, messages: Sequence[Any]) -> bool:
    """Whether this request is answered by two inference calls (a draw from the messages)."""
    if router.fusion_model is None or router.fusion_rate <= 0:
        return False
    return unit(router.name, "fusion", digest(list(messages))) < router.fusion_rate


def route(
    router: SimRouter,
    messages: Sequence[Any],
    session_state: dict[str, str],
    session_id: str | None = None,
    *,
    max_inference_calls: int | None = None,
    record: bool = True,
) -> RouteDecision:
    """Decide one request. A ``tool_loop`` request of a known sticky session keeps the session's
    model; ``record`` stores the chosen model as the session's (previews pass False)."""
    phase = request_phase(messages)
    rule, reason = _match(router, latest_user_text(messages))
    model, sticky = rule.model, False
    if router.sticky_sessions and session_id and phase == "tool_loop":
        previous = session_state.get(session_id)
        if previous is not None:
            model, sticky = previous, True
            rule, reason = _rule_for_model(router, previous) or (rule, reason)
    inference = [model]
    if router.fusion_model is not None and fused(router, messages):
        inference.append(router.fusion_model)
    if max_inference_calls is not None and max_inference_calls >= 1:
        inference = inference[:max_inference_calls]
    if record and session_id:
        session_state[session_id] = model
    return RouteDecision(
        decision=rule.decision,
        model=model,
        inference_models=inference,
        phase=phase,
        reason=reason,
        sticky=sticky,
    )


def receipt_usage(usage: Mapping[str, Any]) -> dict[str, int]:
    """An OpenAI usage object in the receipt's form (prompt tokens include cached and written)."""
    details = usage.get("prompt_tokens_details") or {}
    return {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "cached_input_tokens": int(details.get("cached_tokens") or 0),
        "cache_write_tokens": int(usage.get("cache_creation_input_tokens") or 0),
    }


def fusion_usage(model: str, messages: Sequence[Any], prompt: int) -> dict[str, Any]:
    """A plausible OpenAI usage of a fused request's second call: the same prompt, a short
    deterministic completion, no prompt cache."""
    completion = 8 + int(unit(model, digest(list(messages)), "fusion-completion") * 24)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0},
    }


def model_usage_receipt(
    calls: Sequence[tuple[str, Mapping[str, Any] | None]], complete: bool
) -> str:
    """The ``x-vsr-model-usage`` header value for (model, OpenAI usage) inference calls; a call
    whose usage is unknown (None) is listed without usage."""
    entries = [
        {"model": model} if usage is None else {"model": model, "usage": receipt_usage(usage)}
        for model, usage in calls
    ]
    return json.dumps({"version": 1, "complete": complete, "calls": entries}, separators=(",", ":"))


def recipe_config(router: SimRouter) -> dict[str, Any]:
    """The full config document a router's config endpoint serves (secrets included)."""
    return {
        "version": router.config_version,
        "decisions": [rule.model_dump(mode="json") for rule in router.routes],
        "default": router.default.model_dump(mode="json"),
        "fusion": {"rate": router.fusion_rate, "model": router.fusion_model},
        "sticky_sessions": router.sticky_sessions,
        "backends": [
            {"model": model, "base_url": router.backend_base_url, "api_key": router.secret_api_key}
            for model in router.models()
        ],
    }


def config_etag(router: SimRouter) -> str:
    """A quoted ETag from the config version and hash."""
    return f'"v{router.config_version}-{config_hash(router)[:16]}"'


DEFAULT_ROUTER = SimRouter(
    name="sim-router",
    routes=[
        SimRoute(
            decision="reasoning",
            model="sim-large",
            keywords=[
                "prove",
                "calculate",
                "physics",
                "chemistry",
                "biology",
                "math",
                "explain why",
                "quantum",
                "molecule",
                "reaction",
                "equation",
                "theorem",
                "probability",
            ],
            min_chars=1200,
        ),
        SimRoute(
            decision="coding",
            model="sim-large",
            keywords=["python", "def ", "function", "program", "terminal", "shell"],
        ),
    ],
    default=SimRoute(decision="general", model="sim-small"),
    fusion_rate=0.1,
    fusion_model="sim-large",
)
