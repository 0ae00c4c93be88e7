"""Preview mode, pure: the routing-preview request envelope a router target receives for one
case, and the checks on its answer (run-lifecycle.md §11.1). A preview generates no answer;
it records where the router would send the request.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.models import Case, Manifest, Target
from pytest_srbench.core.plan.build import request_params_for

PREVIEW_PATH = "/api/v1/routing/preview"
CONFIG_PATH = "/config/router"
MAX_PREVIEW_BYTES = 262_144


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def preview_url(target: Target, base_url: str | None) -> str:
    """The target's preview endpoint: its frozen ``preview_url``, else (simulated routers) the
    preview path on the simulator that serves it."""
    if target.preview_url:
        return target.preview_url
    if target.simulated and base_url:
        return origin(base_url) + PREVIEW_PATH
    raise CallFailure(f"Router target {target.id} has no preview_url")


def config_url(target: Target, base_url: str | None) -> str:
    """Where a router's configuration is read for recipe capture: ``config_url``, else the
    config path next to its preview endpoint (or next to the simulator that serves it)."""
    if target.config_url:
        return target.config_url
    if target.preview_url:
        return origin(target.preview_url) + CONFIG_PATH
    if target.simulated and base_url:
        return origin(base_url) + CONFIG_PATH + f"?router={target.model}"
    raise CallFailure(f"Router target {target.id} has no config_url or preview_url")


def preview_envelope(manifest: Manifest, target: Target, case: Case) -> dict[str, Any]:
    """Case messages, the router model, the bounded max_tokens, ``options.trace`` and the
    frozen preview context."""
    if not case.messages:
        raise CallFailure(
            f"Preview needs the case's messages; {case.benchmark} builds its prompt while running"
        )
    params = request_params_for(manifest, target)
    body: dict[str, Any] = {
        "model": target.model,
        "messages": [message.model_dump(exclude_none=True) for message in case.messages],
        "options": {"trace": True},
    }
    if isinstance(params.get("max_tokens"), int):
        body["max_tokens"] = params["max_tokens"]
    if manifest.preview_context:
        body["preview_context"] = dict(manifest.preview_context)
    return body


def routing_from_response(raw: bytes, target: Target) -> dict[str, Any]:
    """The routing details of a preview answer; a non-object body or a config hash other than
    the frozen one fails the cell."""
    if len(raw) > MAX_PREVIEW_BYTES:
        raise CallFailure(f"Preview response exceeds {MAX_PREVIEW_BYTES} bytes")
    try:
        routing = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise CallFailure("Preview response is not valid JSON") from None
    if not isinstance(routing, dict):
        raise CallFailure("Preview response is not a JSON object")
    if target.config_hash is not None and routing.get("config_hash") != target.config_hash:
        raise CallFailure("Runtime configuration identity acknowledgement missing or mismatched")
    return routing


def routing_decision(routing: dict[str, Any]) -> str | None:
    """The decision name of a preview answer (``decision_result.decision_name``)."""
    result = routing.get("decision_result")
    name = result.get("decision_name") if isinstance(result, dict) else None
    return name if isinstance(name, str) and name else None
