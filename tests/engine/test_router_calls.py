"""Router (MoM) targets through the engine against the simulator's real router: receipts,
sessions, broken router answers that keep their evidence, preview mode and recipe capture."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_srbench.app.recipes import capture_recipes
from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.core.calls.receipts import session_id
from pytest_srbench.core.models import Case, Limits, Message, Target
from pytest_srbench.core.plan.budget import Budget
from pytest_srbench.core.report.build import build_report
from pytest_srbench.engine import Engine, EngineOptions
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.simulator.profiles import BUILTIN_MODELS
from pytest_srbench.simulator.router import DEFAULT_ROUTER, SimRouter, config_hash
from pytest_srbench.simulator.targets import simulated_router_target
from pytest_srbench.store import GroupCommitWriter, open_store
from pytest_srbench.transport import make_transport
from tests.core.helpers import manifest, run
from tests.engine.helpers import assert_declared

REGISTRY = default_registry(with_entry_points=False)


def cases(n: int = 6) -> list[Case]:
    topics = ["Calculate the physics of a spring", "Name a colour", "Prove the math lemma"]
    return [
        Case(
            id=f"mmlu-pro/r{i}",
            benchmark="mmlu-pro",
            messages=[Message(role="user", content=f"{topics[i % 3]} ({i}).\n\nA. a\nB. b\nC. c\nD. d")],
            answer="B",
            metadata={"letters": "ABCD"},
        )
        for i in range(n)
    ]  # fmt: skip


def router_target(router: SimRouter = DEFAULT_ROUTER, **update) -> Target:
    return simulated_router_target(router, BUILTIN_MODELS).model_copy(update=update)


def run_router(
    tmp_path: Path, sim, target: Target, n: int = 6, run_id: str = "run-r", **plan_extra
):
    work = cases(n)
    plan = manifest(work, [target], limits=Limits(max_cost_usd=100), **plan_extra)
    store = open_store(tmp_path / "store")
    store.create_run(run_id, plan)
    runtime = RunRuntime(
        run_id=run_id,
        manifest=plan,
        store=store,
        writer=GroupCommitWriter(store),
        transport=make_transport("aiohttp", connections=8),
        adapters=REGISTRY,
        base_urls={target.id: sim.base_url},
        budget=Budget(cap_usd=plan.limits.max_cost_usd),
    )
    engine = Engine(runtime, EngineOptions(concurrency=8))
    engine.start([(case, target) for case in work])
    for future in engine.slots.values():
        future.result(timeout=60)
    assert engine.join(30)
    return store, plan


def test_router_calls_are_priced_by_receipt_and_carry_routing_and_sessions(tmp_path, sim):
    store, plan = run_router(tmp_path, sim, router_target())
    calls = store.calls("run-r")
    assert len(calls) == 6 and {c["status"] for c in calls} == {"completed"}
    for call in calls:
        assert call["selected_model"] in ("sim-large", "sim-small")
        assert call["decision"] in ("reasoning", "general")
        assert (
            call["inference_call_count"] in (1, 2)
            and len(call["model_usage"]) == call["inference_call_count"]
        )
        assert call["cost_usd"] > 0 and call["usage"] is not None
        assert call["session_id"] == session_id("run-r", call["case_id"], "sim-router")
        assert call["phase"] == "user_turn" and call["phase_source"] == "router"
        assert call["config_hash"] == plan.targets[0].config_hash
    routed = {c["case_id"]: c["selected_model"] for c in calls}
    assert routed["mmlu-pro/r1"] == "sim-small" and routed["mmlu-pro/r0"] == "sim-large"
    report = build_report(plan, run(), store.results("run-r"), calls, [])
    target = report["summary"]["targets"][0]
    assert target["kind"] == "mom" and sum(target["selected_models"].values()) == 6
    assert target["call_count"] == sum(c["inference_call_count"] for c in calls)
    breakdown = {d["decision"]: d for d in target["decision_breakdown"]}
    assert set(breakdown) == {"reasoning", "general"}
    assert sum(d["cases"] for d in breakdown.values()) == 6
    assert breakdown["general"]["selected_models"] == {"sim-small": 2}
    assert target["continuity"]["session_mode"] == "session_aware"
    assert_declared(calls, store.results("run-r"))


def test_stateless_router_sends_no_session_header(tmp_path, sim):
    store, _ = run_router(tmp_path, sim, router_target(session_mode="stateless"), n=2)
    for call in store.calls("run-r"):
        assert call["session_id"] is None and call["phase_source"] == "request"


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("wrong_hash", "Runtime configuration identity acknowledgement missing or mismatched"),
        ("oversized", "Router model-usage receipt exceeds 12288 bytes"),
        ("malformed", "Router model-usage receipt is not valid JSON"),
        ("too_many_calls", "Router made 3 inference calls; the frozen limit is 2"),
    ],
)
def test_broken_router_answers_fail_the_call_and_keep_evidence(tmp_path, sim, fault, reason):
    broken = DEFAULT_ROUTER.model_copy(update={"name": f"router-{fault}", "receipt_fault": fault})
    sim_client.register_routers(sim.admin_url, [broken])
    target = router_target(broken)
    store, _ = run_router(tmp_path, sim, target, n=2)
    results = store.results("run-r")
    assert {r["status"] for r in results} == {"failed"}
    assert {r["error"] for r in results} == {reason}
    for call in store.calls("run-r"):
        assert call["status"] == "failed" and call["error"] == reason
        evidence = store.read_evidence(call["evidence"])
        assert evidence.rstrip().endswith(b"data: [DONE]")  # the whole answer was kept


def test_preview_mode_asks_the_router_and_generates_nothing(tmp_path, sim):
    target = router_target()
    before = sim_client.stats(sim.admin_url)["by_model"].get("sim-router", 0)
    store, plan = run_router(
        tmp_path, sim, target, mode="preview", preview_context={"conversation_id": "conv-1"}
    )
    assert sim_client.stats(sim.admin_url)["by_model"].get("sim-router", 0) == before
    results = store.results("run-r")
    assert {r["status"] for r in results} == {"completed"}
    assert all(r["correct"] is None and r["answer"] is None for r in results)
    routing = {r["case_id"]: r["details"]["routing"] for r in results}
    assert routing["mmlu-pro/r1"]["selected_model"] == "sim-small"
    assert routing["mmlu-pro/r0"]["decision_result"]["decision_name"] == "reasoning"
    calls = store.calls("run-r")
    assert all(c["kind"] == "preview" and c["cost_usd"] == 0.0 for c in calls)
    assert calls[0]["request"]["body"]["preview_context"]["conversation_id"] == "conv-1"
    report = build_report(plan, run(), results, calls, [])
    target_row = report["summary"]["targets"][0]
    assert target_row["accuracy"] is None and target_row["macro_accuracy"] is None
    assert sum(target_row["selected_models"].values()) == 6
    assert target_row["continuity"]["session_mode"] == "stateless"
    assert any("Preview run" in line for line in report["limitations"])
    assert_declared(calls, results)


def test_preview_with_a_stale_config_hash_fails_the_cell(tmp_path, sim):
    target = router_target(config_hash="0" * 64)
    store, _ = run_router(tmp_path, sim, target, n=1, mode="preview")
    (result,) = store.results("run-r")
    assert result["status"] == "failed" and "configuration identity" in result["error"]
    (call,) = store.calls("run-r")
    assert store.read_evidence(call["evidence"]).startswith(b"{")


def test_recipe_capture_against_the_router_config_endpoint(sim):
    frozen = router_target()
    plan = manifest(cases(1), [frozen])
    (captured,) = capture_recipes(plan, {frozen.id: sim.base_url})
    assert captured["status"] == "captured" and captured["config_hash"] == frozen.config_hash
    text = str(captured["recipe"])
    assert "sk-sim-router" not in text and "10.0.0.7" not in text
    assert captured["recipe"]["decisions"]

    # a router whose running config lags its generated one: no recipe
    lagging = DEFAULT_ROUTER.model_copy(
        update={"name": "router-lag", "config_version": 2, "active_lag": True}
    )
    sim_client.register_routers(sim.admin_url, [lagging])
    target = router_target(lagging, config_hash=config_hash(lagging))
    (snapshot,) = capture_recipes(manifest(cases(1), [target]), {target.id: sim.base_url})
    assert snapshot["status"] == "unavailable" and "active config hash" in snapshot["reason"]

    # the frozen hash is an older config: no recipe, never the newer one
    newer = DEFAULT_ROUTER.model_copy(update={"name": "router-new", "config_version": 3})
    sim_client.register_routers(sim.admin_url, [newer])
    stale = router_target(newer, config_hash=config_hash(DEFAULT_ROUTER))
    (snapshot,) = capture_recipes(manifest(cases(1), [stale]), {stale.id: sim.base_url})
    assert snapshot["status"] == "unavailable" and "generated config hash" in snapshot["reason"]
    assert "recipe" not in snapshot

    # nothing listening: unavailable with the reason
    (down,) = capture_recipes(plan, {frozen.id: "http://127.0.0.1:9/v1"})
    assert down["status"] == "unavailable" and "could not be read" in down["reason"]
