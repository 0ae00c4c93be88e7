"""Offline usage reconciliation: re-read each call's saved SSE bytes, verify them against the
call's receipt and the frozen target, and derive an append-only accounting correction.

Pure (reference/report-and-accounting.md §6): the caller reads the store and the evidence and
records the artifact; this module never does I/O and never makes a model request. Original
receipts are never changed: reports read calls through ``effective_calls``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pytest_srbench.core.calls.failures import UsageObjectError
from pytest_srbench.core.calls.sse import ACCEPTED_FINISH_REASONS
from pytest_srbench.core.calls.usage import cost_for, is_known_cost, normalize_usage
from pytest_srbench.core.canonical import canonical_json, digest, sha256_bytes
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.fastjson import loads
from pytest_srbench.core.models import TERMINAL_RUN_STATUSES, Limits, Manifest, Target

ACCOUNTING_VERSION = "sr-bench-accounting-v1"
ACCOUNTING_EVENT = "accounting_reconciled"
MIN_BYTE_BOUND = 1_048_576
DONE = "[DONE]"

NOT_TERMINAL_LIVE = "Usage reconciliation requires a terminal live run"
NO_CALLS = "Run has no saved calls to reconcile"

UNVERIFIABLE = "Saved stream evidence could not be verified"
MOM_NOT_DIRECT = "Only a proven direct MoM call can use final-stream usage"
INCOMPLETE_PRICING = "Saved usage or frozen model prices are incomplete"
TOO_LARGE = "Saved stream evidence exceeds the reconciliation byte bound"
ERROR_EVENT = "Saved stream contains an error event"
NOT_COMPLETED = "Saved call did not complete"
DONE_COUNT = "Saved stream must contain exactly one [DONE]"
FINISH_MISMATCH = "Saved stream finish reason is not accepted or differs from the receipt"
USAGE_MISMATCH = "Saved stream usage differs from the receipt"
MODEL_MISMATCH = "Saved stream model differs from the receipt"
EXPECTED_MODEL_MISMATCH = "Saved stream model differs from the expected response model"


class ReconcileError(InputError):
    """A run cannot be reconciled (a precondition of §6.1 does not hold)."""


class EvidenceUnavailable(Enum):
    """Why a call's saved bytes were not handed over: unreadable, or larger than the bound."""

    MISSING = "missing"
    TOO_LARGE = "too_large"


class _Unverifiable(Exception):
    """A row-level failure whose message is a controlled reason (never a path or payload)."""


def check_preconditions(status: str, mode: str, call_count: int) -> None:
    """§6.1: a terminal live run with at least one saved call."""
    if status not in TERMINAL_RUN_STATUSES or mode != "live":
        raise ReconcileError(NOT_TERMINAL_LIVE)
    if call_count < 1:
        raise ReconcileError(NO_CALLS)


def byte_bound(limits: Limits) -> int:
    """The largest saved stream that is read: max(max_output_chars x 30, 1 MiB)."""
    return max(limits.max_output_chars * 30, MIN_BYTE_BOUND)


class TargetResolver:
    """The frozen target whose prices apply to a call: the cell's target for a subject call,
    else the auxiliary target bound to the call's role for the case's benchmark."""

    def __init__(self, manifest: Manifest) -> None:
        self.inventory = manifest.target_inventory()
        self.options = manifest.benchmark_options
        self.benchmark_of = {case.id: case.benchmark for case in manifest.cases}

    def __call__(self, call: Mapping[str, Any]) -> Target | None:
        if call.get("role") == "subject":
            return self.inventory.get(str(call.get("target_id", "")))
        benchmark = self.benchmark_of.get(str(call.get("case_id", "")), "")
        bound = (self.options.get(benchmark) or {}).get(str(call.get("role", "")))
        return self.inventory.get(bound) if isinstance(bound, str) else None


def receipt_record(call: Mapping[str, Any]) -> dict[str, Any]:
    """The call record as journaled, without store-internal keys (``_seq``, ``_row`` …)."""
    return {key: value for key, value in call.items() if not key.startswith("_")}


@dataclass(frozen=True)
class SavedStream:
    """What one saved SSE stream says (§6.2 parsing)."""

    done: int
    error: bool
    raw_usage: Any
    model: str | None
    finish_reason: Any


def _events(text: str) -> list[str]:
    """SSE framing: ``data:`` lines (prefix and leading whitespace dropped), a blank line ends
    an event, multi-line data joined with newlines; an event left open at the end counts."""
    events: list[str] = []
    data: list[str] = []
    for raw in text.split("\n"):
        line = raw[:-1] if raw.endswith("\r") else raw
        if not line:
            if data:
                events.append("\n".join(data))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
    if data:
        events.append("\n".join(data))
    return events


def parse_saved_stream(data: bytes) -> SavedStream:
    """Read saved chat-completion SSE bytes: [DONE] count, error events, the last truthy usage,
    the last truthy model and the last truthy finish reason of choice index 0.

    Undecodable bytes or chunks raise ``ValueError`` (mapped to the generic reason).
    """
    done = 0
    error = False
    raw_usage: Any = None
    model: str | None = None
    finish_reason: Any = None
    for payload in _events(data.decode("utf-8")):
        if payload == DONE:
            done += 1
            continue
        chunk = loads(payload)
        if not isinstance(chunk, dict):
            raise ValueError("stream chunk is not an object")
        if chunk.get("error"):
            error = True
        if chunk.get("usage"):
            raw_usage = chunk["usage"]
        if chunk.get("model"):
            model = str(chunk["model"])
        choices = chunk.get("choices")
        if isinstance(choices, list):
            for choice in choices:
                if isinstance(choice, dict) and (choice.get("index") or 0) == 0:
                    if choice.get("finish_reason"):
                        finish_reason = choice["finish_reason"]
                    break
    return SavedStream(done, error, raw_usage, model, finish_reason)


def _same(a: Any, b: Any) -> bool:
    """Deep equality that also tells 1, 1.0 and true apart (canonical JSON text)."""
    return canonical_json(a) == canonical_json(b)


def _prices(target: Target) -> dict[str, dict[str, float]]:
    return {model: price.model_dump() for model, price in target.prices.items()}


def _verify(call: Mapping[str, Any], target: Target | None, stream: SavedStream) -> dict[str, Any]:
    if stream.error:
        raise _Unverifiable(ERROR_EVENT)
    if call.get("status") != "completed":
        raise _Unverifiable(NOT_COMPLETED)
    if stream.done != 1:
        raise _Unverifiable(DONE_COUNT)
    reason = stream.finish_reason
    if reason not in ACCEPTED_FINISH_REASONS or reason != call.get("finish_reason"):
        raise _Unverifiable(FINISH_MISMATCH)
    if not _same(stream.raw_usage, call.get("raw_usage")):
        raise _Unverifiable(USAGE_MISMATCH)
    if stream.model != call.get("model"):
        raise _Unverifiable(MODEL_MISMATCH)
    if target is None:
        raise _Unverifiable(INCOMPLETE_PRICING)
    if target.kind == "mom":
        count = call.get("inference_call_count")
        selected = call.get("selected_model")
        if (
            isinstance(count, bool)
            or count != 1
            or call.get("model_usage")
            or not selected
            or selected != stream.model
        ):
            raise _Unverifiable(MOM_NOT_DIRECT)
    if target.expected_response_model and target.expected_response_model != stream.model:
        raise _Unverifiable(EXPECTED_MODEL_MISMATCH)
    usage = normalize_usage(stream.raw_usage or {})
    cost = cost_for(usage, stream.model, _prices(target))
    if usage is None or cost is None:
        raise _Unverifiable(INCOMPLETE_PRICING)
    return {"usage": dict(usage), "cost_usd": cost}


def verify_call(
    call: Mapping[str, Any],
    target: Target | None,
    evidence: bytes | EvidenceUnavailable,
    *,
    bound: int,
) -> dict[str, Any]:
    """One row of the correction (§6.2): verified usage and cost, or an ``unknown_reason``."""
    row: dict[str, Any] = {
        "call_id": call.get("id"),
        "original_receipt_sha256": digest(receipt_record(call)),
        "original_usage": call.get("usage"),
        "original_cost_usd": call.get("cost_usd"),
        "usage": None,
        "cost_usd": None,
        "verified": False,
    }
    try:
        if evidence is EvidenceUnavailable.TOO_LARGE:
            raise _Unverifiable(TOO_LARGE)
        if not isinstance(evidence, bytes):
            raise _Unverifiable(UNVERIFIABLE)
        if len(evidence) > bound:
            raise _Unverifiable(TOO_LARGE)
        row["stream_sha256"] = sha256_bytes(evidence)
        try:
            stream = parse_saved_stream(evidence)
        except (ValueError, TypeError) as error:  # undecodable bytes or JSON: generic
            raise _Unverifiable(UNVERIFIABLE) from error
        row.update(_verify(call, target, stream))
        row["verified"] = True
    except _Unverifiable as failure:
        row["unknown_reason"] = str(failure)
    except UsageObjectError as failure:  # controlled messages of normalize_usage
        row["unknown_reason"] = str(failure)
    except (KeyError, TypeError, ValueError, AttributeError):
        row["unknown_reason"] = UNVERIFIABLE
    return row


def _spend(values: Iterable[Any]) -> float:
    return math.fsum(float(v) for v in values if is_known_cost(v))


def build_artifact(
    run_id: str, plan_sha256: str, rows: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The correction artifact of §6.3 (``created_at`` is added by the store)."""
    calls = [dict(row) for row in rows]
    evidence_sha256 = digest(
        {"version": ACCOUNTING_VERSION, "plan_sha256": plan_sha256, "calls": calls}
    )
    verified = [row for row in calls if row["verified"] is True]
    corrected = [
        row
        for row in verified
        if not _same(row["usage"], row["original_usage"])
        or row["cost_usd"] != row["original_cost_usd"]
    ]
    return {
        "id": "accounting-" + evidence_sha256[:24],
        "version": ACCOUNTING_VERSION,
        "run_id": run_id,
        "evidence_sha256": evidence_sha256,
        "plan_sha256": plan_sha256,
        "qualified": len(verified) == len(calls),
        "verified_call_count": len(verified),
        "unverifiable_call_count": len(calls) - len(verified),
        "corrected_call_count": len(corrected),
        "original_known_spend_usd": _spend(row["original_cost_usd"] for row in calls),
        "corrected_known_spend_usd": _spend(row["cost_usd"] for row in calls),
        "original_receipts_preserved": True,
        "model_requests": 0,
        "calls": calls,
    }


def correction_summary(correction: Mapping[str, Any]) -> dict[str, Any]:
    """The correction without its per-call rows (what a report's provenance carries)."""
    return {key: value for key, value in correction.items() if key != "calls"}


def effective_calls(
    calls: Sequence[dict[str, Any]], correction: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """Calls as reports read them (§6.4): with a correction, every call takes the row's usage,
    cost, ``cost_complete`` = verified and the correction id; an unverified call (or one the
    correction has no row for) becomes unknown. Without one, the calls themselves; with one,
    new dicts (the originals are never modified)."""
    if correction is None:
        return list(calls)
    rows = correction_rows(correction)
    return [effective_call(call, rows, correction.get("id")) for call in calls]


def correction_rows(correction: Mapping[str, Any]) -> dict[Any, Mapping[str, Any]]:
    """A correction's per-call rows by call id."""
    return {row.get("call_id"): row for row in correction.get("calls") or []}


def effective_call(
    call: Mapping[str, Any], rows: Mapping[Any, Mapping[str, Any]], correction_id: Any
) -> dict[str, Any]:
    """One call read through a correction's rows (``effective_calls``), as a new dict."""
    row = rows.get(call.get("id")) or {}
    verified = row.get("verified") is True
    view = dict(call)
    view.update(
        usage=row.get("usage") if verified else None,
        cost_usd=row.get("cost_usd") if verified else None,
        cost_complete=verified,
        accounting_correction_id=correction_id,
    )
    return view
