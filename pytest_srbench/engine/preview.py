"""One routing-preview call (preview mode): POST the case to the router's preview endpoint
and return its routing details.

A preview generates no answer, so its receipt has zero tokens and zero cost (known, not
unknown) and ``inference_call_count`` 0.
"""

from __future__ import annotations

from typing import Any

from pytest_srbench.core.calls.preview import (
    preview_envelope,
    preview_url,
    routing_decision,
    routing_from_response,
)
from pytest_srbench.core.calls.receipts import request_phase
from pytest_srbench.core.calls.usage import UsageBuckets
from pytest_srbench.core.records import CallReceipt
from pytest_srbench.engine.call import CellCalls
from pytest_srbench.engine.json_call import json_call
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.transport.auth import auth_header

ZERO_USAGE = UsageBuckets(input_tokens=0, cached_input_tokens=0, cache_write_tokens=0,
                          output_tokens=0)  # fmt: skip


def _receipt(routing: dict[str, Any]) -> CallReceipt:
    selected = routing.get("selected_model")
    return {
        "routing": routing,
        "selected_model": selected if isinstance(selected, str) and selected else None,
        "decision": routing_decision(routing),
        "usage": ZERO_USAGE.copy(),
    }


async def preview_call(rt: RunRuntime, cell: CellCalls) -> dict[str, Any]:
    """Ask the cell's router where it would route the case; the routing details."""
    target = cell.target
    url = preview_url(target, rt.base_urls.get(target.id) or target.base_url)
    body = preview_envelope(rt.manifest, target, cell.case)
    headers = auth_header(target.preview_api_key_env or target.api_key_env)
    if target.config_hash:
        headers["X-SR-Bench-Expected-Config-Hash"] = target.config_hash
    routing, _ = await json_call(
        rt,
        cell,
        kind="preview",
        url=url,
        body=body,
        headers=headers,
        label="Preview",
        parse=lambda raw: routing_from_response(raw, target),
        receipt=_receipt,
        row_extra={
            "phase": request_phase(body["messages"]),
            "phase_source": "request",
            "cost_usd": 0.0,
            "cost_complete": True,
            "inference_call_count": 0,
        },
    )
    return routing
