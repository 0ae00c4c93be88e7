"""The simulated router over HTTP: routing a chat request and the ``x-vsr-*`` headers of its
answer, the routing preview (``POST /api/v1/routing/preview``), the config endpoint
(``GET /config/router``) and router registration (``POST /srbench/routers``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pytest_srbench.core.calls.receipts import MODEL_USAGE_HEADER, MODEL_USAGE_MAX_BYTES
from pytest_srbench.core.canonical import digest
from pytest_srbench.simulator.http import Request, Response, json_response, problem
from pytest_srbench.simulator.play import SimPlan
from pytest_srbench.simulator.profiles import SimModel, prompt_tokens
from pytest_srbench.simulator.router import (
    RouteDecision,
    SimRouter,
    active_config_hash,
    config_etag,
    config_hash,
    fusion_usage,
    latest_user_text,
    model_usage_receipt,
    recipe_config,
    route,
)

if TYPE_CHECKING:
    from pytest_srbench.simulator.server import SimulatorState

# one byte past the harness's limit would do; 64 past makes the refusal unmistakable
OVERSIZED_RECEIPT_BYTES = MODEL_USAGE_MAX_BYTES + 64


def _problem(status: int, message: str) -> Response:
    return problem(status, message, headers={"x-srbench-simulator": "1"})


def max_inference_calls(headers: Mapping[str, str]) -> int | None:
    """The ``X-SR-Bench-Max-Inference-Calls`` limit, or None when absent or not a positive int."""
    raw = headers.get("X-SR-Bench-Max-Inference-Calls", "").strip()
    return int(raw) if raw.isdigit() and int(raw) >= 1 else None


def _debug(headers: Mapping[str, str]) -> bool:
    return headers.get("X-VSR-Debug", "").strip().lower() == "true"


def _served(models: Mapping[str, SimModel], name: str) -> str:
    model = models.get(name)
    return (model.response_model or model.name) if model is not None else name


def route_chat(
    state: SimulatorState, router: SimRouter, body: dict[str, Any], headers: Mapping[str, str]
) -> RouteDecision:
    """Route one chat request, recording the session's model for stickiness."""
    return route(
        router,
        body["messages"],
        state.sessions,
        headers.get("x-session-id") or None,
        max_inference_calls=max_inference_calls(headers),
    )


def _receipt(
    router: SimRouter,
    decision: RouteDecision,
    plan: SimPlan,
    models: Mapping[str, SimModel],
    messages: list[Any],
) -> tuple[str, int]:
    first = _served(models, decision.model)
    prompt = int(plan.usage["prompt_tokens"]) if plan.usage else prompt_tokens(messages)
    calls: list[tuple[str, Mapping[str, Any] | None]] = [(first, plan.usage)]
    for name in decision.inference_models[1:]:
        calls.append((_served(models, name), fusion_usage(name, messages, prompt)))
    if router.receipt_fault == "too_many_calls":
        extra = router.fusion_model or router.default.model
        while len(calls) < 3:
            calls.append((_served(models, extra), fusion_usage(extra, messages, prompt)))
    receipt = model_usage_receipt(calls, complete=plan.usage is not None)
    if router.receipt_fault == "oversized":
        pad = OVERSIZED_RECEIPT_BYTES - len(receipt)
        receipt = receipt[:-1] + ',"padding":"' + "x" * max(pad, 1) + '"}'
    elif router.receipt_fault == "malformed":
        receipt = receipt[: len(receipt) // 2]
    return receipt, len(calls)


def answer_headers(
    router: SimRouter,
    decision: RouteDecision,
    plan: SimPlan,
    models: Mapping[str, SimModel],
    body: dict[str, Any],
    request_headers: Mapping[str, str],
) -> dict[str, str]:
    """The router's response headers: the receipt and config hash always, the selection only
    with ``X-VSR-Debug: true`` (and the session phase only for a request with a session id)."""
    receipt, count = _receipt(router, decision, plan, models, body["messages"])
    echoed = active_config_hash(router)
    if router.receipt_fault == "wrong_hash":
        echoed = digest(["not-the-config", echoed])
    headers = {MODEL_USAGE_HEADER: receipt, "x-vsr-config-hash": echoed}
    if _debug(request_headers):
        headers["x-vsr-selected-model"] = _served(models, decision.model)
        headers["x-vsr-selected-decision"] = decision.decision
        headers["x-vsr-inference-call-count"] = str(count)
        if request_headers.get("x-session-id"):
            headers["x-vsr-session-phase"] = decision.phase
    return headers


def _preview_problem(body: Any) -> str | None:
    if not isinstance(body, dict):
        return "expected a JSON object"
    if not isinstance(body.get("model"), str):
        return "'model' must be a string"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "'messages' must be a non-empty array"
    if not all(isinstance(message, dict) for message in messages):
        return "every message must be an object"
    max_tokens = body.get("max_tokens")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)):
        return "'max_tokens' must be an integer"
    if not isinstance(body.get("options", {}), dict):
        return "'options' must be an object"
    context = body.get("preview_context", {})
    if not isinstance(context, dict):
        return "'preview_context' must be an object"
    for key in ("session_id", "conversation_id"):
        if context.get(key) is not None and not isinstance(context[key], str):
            return f"'preview_context.{key}' must be a string"
    seed = context.get("sampling_seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        return "'preview_context.sampling_seed' must be an integer"
    return None


async def routing_preview(request: Request) -> Response:
    """Where a request would go, without answering it (never records session state)."""
    state: SimulatorState = request.state
    try:
        body = request.json()
    except ValueError:
        return _problem(400, "request body is not valid JSON")
    problem = _preview_problem(body)
    if problem is not None:
        return _problem(400, problem)
    router = state.routers.get(body["model"])
    if router is None:
        return _problem(404, f"router {body['model']!r} is not simulated here")
    context = body.get("preview_context") or {}
    decision = route(
        router,
        body["messages"],
        state.sessions,
        context.get("session_id") or None,
        max_inference_calls=max_inference_calls(request.headers),
        record=False,
    )
    result: dict[str, Any] = {
        "selected_model": _served(state.models, decision.model),
        "selection_status": "selected",
        "selection_reason": decision.reason,
        "selection_method": "static",
        "decision_result": {"decision_name": decision.decision, "confidence": 1.0},
        "inference_models": [_served(state.models, name) for name in decision.inference_models],
        "config_hash": active_config_hash(router),
        "session_phase": decision.phase,
    }
    if (body.get("options") or {}).get("trace"):
        result["trace"] = {
            "latest_user_chars": len(latest_user_text(body["messages"])),
            "sticky_session": decision.sticky,
            "fused": len(decision.inference_models) > 1,
        }
    return json_response(result)


async def router_config(request: Request) -> Response:
    """The router's generated config with its hash, the active hash and an ETag."""
    state: SimulatorState = request.state
    name = request.query.get("router") or next(iter(state.routers), "")
    router = state.routers.get(name)
    if router is None:
        return _problem(404, f"router {name!r} is not simulated here")
    etag = config_etag(router)
    if request.headers.get("If-None-Match") == etag:
        return Response(status=304, headers={"ETag": etag})
    document = {
        "config_hash": config_hash(router),
        "active_config_hash": active_config_hash(router),
        "config": recipe_config(router),
    }
    return json_response(document, headers={"ETag": etag})


async def register_routers(request: Request) -> Response:
    """Add or replace routers from a JSON list of SimRouter objects (or ``{"routers": [...]}``)."""
    state: SimulatorState = request.state
    try:
        body = request.json()
    except ValueError:
        return _problem(400, "request body is not valid JSON")
    raw = body.get("routers") if isinstance(body, dict) else body
    if not isinstance(raw, list):
        return _problem(400, "expected a JSON list of routers")
    try:
        routers = [SimRouter.model_validate(item) for item in raw]
    except ValidationError as error:
        return _problem(400, f"invalid simulated router: {error}")
    for router in routers:
        unknown = [name for name in router.models() if name not in state.models]
        if unknown:
            return _problem(400, f"router {router.name!r} uses unknown models {unknown}")
        if router.name in state.models:
            return _problem(400, f"router name {router.name!r} is a simulated model's name")
    state.routers.update({router.name: router for router in routers})
    return json_response(
        {
            "registered": [router.name for router in routers],
            "config_hashes": {router.name: config_hash(router) for router in routers},
        }
    )
