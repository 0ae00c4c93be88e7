"""One journaled routing-preview call (preview mode): POST the case to the router's preview
endpoint, keep the raw answer as evidence, and return its routing details.

A preview generates no answer, so its receipt has zero tokens and zero cost (known, not
unknown) and ``inference_call_count`` 0.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import orjson

from pytest_srbench.core.failures import CallFailure, CellCancelled
from pytest_srbench.core.preview import (
    MAX_PREVIEW_BYTES,
    preview_envelope,
    preview_url,
    routing_decision,
    routing_from_response,
)
from pytest_srbench.core.receipts import request_phase
from pytest_srbench.engine.call import CellCalls, auth_header
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.store.base import now_iso
from pytest_srbench.store.writes import AppendEvent, FinishCall, InsertCall
from pytest_srbench.transport.base import HttpRequest

ZERO_USAGE = {"input_tokens": 0, "cached_input_tokens": 0, "cache_write_tokens": 0,
              "output_tokens": 0}  # fmt: skip


async def preview_call(rt: RunRuntime, cell: CellCalls) -> dict[str, Any]:
    """Ask the cell's router where it would route the case; the routing details."""
    if rt.stopping() or cell.cancelled:
        raise CellCancelled("Run cancelled or wall-time budget exhausted")
    target, case, limits = cell.target, cell.case, rt.limits
    cell.calls_made += 1
    url = preview_url(target, rt.base_urls.get(target.id) or target.base_url)
    body = preview_envelope(rt.manifest, target, case)
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    headers.update(auth_header(target.preview_api_key_env or target.api_key_env))
    if target.config_hash:
        headers["X-SR-Bench-Expected-Config-Hash"] = target.config_hash
    call_id = "call-" + os.urandom(16).hex()
    row: dict[str, Any] = {
        "id": call_id, "case_id": case.id, "target_id": target.id, "role": "subject",
        "kind": "preview", "status": "sent", "attempt": 1, "requested_model": target.model,
        "model": None, "simulated": target.simulated, "phase": request_phase(body["messages"]),
        "phase_source": "request", "request": {"url": url, "body": body},
        "started_at": now_iso(),
    }  # fmt: skip
    sent = {"call_id": call_id, "case_id": case.id, "target_id": target.id, "role": "subject"}
    await rt.writer.run(
        [InsertCall(rt.run_id, dict(row)), AppendEvent(rt.run_id, "call_sent", sent)]
    )
    started = time.monotonic()
    timeout = min(limits.total_timeout_s, limits.idle_timeout_s)
    request = HttpRequest(
        url=url,
        body=orjson.dumps(body),
        headers=headers,
        connect_timeout_s=min(10.0, timeout),
        read_timeout_s=timeout,
    )
    evidence = bytearray()
    status: int | None = None
    failure: BaseException | None = None
    routing: dict[str, Any] = {}
    try:
        async with asyncio.timeout(max(0.1, min(timeout, cell.deadline - started))):
            async with rt.transport_for(target).post(request) as response:
                status = response.status
                async for chunk in response.chunks():
                    evidence += chunk
                    if len(evidence) > MAX_PREVIEW_BYTES:
                        break
                if response.status >= 400:
                    raise CallFailure(f"Preview HTTP {response.status}", nothing_generated=True)
        routing = routing_from_response(bytes(evidence), target)
    except TimeoutError:
        failure = CallFailure("preview request deadline exceeded")
    except asyncio.CancelledError as cancelled:
        failure = cancelled
    except (CallFailure, CellCancelled) as error:
        failure = error
    selected = routing.get("selected_model")
    finished = {
        **row,
        "status": "completed" if failure is None else "failed",
        "http_status": status,
        "latency_s": time.monotonic() - started,
        "routing": routing or None,
        "selected_model": selected if isinstance(selected, str) and selected else None,
        "decision": routing_decision(routing),
        "usage": dict(ZERO_USAGE) if failure is None else None,
        "cost_usd": 0.0,
        "cost_complete": True,
        "inference_call_count": 0,
        "evidence_bytes": len(evidence),
        "finished_at": now_iso(),
    }
    if failure is not None:
        stopped = isinstance(failure, asyncio.CancelledError | CellCancelled) or cell.cancelled
        finished["status"] = "cancelled" if stopped else "failed"
        finished["error"] = (
            "cancelled" if isinstance(failure, asyncio.CancelledError) else str(failure)
        )
    rt.writer.post([FinishCall(rt.run_id, finished, bytes(evidence))])
    if failure is not None:
        raise failure
    cell.subject_latency_s += finished["latency_s"]
    cell.subject_usages.append(finished["usage"])
    cell.subject_costs.append(0.0)
    return routing
