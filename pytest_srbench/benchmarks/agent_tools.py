"""The tool-call protocol shared by agent benchmarks: tool schemas, reading a reply's tool
calls, and the assistant / tool messages that carry a loop forward."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.benchmarks.base import ModelReply


def function_tool(
    name: str, description: str, properties: Mapping[str, Any], required: Sequence[str]
) -> dict[str, Any]:
    """One OpenAI-style function tool."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": dict(properties),
                "required": list(required),
            },
        },
    }


def decode_arguments(raw: Mapping[str, Any] | str | None) -> dict[str, Any] | None:
    """Arguments as an object: an object as it is, JSON text decoded (empty text: no
    arguments); None when the text is not a JSON object."""
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def parse_arguments(call: Mapping[str, Any]) -> dict[str, Any] | None:
    """A tool call's arguments as an object, or None when they are not valid JSON."""
    return decode_arguments((call.get("function") or {}).get("arguments"))


def assistant_message(reply: ModelReply) -> dict[str, Any]:
    """The assistant turn to append after a reply (with its tool calls, ids made stable)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.get("id") or f"call_{index}",
                "type": "function",
                "function": {
                    "name": (call.get("function") or {}).get("name", ""),
                    "arguments": (call.get("function") or {}).get("arguments") or "{}",
                },
            }
            for index, call in enumerate(reply.tool_calls)
        ]
    return message


def tool_message(call: Mapping[str, Any], content: str) -> dict[str, Any]:
    """The tool result that answers one call."""
    return {"role": "tool", "tool_call_id": call.get("id") or "call_0", "content": content}
