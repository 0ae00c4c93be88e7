"""One journaled model call: gate, reserve, journal ``sent``, stream, verify, price, receipt.

Every attempt is its own call row; a row is committed with status ``sent`` before its
request leaves, and finished (completed / failed / cancelled) with whatever evidence
arrived. Opt-in retries repeat only transient failures, with jittered backoff.

An attempt is three steps: ``_prepare`` (gates, request, reservation, the ``sent`` row),
``_stream`` (the response, within the frozen limits) and ``_finish`` (the receipt, the
budget settled). Why one long module: a call's whole life reads top to bottom here.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import orjson

from pytest_srbench.benchmarks.base import ModelReply
from pytest_srbench.core.calls.cache import CACHE_MISS_ONLY, cache_key, replayed_receipt
from pytest_srbench.core.calls.failures import CallFailure, CellCancelled, server_message
from pytest_srbench.core.calls.receipts import (
    answered_by_simulator,
    pricing_problem,
    receipt_fields,
    request_phase,
    response_phase,
    session_id,
)
from pytest_srbench.core.calls.sse import ChatStreamState, SseDecoder, StreamOutcome
from pytest_srbench.core.calls.usage import is_known_cost
from pytest_srbench.core.models import Case, Target
from pytest_srbench.core.plan.budget import reservation_usd
from pytest_srbench.core.plan.build import request_params_for
from pytest_srbench.core.records import CallReceipt
from pytest_srbench.engine.call_ids import new_call_id
from pytest_srbench.engine.runtime import LiveCall, RunRuntime
from pytest_srbench.store.base import now_iso
from pytest_srbench.store.writes import AppendEvent, FinishCall, InsertCall
from pytest_srbench.transport.auth import auth_header
from pytest_srbench.transport.base import HttpRequest

ADAPTER_EXTRAS = frozenset(
    {
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "functions",
        "function_call",
        "metadata",
    }
)
RETRY_CAP_S = 300.0


@dataclass
class CellCalls:
    """Per-cell call bookkeeping shared by every call the cell makes."""

    case: Case
    target: Target
    deadline: float
    calls_made: int = 0
    output_limited: bool = False
    subject_latency_s: float | None = None  # None until a subject call completes
    first_ttft_s: float | None = None
    subject_usages: list[Any] = field(default_factory=list)
    subject_costs: list[Any] = field(default_factory=list)
    cancelled: bool = False
    cached_calls: int = 0  # calls answered from the response cache (status ``replayed``)


def _retry_delay(attempt: int, base_s: float, failure: CallFailure) -> float:
    delay: float = base_s * 2 ** (attempt - 1) * (0.5 + random.random())
    if failure.retry_after_s is not None:
        delay = max(delay, failure.retry_after_s)
    return min(delay, RETRY_CAP_S)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def build_body(
    rt: RunRuntime,
    target: Target,
    messages: Sequence[Mapping[str, Any]],
    extra: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """sampling ∪ target params ∪ adapter extras ∪ the fixed streaming fields."""
    body = request_params_for(rt.manifest, target)
    for key, value in (extra or {}).items():
        if key not in ADAPTER_EXTRAS:
            raise CallFailure(f"Adapter attempted to override frozen request parameters ({key})")
        body[key] = value
    body.update(
        model=target.model,
        messages=[dict(message) for message in messages],
        stream=True,
        stream_options={"include_usage": True},
    )
    return body


def _headers(
    rt: RunRuntime, target: Target, role: str, cell: CellCalls
) -> tuple[dict[str, str], str | None]:
    headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
    headers.update(auth_header(target.api_key_env))
    if target.config_hash:
        headers["X-SR-Bench-Expected-Config-Hash"] = target.config_hash
    if target.max_inference_calls:
        headers["X-SR-Bench-Max-Inference-Calls"] = str(target.max_inference_calls)
    if target.kind == "mom":
        headers["X-VSR-Debug"] = "true"
    sid = None
    if role == "subject" and target.session_mode == "session_aware":
        sid = session_id(rt.run_id, cell.case.id, target.id)
        headers["x-session-id"] = sid
    return headers, sid


async def call_model(
    rt: RunRuntime,
    cell: CellCalls,
    messages: Sequence[Mapping[str, Any]],
    *,
    role: str = "subject",
    extra_body: Mapping[str, Any] | None = None,
    via: Target | None = None,
) -> ModelReply:
    """Make one logical call, retrying transient failures when the limits allow it. The call
    goes to the cell's target (a subject call) or the benchmark's bound auxiliary model, unless
    ``via`` names the target (the user's code of a ``python`` target calling a model)."""
    attempt = 1
    while True:
        try:
            return await _attempt(rt, cell, messages, role, extra_body, attempt, via)
        except CallFailure as failure:
            limits = rt.limits
            if not failure.transient or attempt >= limits.max_call_attempts or rt.stopping():
                raise
            if rt.priced and not failure.nothing_generated:
                raise  # a priced attempt with unknown spend is never repeated
            delay = _retry_delay(attempt, limits.retry_backoff_s, failure)
            if time.monotonic() + delay >= cell.deadline:
                raise
            await asyncio.sleep(delay)
            attempt += 1


@dataclass
class _Prepared:
    """A call that passed its gates: the request, its budget reservation and its ``sent`` row."""

    target: Target
    payload: bytes
    headers: dict[str, str]
    reservation: float
    row: CallReceipt
    source: dict[str, Any] | None = None  # a cache hit: the completed live call that answers
    source_evidence: bytes | None = None  # its stream, when this process still holds it

    @property
    def call_id(self) -> str:
        return str(self.row["id"])


@dataclass
class _Streamed:
    """What came back: the parsed stream, its evidence bytes, and the failure, if any."""

    state: ChatStreamState
    latency_s: float
    evidence: bytearray
    response_headers: dict[str, str]
    http_status: int | None
    fields: CallReceipt
    outcome: Any
    failure: BaseException | None


async def _prepare(
    rt: RunRuntime,
    cell: CellCalls,
    messages: Sequence[Mapping[str, Any]],
    role: str,
    extra_body: Mapping[str, Any] | None,
    attempt: int,
    via: Target | None = None,
) -> _Prepared:
    """Check the cell's gates, build the request, reserve its worst-case cost and journal the
    ``sent`` row (committed before the request leaves)."""
    limits = rt.limits
    if rt.stopping() or cell.cancelled:
        raise CellCancelled("Run cancelled or wall-time budget exhausted")
    if cell.output_limited:
        raise CallFailure("Case ended at the frozen output limit; no further calls are permitted")
    if cell.calls_made >= limits.max_calls_per_case:
        raise CallFailure("Per-case call budget exhausted (max_calls_per_case)")
    cell.calls_made += 1
    if via is not None:
        target = via
    elif role == "subject":
        target = cell.target
    else:
        target = rt.aux_target(cell.case.benchmark, role)
    body = build_body(rt, target, messages, extra_body)
    cap = body.get("max_tokens")
    if isinstance(cap, int) and cap > limits.max_output_tokens:
        raise CallFailure("Requested tokens exceed frozen cap")
    payload = orjson.dumps(body)
    headers, sid = _headers(rt, target, role, cell)
    key = _cache_key(rt, cell, target, body)
    if rt.cache != "off" and key is not None:
        recent = rt.recent_calls.get(key)
        source = dict(recent[0]) if recent is not None else rt.store.cached_call(key)
        if source is not None:
            return _Prepared(
                target,
                payload,
                headers,
                0.0,
                _sent_row(rt, cell, target, role, attempt, sid, messages, body, key),
                source,
                recent[1] if recent is not None else None,
            )
        if rt.cache == "only":
            rt.writer.post(
                [
                    AppendEvent(
                        rt.run_id,
                        "cache_miss",
                        {
                            "case_id": cell.case.id,
                            "target_id": cell.target.id,
                            "role": role,
                            "cache_key": key,
                        },
                    )
                ]
            )
            raise CallFailure(CACHE_MISS_ONLY)
    reservation = 0.0
    if rt.priced:
        output_cap = cap if isinstance(cap, int) else limits.max_output_tokens
        reservation = reservation_usd(
            target, len(payload), len(messages), limits.max_output_chars, output_cap
        )
        try:
            rt.budget.reserve(reservation)
        except CallFailure:
            rt.stop("cost budget exhausted (max_cost_usd)")
            raise
    row = _sent_row(rt, cell, target, role, attempt, sid, messages, body, key)
    call_id = row["id"]
    sent = {"call_id": call_id, "case_id": cell.case.id, "target_id": cell.target.id, "role": role}
    try:
        await rt.writer.run(
            [InsertCall(rt.run_id, row.copy()), AppendEvent(rt.run_id, "call_sent", sent)]
        )
    except asyncio.CancelledError:  # stopped while its row waited for the store: the request
        # never left, so the row (stored later) must not stay ``sent``
        unsent = row.copy()
        unsent["status"] = "cancelled"
        unsent["error"] = "cancelled before the request left"
        unsent["cost_usd"] = 0.0
        unsent["cost_complete"] = True
        unsent["evidence_bytes"] = 0
        unsent["finished_at"] = now_iso()
        rt.writer.post([FinishCall(rt.run_id, unsent)])
        rt.budget.settle(reservation, 0.0)
        raise
    return _Prepared(target, payload, headers, reservation, row)


def _cache_key(
    rt: RunRuntime, cell: CellCalls, target: Target, body: Mapping[str, Any]
) -> str | None:
    """The request's cache key (None when the request is not canonical JSON)."""
    repeat = None if rt.cache_repeats else cell.case.metadata.get("repeat")
    try:
        return cache_key(target.id, target.kind, target.config_hash, body, repeat)
    except (TypeError, ValueError):
        return None


def _sent_row(
    rt: RunRuntime,
    cell: CellCalls,
    target: Target,
    role: str,
    attempt: int,
    sid: str | None,
    messages: Sequence[Mapping[str, Any]],
    body: Mapping[str, Any],
    key: str | None,
) -> CallReceipt:
    """A new call's ``sent`` row."""
    return {
        "id": new_call_id(),
        "case_id": cell.case.id,
        "target_id": cell.target.id,
        "role": role,
        "status": "sent",
        "attempt": attempt,
        "requested_model": target.model,
        "model": None,
        "simulated": False,  # nothing answered yet: set from the response (_finish)
        "session_id": sid,
        "phase": request_phase(list(messages)),
        "phase_source": "request",
        "request": {
            "messages": body["messages"],
            "params": {k: v for k, v in body.items() if k != "messages"},
        },
        "started_at": now_iso(),
        "cache_key": key,
    }


def _replay(rt: RunRuntime, cell: CellCalls, call: _Prepared, role: str) -> ModelReply:
    """Answer a call from the response cache: its receipt (status ``replayed``, no spend, no
    latency) journaled, the reply parsed again from the source's saved stream (else taken
    from its receipt)."""
    source = call.source
    assert source is not None
    finished = replayed_receipt(call.row, source, now_iso())
    locator = source.get("evidence")
    evidence = call.source_evidence or b""
    if not evidence and isinstance(locator, dict) and int(locator.get("length") or 0) > 0:
        try:
            evidence = rt.store.read_evidence(locator)
        except Exception:  # a lost stream: the receipt's answer still holds
            evidence = b""
    outcome = None
    if evidence:
        state = ChatStreamState(clock=time.monotonic, started=time.monotonic(), guards=rt.guards)
        decoder = SseDecoder(line_cap=rt.limits.max_output_chars * 2)
        try:
            if not state.feed_read(decoder, evidence):
                for payload in decoder.close():
                    state.feed_payload(payload)
            outcome = state.outcome()
        except (CallFailure, UnicodeDecodeError, ValueError):
            outcome = None
    rt.writer.post(
        [
            InsertCall(rt.run_id, finished),
            AppendEvent(
                rt.run_id,
                "call_cached",
                {
                    "call_id": call.call_id,
                    "case_id": cell.case.id,
                    "target_id": cell.target.id,
                    "role": role,
                    "source_call_id": finished.get("source_call_id"),
                },
            ),
        ]
    )
    cell.cached_calls += 1
    output_complete = (
        outcome.output_complete if outcome is not None else bool(source.get("output_complete"))
    )
    if role == "subject":
        cell.subject_usages.append(finished.get("usage"))
        cell.subject_costs.append(0.0)
        if not output_complete:
            cell.output_limited = True
    elif not output_complete:
        raise CallFailure("Auxiliary model output was truncated; grading is incomplete")
    if outcome is not None:
        return reply_of(call.call_id, outcome, finished, evidence)
    final = str(source.get("final") or "")
    return ModelReply(
        call_id=call.call_id,
        final_text=final,
        content=final,
        reasoning=str(source.get("reasoning") or ""),
        finish_reason=source.get("finish_reason"),
        output_complete=output_complete,
        tool_calls=list(source.get("tool_calls") or []),
        model=finished.get("model"),
        usage=finished.get("raw_usage"),
        evidence=evidence,
    )


async def _stream(rt: RunRuntime, cell: CellCalls, call: _Prepared) -> _Streamed:
    """Send the request and read its stream within the frozen limits; every failure is kept
    (not raised) so that the receipt records it."""
    limits = rt.limits
    target = call.target
    started = time.monotonic()
    state = ChatStreamState(clock=time.monotonic, started=started, guards=rt.guards)
    decoder = SseDecoder(line_cap=limits.max_output_chars * 2)
    evidence = bytearray()
    response_headers: dict[str, str] = {}
    http_status: int | None = None
    failure: BaseException | None = None
    fields: CallReceipt = {}
    outcome = None
    request = HttpRequest(
        url=rt.base_url(target) + "/chat/completions",
        body=call.payload,
        headers=call.headers,
        connect_timeout_s=min(10.0, limits.total_timeout_s),
        read_timeout_s=min(limits.idle_timeout_s, limits.total_timeout_s),
    )
    total = min(limits.total_timeout_s, max(0.1, cell.deadline - started))
    live = rt.live[call.call_id] = LiveCall(call.row["phase"])
    try:
        async with asyncio.timeout(total):
            async with rt.transport_for(target).post(request) as response:
                response_headers = dict(response.headers)
                http_status = response.status
                if response.status >= 400:
                    async for chunk in response.chunks():
                        evidence += chunk
                        if len(evidence) > 65536:
                            break
                    said = server_message(bytes(evidence))
                    raise CallFailure(
                        f"Target HTTP {response.status}"
                        + (f": {rt.redactor.text(said)}" if said else ""),
                        transient=response.status == 429 or response.status >= 500,
                        retry_after_s=parse_retry_after(response_headers.get("retry-after")),
                        nothing_generated=True,
                    )
                if "text/event-stream" not in response_headers.get("content-type", ""):
                    raise CallFailure("Target did not return a streaming response")
                done = False
                async for chunk in response.chunks():
                    evidence += chunk
                    live.bytes_received = len(evidence)
                    if len(evidence) > rt.byte_cap:
                        raise CallFailure("Stream byte cap exceeded")
                    if state.feed_read(decoder, chunk):
                        done = True
                        break
                if not done:
                    for payload in decoder.close():
                        state.feed_payload(payload)
        try:
            outcome = state.outcome()
        except CallFailure as incomplete:
            incomplete.transient = True
            raise
        fields = receipt_fields(target, outcome, response_headers)
        if rt.priced and not is_known_cost(fields.get("cost_usd")):
            raise CallFailure(pricing_problem(target, fields))
    except TimeoutError:
        failure = CallFailure("total request deadline exceeded")
    except asyncio.CancelledError as cancelled:
        failure = cancelled
    except (CallFailure, CellCancelled) as error:
        failure = error
    except UnicodeDecodeError:
        failure = CallFailure("UnicodeDecodeError: invalid UTF-8 in the stream", transient=True)
    latency = time.monotonic() - started
    rt.live.pop(call.call_id, None)
    return _Streamed(
        state, latency, evidence, response_headers, http_status, fields, outcome, failure
    )


def _finish(
    rt: RunRuntime,
    cell: CellCalls,
    call: _Prepared,
    got: _Streamed,
    messages: Sequence[Mapping[str, Any]],
) -> CallReceipt:
    """The finished receipt (the ``sent`` row plus everything the response told), and the
    budget reservation settled against what the call is known to have cost."""
    state, outcome, failure = got.state, got.outcome, got.failure
    response_headers = got.response_headers
    phase, phase_source = response_phase(response_headers, list(messages))
    fields = got.fields
    if not fields and state.raw_usage is not None:
        fields = {"model": state.model, "usage": state.usage, "raw_usage": state.raw_usage}
    finished = call.row.copy()
    finished.update(fields)
    finished.update(
        {
            "model": fields.get("model") or state.model,
            "latency_s": got.latency_s,
            "ttft_s": state.ttft_s,
            "finish_reason": state.finish_reason,
            "output_complete": outcome.output_complete if outcome else None,
            "final": outcome.final_text if outcome else None,
            "reasoning": outcome.reasoning if outcome and outcome.reasoning else None,
            "tool_calls": outcome.tool_calls if outcome and outcome.tool_calls else None,
            "server_timings": state.server_timings,
            "phase": phase,
            "phase_source": phase_source,
            "http_status": got.http_status,
            "router": {
                k: v for k, v in response_headers.items() if k.startswith(("x-vsr-", "x-litellm-"))
            }
            or None,
            "simulated": answered_by_simulator(response_headers),
            "evidence_bytes": len(got.evidence),
            "finished_at": now_iso(),
        }
    )
    set_ending(finished, failure, cell)
    if failure is not None:
        finished.setdefault("cost_usd", None)
    finished["cost_complete"] = is_known_cost(finished.get("cost_usd"))
    if failure is None:
        rt.budget.settle(call.reservation, finished.get("cost_usd"))
    elif isinstance(failure, CallFailure) and failure.nothing_generated:
        rt.budget.settle(call.reservation, 0.0)
    else:
        rt.budget.settle(call.reservation, None)
    return finished


def set_ending(finished: CallReceipt, failure: BaseException | None, cell: CellCalls) -> None:
    """Set a finished receipt's status (and error) from how its request ended: a stopped run or
    cell makes it ``cancelled``, any other failure ``failed``."""
    if failure is None:
        finished["status"] = "completed"
        return
    stopped = isinstance(failure, asyncio.CancelledError | CellCancelled) or cell.cancelled
    finished["status"] = "cancelled" if stopped else "failed"
    finished["error"] = "cancelled" if isinstance(failure, asyncio.CancelledError) else str(failure)


async def _attempt(
    rt: RunRuntime,
    cell: CellCalls,
    messages: Sequence[Mapping[str, Any]],
    role: str,
    extra_body: Mapping[str, Any] | None,
    attempt: int,
    via: Target | None,
) -> ModelReply:
    """One attempt: prepare (gates, reservation, ``sent`` row), stream, finish the receipt."""
    call = await _prepare(rt, cell, messages, role, extra_body, attempt, via)
    if call.source is not None:
        return _replay(rt, cell, call, role)
    got = await _stream(rt, cell, call)
    finished = _finish(rt, cell, call, got, messages)
    evidence = bytes(got.evidence)
    rt.writer.post([FinishCall(rt.run_id, finished, evidence)])
    if rt.cache_repeats and got.failure is None and call.row.get("cache_key"):
        rt.recent_calls[str(call.row["cache_key"])] = (dict(finished), evidence)
    if got.failure is not None:
        raise got.failure
    outcome = got.outcome
    assert outcome is not None
    if role == "subject":
        cell.subject_latency_s = (cell.subject_latency_s or 0.0) + got.latency_s
        if cell.first_ttft_s is None:
            cell.first_ttft_s = got.state.ttft_s
        cell.subject_usages.append(finished.get("usage"))
        cell.subject_costs.append(finished.get("cost_usd"))
        if not outcome.output_complete:
            cell.output_limited = True
    elif not outcome.output_complete:
        raise CallFailure("Auxiliary model output was truncated; grading is incomplete")
    return reply_of(call.call_id, outcome, finished, evidence)


def reply_of(
    call_id: str, outcome: StreamOutcome, finished: Mapping[str, Any], evidence: bytes
) -> ModelReply:
    """The reply a caller gets of a stream's outcome and the call's finished receipt."""
    return ModelReply(
        call_id=call_id,
        final_text=outcome.final_text,
        content=outcome.content,
        reasoning=outcome.reasoning,
        finish_reason=outcome.finish_reason,
        output_complete=outcome.output_complete,
        tool_calls=outcome.tool_calls,
        model=finished.get("model"),
        usage=finished.get("raw_usage"),
        evidence=evidence,
    )
