"""Builders for accounting-correction tests: saved SSE streams, call receipts and runs written
into a real SqliteStore (evidence through ``append_evidence``, like the engine does)."""

from __future__ import annotations

import json
from typing import Any

from pytest_srbench.core.models import Manifest, Prices, Target
from pytest_srbench.store.sqlite import SqliteStore
from tests.core.helpers import case, manifest, result

# example 5 prices (USD per million tokens)
PRICE = Prices(input=1, cached_input=0.1, cache_write=1.25, output=3)
CASE = case("mmlu-pro", "0")


def raw_usage(
    prompt: int = 100, completion: int = 10, cached: int = 20, created: int | None = 30
) -> dict[str, Any]:
    details: dict[str, Any] = {"cached_tokens": cached}
    if created is not None:
        details["created_cache_tokens"] = created
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": details,
    }


def sse(
    usage: dict[str, Any] | None,
    *,
    model: str | None = "m",
    finish: str | None = "stop",
    done: int = 1,
    text: str = "The answer is A",
    extra: list[dict[str, Any]] | None = None,
) -> bytes:
    """A chat-completion stream as an OpenAI-compatible server sends it."""
    head: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion.chunk"}
    if model is not None:
        head["model"] = model
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {**head, "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
        *(extra or []),
    ]
    if usage is not None:
        chunks.append({**head, "choices": [], "usage": usage})
    body = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks)
    return body + b"data: [DONE]\n\n" * done


def receipt(
    call_id: str,
    target_id: str,
    usage: dict[str, int] | None,
    cost: float | None,
    raw: dict[str, Any] | None,
    *,
    model: str = "m",
    role: str = "subject",
    **extra: Any,
) -> dict[str, Any]:
    """A finished call row as the engine journals it (the fields reconciliation reads)."""
    row = {
        "id": call_id,
        "case_id": CASE.id,
        "target_id": target_id,
        "role": role,
        "status": "completed",
        "attempt": 1,
        "requested_model": model,
        "model": model,
        "selected_model": model,
        "raw_usage": raw,
        "usage": usage,
        "response_usage": usage,
        "cost_usd": cost,
        "cost_complete": cost is not None,
        "inference_call_count": 1,
        "finish_reason": "stop",
        "output_complete": True,
        "final": "The answer is A",
        "latency_s": 0.5,
        "ttft_s": 0.1,
        "cache_read_reported": True,
        "cache_write_reported": True,
        "started_at": "2026-11-30T00:00:01+00:00",
        "finished_at": "2026-11-30T00:00:02+00:00",
    }
    row.update(extra)
    return row


def buckets(inp: int, cached: int, write: int, out: int) -> dict[str, int]:
    return {
        "input_tokens": inp,
        "cached_input_tokens": cached,
        "cache_write_tokens": write,
        "output_tokens": out,
    }


URL = "http://127.0.0.1:9/v1"


def single_target(target_id: str = "t", **extra: Any) -> Target:
    return Target(id=target_id, model="m", base_url=URL, prices={"m": PRICE}, **extra)


def mom_target(target_id: str = "router", **extra: Any) -> Target:
    return Target(
        id=target_id,
        kind="mom",
        model="MoM",
        base_url=URL,
        prices={"m": PRICE},
        config_hash="cfg-1",
        max_inference_calls=4,
        **extra,
    )


def single_plan(target_id: str = "t") -> Manifest:
    return manifest([CASE], [single_target(target_id)])


def mom_plan(target_id: str = "router") -> Manifest:
    return manifest([CASE], [mom_target(target_id)])


def store_run(
    store: SqliteStore,
    run_id: str,
    plan: Manifest,
    calls: list[tuple[dict[str, Any], bytes | None]],
    *,
    status: str = "completed",
    correct: bool = True,
) -> None:
    """A run in ``store``: each call journaled ``sent`` then finished with its evidence bytes
    appended to the run's pack; one result row per planned cell; then ``status``."""
    store.create_run(run_id, plan)
    store.set_run_status(run_id, "running")
    with store.transaction():
        for call, evidence in calls:
            sent = {k: call[k] for k in ("id", "case_id", "target_id", "role")}
            store.insert_call(run_id, {**sent, "status": "sent"})
            finished = dict(call)
            if evidence is not None:
                finished["evidence"] = store.append_evidence(run_id, evidence)
            store.update_call(call["id"], finished)
        for cell in plan.planned_cells():
            row = result(cell.case_id, cell.target_id, correct=correct, benchmark="mmlu-pro")
            store.upsert_result(run_id, row)
    if status != "running":
        store.set_run_status(run_id, status)


def raw_call_rows(store: SqliteStore, run_id: str) -> list[tuple[Any, ...]]:
    """The journaled call rows exactly as stored (data text included)."""
    rows = store.db.execute(
        "SELECT seq, id, run_id, case_id, target_id, role, status, data, updated_at"
        " FROM calls WHERE run_id = ? ORDER BY seq",
        (run_id,),
    )
    return [tuple(row) for row in rows]
