"""The replay review, pure (run-lifecycle.md §11.2): every ``replay_ineligible`` reason, and
the refusal of a replay as live evidence by compare and the gate."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_srbench.core.compare.gate import evaluate_gate
from pytest_srbench.core.compare.runs import ComparisonError, RunSide, check_plans
from pytest_srbench.core.models import Case, Message, Target
from pytest_srbench.core.offline.replay import (
    CELL_REASONS,
    RUN_REASONS,
    refusal,
    replay_manifest,
)
from pytest_srbench.core.plan.build import seal
from pytest_srbench.core.report.build import build_report
from tests.core.replay_helpers import CASES, ROUTER, ROUTING, SINGLES, Pair, manifest, run  # noqa: F401


def test_an_eligible_pair_names_the_baseline_call_of_every_cell():
    doc = Pair().review()
    assert doc["eligible"] and doc["ineligible_cells"] == 0 and doc["model_requests"] == 0
    assert [c["source_call_id"] for c in doc["cells"]] == ["call-mmlu-pro/1-a", "call-mmlu-pro/2-a"]


def _set_routing(pair: Pair, **change: Any) -> None:
    pair.previews[0]["details"]["routing"].update(change)


BREAKS = {
    "baseline_not_completed": lambda p: setattr(p, "baseline_run", run("live", "failed")),
    "preview_not_completed": lambda p: setattr(p, "preview_run", run("prev", "interrupted")),
    "baseline_not_live": lambda p: setattr(p, "baseline", manifest("preview", SINGLES)),
    "preview_not_preview": lambda p: setattr(p, "preview", manifest("live", [ROUTER])),
    "baseline_targets_not_unique_singles": lambda p: setattr(
        p, "baseline", manifest("live", [*SINGLES, Target(id="c", model="m-a", simulated=True)])
    ),
    "preview_has_no_router": lambda p: setattr(
        p, "preview", manifest("preview", [Target(id="r", model="router", simulated=True)])
    ),
    "case_set_differs": lambda p: setattr(
        p, "preview", manifest("preview", [ROUTER]).model_copy(update={"case_sha256": "d" * 64})
    ),
    "sampling_differs": lambda p: setattr(
        p,
        "preview",
        manifest("preview", [ROUTER]).model_copy(update={"sampling": {"temperature": 1}}),
    ),
    "same_run": lambda p: setattr(p, "preview_run", run("live")),
    "unsupported_benchmark": lambda p: None,  # the test swaps the cases
    "preview_cell_not_completed": lambda p: p.previews[0].update(status="failed"),
    "not_selected": lambda p: _set_routing(p, selection_status="fallback"),
    "nondeterministic_selection": lambda p: _set_routing(p, selection_method="bandit"),
    "plugins": lambda p: _set_routing(p, plugins=["pii"]),
    "state_dependent": lambda p: _set_routing(p, trace={"sticky_session": True}),
    "multiple_inference_models": lambda p: _set_routing(p, inference_models=["m-a", "m-b"]),
    "selected_model_not_in_baseline": lambda p: _set_routing(p, selected_model="m-z"),
    "parameters_differ": lambda p: setattr(
        p,
        "preview",
        manifest("preview", [ROUTER.model_copy(update={"request_params": {"temperature": 0.5}})]),
    ),
    "baseline_cell_not_completed": lambda p: p.results[0].update(status="failed"),
    "no_completed_subject_call": lambda p: p.calls[0].update(status="failed"),
    "multiple_subject_calls": lambda p: p.calls.append({**p.calls[0], "id": "extra"}),
    "messages_differ": lambda p: p.calls[0].update(
        request={"messages": [{"role": "user", "content": "other"}]}
    ),
}


@pytest.mark.parametrize("reason", sorted(BREAKS))
def test_every_ineligibility_reason_is_named(reason, monkeypatch):
    assert set(BREAKS) == set(RUN_REASONS) | set(CELL_REASONS)
    pair = Pair()
    if reason == "unsupported_benchmark":
        pair.preview = seal(manifest("preview", [ROUTER]).model_copy(update={
            "cases": [Case(id="gsm/1", benchmark="gsm",
                           messages=[Message(role="user", content="q1")])],
            "benchmark_weights": {"gsm": 1.0},
        }))  # fmt: skip
    else:
        BREAKS[reason](pair)
    doc = pair.review()
    assert not doc["eligible"]
    assert f"replay_ineligible: {reason}" in pair.reasons()
    assert f"replay_ineligible: {reason}" in refusal(doc)


def _replay_report() -> dict[str, Any]:
    pair = Pair()
    replay = replay_manifest(pair.preview, "live", "prev")
    results = [
        {**r, "target_id": "r", "details": {"routing": ROUTING, "evidence_mode": "offline_estimate"}}
        for r in pair.results if r["target_id"] == "a"
    ]  # fmt: skip
    calls = [{**c, "target_id": "r", "status": "replayed", "source_call_id": c["id"]}
             for c in pair.calls if c["target_id"] == "a"]  # fmt: skip
    return build_report(replay, run("rep"), results, calls)


def test_a_replay_report_moves_its_metrics_to_estimates():
    report = _replay_report()
    (target,) = report["summary"]["targets"]
    assert report["mode"] == "replay" and report["evidence_mode"] == "offline_estimate"
    assert target["accuracy"] is None and target["estimated_accuracy"] == 1.0
    assert target["macro_accuracy"] is None and target["estimated_macro_accuracy"] == 1.0
    assert target["cost_usd"] is None and target["estimated_cost_usd"] == pytest.approx(0.02)
    assert target["latency_p50_s"] is None and target["estimated_latency_p50_s"] == 1.0
    assert target["ttft_p50_s"] is None and target["estimated_ttft_p50_s"] is None
    assert target["total_spend_usd"] == 0 and target["cost_complete"] is False
    assert target["sr_bench_score"] is None and report["summary"]["total_spend_usd"] == 0
    assert target["selected_models"] == {"m-a": 2} and target["decisions"] == {"general": 2}
    assert target["selection_statuses"] == {"selected": 2}
    (row,) = report["benchmarks"]
    assert row["accuracy"] is None and row["estimated_accuracy"] == 1.0
    assert any("Offline replay (estimate)" in line for line in report["limitations"])


def test_compare_and_the_gate_refuse_a_replay_as_live_evidence():
    replay = RunSide.from_report(_replay_report())
    live = RunSide(
        "live", "completed", "", {"mode": "live", "targets": [{"id": "a", "kind": "single"}]},
        [], [], [], kinds={"a": "single"},
    )  # fmt: skip
    words = "run rep is an offline replay (estimate), not live evidence"
    for baseline, candidate in ((live, replay), (replay, live)):
        with pytest.raises(ComparisonError, match=r"run rep is an offline replay \(estimate\)"):
            check_plans(baseline, candidate)
        gate = evaluate_gate(baseline, candidate)
        assert gate["passed"] is False and words in gate["line"]
