"""Seeded random runs for the report's differential tests: a frozen plan and result rows and
call receipts with every shape the metrics branch on — failed, running and pending cells,
unscored answers, unknown usage and cost, judge calls, retries, router decisions and model
switches, multi-inference receipts, routing previews, repeats, rows outside the plan — listed
in a shuffled order (the order the oracles of `tests/oracles/` read them in)."""

from __future__ import annotations

import random
from typing import Any

from pytest_srbench.core.models import Manifest, Target
from pytest_srbench.core.plan.build import expand_repeats
from tests.core.helpers import PRICE, call, case, manifest, result, target

Row = dict[str, Any]
BENCHMARKS = ("gpqa-diamond", "mmlu-pro")
MODELS = ("m-a", "m-b", "m-c")
DECISIONS = ("math", "science", "code")


def router(target_id: str = "router") -> Target:
    return Target(
        id=target_id,
        kind="mom",
        model="auto",
        base_url="http://127.0.0.1:9/v1",
        prices={model: PRICE for model in MODELS},
        max_inference_calls=4,
        config_hash="cfg",
        session_mode="session_aware",
    )


def plan(rng: random.Random, *, repeats: int = 1, preview: bool = False) -> Manifest:
    cases = [case(BENCHMARKS[i % 2], f"q{i}") for i in range(rng.randint(3, 14))]
    targets = [target("single"), router()] if not preview else [router()]
    frozen = manifest(expand_repeats(cases, repeats), targets, repeats=repeats)
    return frozen.model_copy(update={"mode": "preview"}) if preview else frozen


def _usage(rng: random.Random) -> dict[str, int] | None:
    if rng.random() < 0.1:
        return None
    return {
        "input_tokens": rng.randint(1, 90),
        "cached_input_tokens": rng.randint(0, 20),
        "cache_write_tokens": rng.randint(0, 5),
        "output_tokens": rng.randint(1, 40),
    }


def _cost(rng: random.Random) -> Any:
    return rng.choice([None, rng.random() / 1000, rng.random() / 1e6, 0.1, 0])


def _call(rng: random.Random, case_id: str, target_id: str, index: int, routed: bool) -> Row:
    role = "subject" if rng.random() < 0.85 else rng.choice(["judge", "simulator"])
    status = rng.choice(["completed"] * 6 + ["failed", "sent", "running"])
    extra: Row = {
        "id": f"call-{index}",
        "status": status,
        "usage": _usage(rng),
        "latency_s": rng.choice([None, rng.random() * 3]),
        "ttft_s": rng.choice([None, rng.random()]),
        "finish_reason": rng.choice([None, "stop", "length"]),
        "inference_call_count": rng.choice([1, 1, 1, None, 2]),
        "phase": rng.choice([None, "user_turn", "tool_result"]),
        "cache_read_reported": rng.random() < 0.3,
        "model": "m-a" if not routed else "auto",
    }
    if routed:
        extra["selected_model"] = rng.choice([None, *MODELS])
        extra["decision"] = rng.choice([None, *DECISIONS])
        if rng.random() < 0.1:
            extra["model_usage"] = [
                {"model": model, "usage": _usage(rng) or {}} for model in rng.sample(MODELS, 2)
            ]
    if rng.random() < 0.2:
        extra["cache_read_usage"] = _usage(rng)
    return call(case_id, target_id, _cost(rng), role=role, **extra)


def _result(rng: random.Random, case_id: str, target_id: str, preview: bool) -> Row:
    status = rng.choice(["completed"] * 5 + ["failed", "cancelled", "sent_unknown", "running"])
    details: Row = {}
    if rng.random() < 0.3:
        details["strict_format"] = rng.choice([True, False])
    if rng.random() < 0.1:
        details["quality_failure"] = "output_limit"
    if preview:
        details["routing"] = {
            "selected_model": rng.choice([None, *MODELS]),
            "selection_status": rng.choice(["ok", "fallback", None]),
            "selection_reason": rng.choice(["keyword_match", "embedding", None]),
            "decision_result": {"decision_name": rng.choice([None, *DECISIONS])},
        }
    return result(
        case_id,
        target_id,
        status=status,
        correct=rng.choice([True, False, None]) if status == "completed" else None,
        latency_s=rng.choice([None, rng.random() * 4]),
        subject_latency_s=rng.choice([None, rng.random() * 3]),
        queue_wait_s=rng.choice([None, rng.random() / 10]),
        ttft_s=rng.choice([None, rng.random()]),
        cost_usd=_cost(rng),
        answer=rng.choice([None, "A", ["B", 1], {"grid": [[1, 2]]}]),
        error=None if status == "completed" else rng.choice([None, "Target HTTP 503", "timeout"]),
        finished_at=rng.choice([None, f"2026-11-30T00:00:{rng.randint(10, 30)}+00:00"]),
        details=details,
    )


def rows(rng: random.Random, frozen: Manifest) -> tuple[list[Row], list[Row]]:
    """Result rows and calls of most planned cells, a few outside the plan, shuffled."""
    results: list[Row] = []
    calls: list[Row] = []
    routed = {t.id for t in frozen.targets if t.kind == "mom"}
    preview = frozen.mode == "preview"
    cells = list(frozen.planned_keys())
    cells += [(cells[0][0], "nowhere"), (f"{BENCHMARKS[0]}/unplanned", cells[0][1])]
    for case_id, target_id in cells:
        if rng.random() < 0.15:
            continue  # pending: neither a row nor a call
        if rng.random() < 0.9:
            results.append(_result(rng, case_id, target_id, preview))
        for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
            calls.append(_call(rng, case_id, target_id, len(calls), target_id in routed))
    rng.shuffle(results)
    rng.shuffle(calls)
    return results, calls
