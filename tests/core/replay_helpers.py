"""Shared by test_replay and the tests that build on it (a test module never imports another)."""

from __future__ import annotations

from typing import Any

from pytest_srbench.core.models import Case, DatasetInfo, Manifest, Message, Run, Target
from pytest_srbench.core.offline.replay import (
    review,
)
from pytest_srbench.core.plan.build import seal
from pytest_srbench.store.base import Store
from pytest_srbench.store.opening import open_store

CASES = [
    Case(id="mmlu-pro/1", benchmark="mmlu-pro", messages=[Message(role="user", content="q1")]),
    Case(id="mmlu-pro/2", benchmark="mmlu-pro", messages=[Message(role="user", content="q2")]),
]


ROUTING = {"selected_model": "m-a", "selection_status": "selected", "selection_method": "static",
           "decision_result": {"decision_name": "general"}, "inference_models": ["m-a"]}  # fmt: skip


def manifest(mode: str, targets: list[Target], cases: list[Case] = CASES, **extra: Any) -> Manifest:
    return seal(
        Manifest(
            mode=mode,
            targets=targets,
            cases=cases,
            benchmark_weights={"mmlu-pro": 1.0},
            adapter_versions={},
            case_sha256="c" * 64,
            sampling={"temperature": 0},
            dataset=DatasetInfo(profile="smoke", seed=1),
            **extra,
        )
    )


def run(run_id: str, status: str = "completed") -> Run:
    return Run(id=run_id, status=status, created_at="2026-01-01T00:00:00+00:00",
               updated_at="2026-01-01T00:00:01+00:00", plan_sha256="p")  # fmt: skip


SINGLES = [
    Target(id="a", model="m-a", simulated=True),
    Target(id="b", model="m-b", simulated=True),
]


ROUTER = Target(id="r", kind="mom", model="router", simulated=True)


class Pair:
    """A baseline and a preview that replay cleanly, to be broken one way per test."""

    def __init__(self) -> None:
        self.baseline = manifest("live", SINGLES)
        self.preview = manifest("preview", [ROUTER])
        self.baseline_run, self.preview_run = run("live"), run("prev")
        self.results = [
            {"case_id": c.id, "target_id": t.id, "status": "completed", "correct": t.id == "a",
             "score": int(t.id == "a"), "answer": "A", "details": {}, "cost_usd": 0.01,
             "latency_s": 1.0, "subject_latency_s": 1.0, "ttft_s": 0.1}
            for c in CASES for t in SINGLES
        ]  # fmt: skip
        self.calls = [
            {"id": f"call-{c.id}-{t.id}", "case_id": c.id, "target_id": t.id, "role": "subject",
             "status": "completed", "request": {"messages": [{"role": "user", "content": m}]},
             "cost_usd": 0.01, "model": t.model, "usage": None}
            for c, m in zip(CASES, ("q1", "q2"), strict=True) for t in SINGLES
        ]  # fmt: skip
        self.previews = [
            {"case_id": c.id, "target_id": "r", "status": "completed",
             "details": {"routing": dict(ROUTING)}}
            for c in CASES
        ]  # fmt: skip

    def review(self) -> dict[str, Any]:
        return review(self.baseline_run, self.baseline, self.results, self.calls,
                      self.preview_run, self.preview, self.previews)  # fmt: skip

    def reasons(self) -> set[str]:
        doc = self.review()
        return {*doc["problems"], *(c["reason"] for c in doc["cells"] if c["reason"])}


def store_with_pair(location: str) -> Store:
    """The store at ``location`` (opened) holding ``Pair()``'s completed live run ``live``
    (results and calls) and completed preview ``prev``."""
    pair = Pair()
    store = open_store(location)
    store.create_run("live", pair.baseline, status="completed")
    store.create_run("prev", pair.preview, status="completed")
    for row in pair.results:
        store.upsert_result("live", row)
    for call in pair.calls:
        store.insert_call("live", call)
    for row in pair.previews:
        store.upsert_result("prev", row)
    return store
