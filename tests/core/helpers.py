"""Small builders for core tests (plain dict rows as the store returns them)."""

from __future__ import annotations

from typing import Any

from pytest_srbench.core.models import Case, DatasetInfo, Message, Prices, Run, Target
from pytest_srbench.core.plan.build import freeze_plan

PRICE = Prices(input=1, cached_input=0.1, cache_write=2, output=3)


def target(target_id: str, model: str | None = None, **extra: Any) -> Target:
    model = model or target_id
    return Target(
        id=target_id, model=model, base_url="http://127.0.0.1:9/v1", prices={model: PRICE}, **extra
    )


def case(benchmark: str, native: str, answer: str = "A") -> Case:
    return Case(
        id=f"{benchmark}/{native}",
        benchmark=benchmark,
        messages=[Message(role="user", content=f"question {native}")],
        answer=answer,
        metadata={"letters": "ABCD"},
    )


def manifest(cases: list[Case], targets: list[Target], **extra: Any):
    versions = {c.benchmark: "sr-bench-1.0" for c in cases}
    return freeze_plan(
        targets=targets,
        cases=cases,
        dataset=extra.pop("dataset", DatasetInfo(profile="quick", seed=20260918)),
        adapter_versions=versions,
        **extra,
    )


def run(status: str = "completed") -> Run:
    return Run(
        id="run-test",
        status=status,
        created_at="2026-11-30T00:00:00+00:00",
        updated_at="2026-11-30T00:00:10.5+00:00",
        plan_sha256="x",
    )


def result(
    case_id: str,
    target_id: str,
    status: str = "completed",
    correct: bool | None = True,
    **extra: Any,
) -> dict[str, Any]:
    row = {
        "case_id": case_id,
        "target_id": target_id,
        "status": status,
        "correct": correct,
        "latency_s": 1.0,
    }
    row.update(extra)
    return row


def call(
    case_id: str, target_id: str, cost: float | None = 0.002, role: str = "subject", **extra: Any
) -> dict[str, Any]:
    row = {
        "id": f"call-{case_id}-{target_id}-{role}",
        "case_id": case_id,
        "target_id": target_id,
        "role": role,
        "status": "completed",
        "usage": {
            "input_tokens": 10,
            "cached_input_tokens": 0,
            "cache_write_tokens": 0,
            "output_tokens": 2,
        },
        "cost_usd": cost,
        "latency_s": 0.5,
        "ttft_s": 0.1,
        "model": target_id,
        "selected_model": target_id,
        "inference_call_count": 1,
        "finish_reason": "stop",
    }
    row.update(extra)
    return row
