"""One journaled JSON request/response call (not a chat stream): the routing preview of a
router and the search of a retrieval engine. The call row is committed ``sent`` before the
request leaves; the raw answer is kept as evidence; latency is measured."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from pytest_srbench.core.calls.failures import CallFailure, CellCancelled
from pytest_srbench.core.calls.receipts import answered_by_simulator
from pytest_srbench.core.records import CallReceipt
from pytest_srbench.engine.call import CellCalls, set_ending
from pytest_srbench.engine.call_ids import new_call_id
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.store.base import now_iso
from pytest_srbench.store.writes import AppendEvent, FinishCall, InsertCall
from pytest_srbench.transport.base import HttpRequest

MAX_JSON_BYTES = 262_144


async def json_call(
    rt: RunRuntime,
    cell: CellCalls,
    *,
    kind: str,
    url: str,
    body: Mapping[str, Any],
    headers: Mapping[str, str],
    label: str,
    parse: Callable[[bytes], dict[str, Any]],
    receipt: Callable[[dict[str, Any]], CallReceipt],
    row_extra: CallReceipt | None = None,
) -> tuple[dict[str, Any], float]:
    """POST ``body`` as JSON, journal the call as ``kind``; the parsed answer and its latency.

    ``parse`` turns the raw bytes into the answer (raising ``CallFailure``); ``receipt``
    adds receipt fields from it. HTTP >= 400 fails as ``<label> HTTP nnn``.
    """
    if rt.stopping() or cell.cancelled:
        raise CellCancelled("Run cancelled or wall-time budget exhausted")
    target, case, limits = cell.target, cell.case, rt.limits
    cell.calls_made += 1
    call_id = new_call_id()
    row: CallReceipt = {
        "id": call_id, "case_id": case.id, "target_id": target.id, "role": "subject",
        "kind": kind, "status": "sent", "attempt": 1, "requested_model": target.model,
        "model": None, "simulated": False, "request": {"url": url, "body": dict(body)},
        "started_at": now_iso(), **(row_extra or {}),
    }  # fmt: skip
    sent = {"call_id": call_id, "case_id": case.id, "target_id": target.id, "role": "subject"}
    await rt.writer.run(
        [InsertCall(rt.run_id, row.copy()), AppendEvent(rt.run_id, "call_sent", sent)]
    )
    started = time.monotonic()
    timeout = min(limits.total_timeout_s, limits.idle_timeout_s)
    request = HttpRequest(
        url=url,
        body=orjson.dumps(dict(body)),
        headers={"Content-Type": "application/json", "Accept": "application/json", **headers},
        connect_timeout_s=min(10.0, timeout),
        read_timeout_s=timeout,
    )
    evidence = bytearray()
    status: int | None = None
    failure: BaseException | None = None
    simulated = False  # true only once the simulator's answer arrives
    answer: dict[str, Any] = {}
    try:
        async with asyncio.timeout(max(0.1, min(timeout, cell.deadline - started))):
            async with rt.transport_for(target).post(request) as response:
                status = response.status
                simulated = answered_by_simulator(dict(response.headers))
                async for chunk in response.chunks():
                    evidence += chunk
                    if len(evidence) > MAX_JSON_BYTES:
                        raise CallFailure(f"{label} response exceeds {MAX_JSON_BYTES} bytes")
                if response.status >= 400:
                    raise CallFailure(f"{label} HTTP {response.status}", nothing_generated=True)
        answer = parse(bytes(evidence))
    except TimeoutError:
        failure = CallFailure(f"{label} request deadline exceeded")
    except asyncio.CancelledError as cancelled:
        failure = cancelled
    except (CallFailure, CellCancelled) as error:
        failure = error
    latency = time.monotonic() - started
    finished = row.copy()
    if answer:
        finished.update(receipt(answer))
    finished.update(
        {
            "http_status": status,
            "simulated": simulated,
            "latency_s": latency,
            "evidence_bytes": len(evidence),
            "finished_at": now_iso(),
        }
    )
    set_ending(finished, failure, cell)
    rt.writer.post([FinishCall(rt.run_id, finished, bytes(evidence))])
    if failure is not None:
        raise failure
    cell.subject_latency_s = (cell.subject_latency_s or 0.0) + latency
    cell.subject_usages.append(finished.get("usage"))
    cell.subject_costs.append(finished.get("cost_usd"))
    return answer, latency
