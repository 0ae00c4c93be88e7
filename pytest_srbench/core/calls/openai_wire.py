"""The OpenAI wire shapes of a call made through ``srbench_client``: which target a request's
``model`` names, which of its fields the frozen plan allows, and the JSON a non-streaming
request gets back (the engine always streams, to measure the time to first token).

Pure: no I/O. The plugin's client turns the outcome into an HTTP response for the SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_srbench.core.models import Target
from pytest_srbench.core.plan.planned import CHAT_TARGET_KINDS

# fields the client itself takes care of: the engine always streams and always asks for usage
HANDLED_FIELDS = frozenset({"model", "messages", "stream", "stream_options"})


class ClientRequestError(ValueError):
    """A request the client cannot send as it is (it names the field and why)."""


@dataclass(frozen=True)
class ChatRequest:
    """A chat request as the engine sends it: to which target, the messages, the extra body
    (tools and the like), and whether the caller wants a stream back."""

    target_id: str
    messages: list[dict[str, Any]]
    extra_body: dict[str, Any]
    stream: bool


def resolve_target(model: object, cell_target: Target, inventory: Mapping[str, Target]) -> str:
    """The id of the plan's target a request's ``model`` names.

    A model or router cell's own target answers to its id, its model name, or no model at all;
    any chat target of the plan answers to its id, or to its model name when that is unique. A
    ``python`` target (the user's code) must name the model its code calls, and that model must
    be in the plan (select it, or declare it with ``pytest_srbench.target(..., uses=[...])``).
    """
    if model is not None and not isinstance(model, str):
        raise ClientRequestError(f"'model' must be a string, not {type(model).__name__}")
    chat = {key: t for key, t in inventory.items() if t.kind in CHAT_TARGET_KINDS}
    if cell_target.kind in CHAT_TARGET_KINDS and model in (None, cell_target.id, cell_target.model):
        return cell_target.id
    if model is None:
        raise ClientRequestError(
            f"target {cell_target.id!r} is your own code: name the model it calls "
            f"(one of {', '.join(sorted(chat)) or 'none in this plan'})"
        )
    if model in chat:
        return model
    named = [key for key, t in chat.items() if t.model == model]
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        raise ClientRequestError(
            f"model {model!r} is served by several targets ({', '.join(sorted(named))}): "
            "name one by its target id"
        )
    raise ClientRequestError(
        f"model {model!r} is not a chat target of this run's plan (known: "
        f"{', '.join(sorted(chat)) or 'none'}); select it with --srbench-target, or declare it "
        "with pytest_srbench.target(..., uses=[...])"
    )


def chat_request(
    body: object,
    cell_target: Target,
    inventory: Mapping[str, Target],
    frozen_for: Callable[[Target], Mapping[str, Any]],
    allowed_extras: frozenset[str] = frozenset(),
) -> ChatRequest:
    """Check a chat completions request body against the plan.

    The chosen target's frozen request parameters (``frozen_for``) may be repeated with the
    same value but not changed; ``allowed_extras`` (tools, response format, ...) pass through;
    any other field is refused, since the plan decides how every call is sampled.
    """
    if not isinstance(body, Mapping):
        raise ClientRequestError("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ClientRequestError("'messages' must be a non-empty list")
    if not all(isinstance(message, Mapping) for message in messages):
        raise ClientRequestError("every message must be a JSON object")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise ClientRequestError("'stream' must be true or false")
    target_id = resolve_target(body.get("model"), cell_target, inventory)
    frozen = frozen_for(inventory.get(target_id) or cell_target)
    extra: dict[str, Any] = {}
    for key, value in body.items():
        if key in HANDLED_FIELDS:
            continue
        if key in allowed_extras:
            extra[key] = value
        elif key in frozen:
            if frozen[key] != value:
                raise ClientRequestError(
                    f"{key!r}={value!r} differs from the plan's frozen {key}={frozen[key]!r}; "
                    "the plan decides how every call is sampled ([tool.srbench] sampling)"
                )
        else:
            raise ClientRequestError(
                f"{key!r} is not a request parameter of this run's plan; set it in "
                "[tool.srbench] sampling or the target's request_params"
            )
    return ChatRequest(target_id, [dict(m) for m in messages], extra, stream)


def completion_body(
    call_id: str,
    created: int,
    model: str | None,
    content: str,
    tool_calls: list[dict[str, Any]],
    finish_reason: str | None,
    usage: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The ``chat.completion`` object of a streamed call, for a caller that did not stream."""
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": call_id,
        "object": "chat.completion",
        "created": created,
        "model": model or "",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason or "stop"}],
    }
    if usage is not None:
        body["usage"] = dict(usage)
    return body


def error_body(message: str, kind: str) -> dict[str, Any]:
    """An OpenAI-style error object."""
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
