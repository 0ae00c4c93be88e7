"""The engine against the real simulator: receipts, evidence, failures, limits, concurrency."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.core.models import Case, Limits, Message, Target
from pytest_srbench.core.plan.budget import Budget
from pytest_srbench.core.report.build import build_report
from pytest_srbench.engine import Engine, EngineOptions
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import GroupCommitWriter, open_store
from pytest_srbench.transport import make_transport
from tests.conftest import CHEAP
from tests.core.helpers import manifest
from tests.engine.helpers import assert_declared

REGISTRY = default_registry(with_entry_points=False)


def mcq_case(i: int, answer: str = "B") -> Case:
    prompt = f"Question {i}: pick one.\n\nA. a\nB. b\nC. c\nD. d\n\nReturn only the letter of the correct answer."
    return Case(
        id=f"mmlu-pro/q{i}",
        benchmark="mmlu-pro",
        messages=[Message(role="user", content=prompt)],
        answer=answer,
        metadata={"letters": "ABCD"},
    )


def sim_target(model: str, **extra) -> Target:
    return Target(id=model, model=model, prices={model: CHEAP}, simulated=True, **extra)


def run_engine(
    tmp_path: Path,
    sim,
    models,
    n=4,
    limits=None,
    concurrency=8,
    cost_policy="require_priced",
    max_failures=None,
    budget=None,
    transport="aiohttp",
):
    cases = [mcq_case(i) for i in range(n)]
    targets = [sim_target(m) for m in models]
    plan = manifest(cases, targets, limits=limits or Limits(), cost_policy=cost_policy)
    sim_client.register_scripts(sim.admin_url, sim_client.scripts_for(cases, REGISTRY))
    store = open_store(tmp_path / "store")
    store.create_run("run-e", plan)
    writer = GroupCommitWriter(store)
    runtime = RunRuntime(
        run_id="run-e",
        manifest=plan,
        store=store,
        writer=writer,
        transport=make_transport(transport, connections=concurrency),
        adapters=REGISTRY,
        base_urls={t.id: sim.base_url for t in targets},
        budget=Budget(cap_usd=budget if budget is not None else plan.limits.max_cost_usd),
        max_failures=max_failures,
    )
    engine = Engine(runtime, EngineOptions(concurrency=concurrency))
    engine.start([(c, t) for c in cases for t in targets])
    outcomes = {key: future.result(timeout=120) for key, future in engine.slots.items()}
    assert engine.join(60)
    return store, plan, outcomes


def by_status(store):
    statuses = {}
    for row in store.results("run-e"):
        statuses.setdefault(row["status"], []).append(row)
    return statuses


@pytest.mark.parametrize("transport", ["aiohttp", "httpx-aiohttp", "httpx"])
def test_correct_cells_journal_receipts_and_evidence(tmp_path, sim, transport):
    store, plan, outcomes = run_engine(tmp_path, sim, ["always-right"], transport=transport)
    assert {o.status for o in outcomes.values()} == {"completed"}
    results = store.results("run-e")
    assert all(
        r["correct"] is True and r["details"]["answer_status"] == "answered" for r in results
    )
    calls = store.calls("run-e")
    assert len(calls) == 4 and all(c["status"] == "completed" for c in calls)
    for c in calls:
        assert c["usage"]["input_tokens"] + c["usage"]["cached_input_tokens"] > 0
        assert c["cost_usd"] > 0 and c["ttft_s"] is not None and c["latency_s"] >= c["ttft_s"]
        assert c["model"] == "always-right" and c["simulated"] is True
        evidence = store.read_evidence(c["evidence"])
        assert evidence.startswith(b"data: {") and evidence.rstrip().endswith(b"data: [DONE]")
        assert len(evidence) == c["evidence_bytes"]
    kinds = [e["kind"] for e in store.events("run-e", limit=100)]
    assert kinds.count("call_sent") == 4 and kinds.count("case_completed") == 4
    assert_declared(calls, results)


def test_http_500_fails_the_cell_and_keeps_call_and_evidence(tmp_path, sim):
    store, plan, outcomes = run_engine(tmp_path, sim, ["always-right", "err500"], n=2)
    failed = [r for r in store.results("run-e") if r["target_id"] == "err500"]
    assert [r["status"] for r in failed] == ["failed", "failed"]
    # the server's own message rides along (cleaned, capped)
    assert all(r["error"] == "Target HTTP 500: simulated internal error" for r in failed)
    bad_calls = [c for c in store.calls("run-e") if c["target_id"] == "err500"]
    assert len(bad_calls) == 2 and all(
        c["status"] == "failed" and c["http_status"] == 500 for c in bad_calls
    )
    assert all(store.read_evidence(c["evidence"]).startswith(b"{") for c in bad_calls)
    from tests.core.helpers import run as run_row

    report = build_report(
        plan, run_row("failed"), store.results("run-e"), store.calls("run-e"), store.events("run-e")
    )
    metrics = {t["id"]: t for t in report["summary"]["targets"]}
    assert metrics["err500"]["cost_usd"] is None and metrics["err500"]["accuracy"] == 0
    assert metrics["err500"]["known_cost_usd"] == 0
    assert metrics["always-right"]["cost_usd"] == pytest.approx(
        metrics["always-right"]["known_cost_usd"]
    )
    assert report["failure"]["reason"] == "Target HTTP 500: simulated internal error"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        ("garbled", "JSONDecodeError"),
        ("looping", "Repeated output guard"),
    ],
)
def test_broken_streams_fail_with_a_reason(tmp_path, sim, model, message):
    store, _, outcomes = run_engine(tmp_path, sim, [model], n=1)
    (row,) = store.results("run-e")
    assert row["status"] == "failed" and message in row["error"]
    (call,) = store.calls("run-e")
    assert call["status"] == "failed" and store.read_evidence(call["evidence"])


def test_stream_cut_is_a_connection_or_incomplete_failure(tmp_path, sim):
    store, _, _ = run_engine(tmp_path, sim, ["cut"], n=1)
    (row,) = store.results("run-e")
    assert row["status"] == "failed"
    assert "Incomplete final response" in row["error"] or "ConnectionError" in row["error"]


def test_missing_usage_fails_priced_calls_but_stays_null_when_capability_only(tmp_path, sim):
    store, _, _ = run_engine(tmp_path, sim, ["nousage"], n=1)
    (row,) = store.results("run-e")
    assert row["status"] == "failed" and "incomplete usage" in row["error"]
    store2, _, _ = run_engine(tmp_path / "b", sim, ["nousage"], n=1, cost_policy="capability_only")
    (row2,) = store2.results("run-e")
    (call2,) = store2.calls("run-e")
    assert row2["status"] == "completed"
    assert call2["usage"] is None and call2["cost_usd"] is None and row2["usage"] is None


def test_idle_timeout_fails_the_call(tmp_path, sim):
    # The stream goes silent for 5 s and then finishes: only the idle timeout can fail it, and
    # the total deadline (30 s) is far away, so the error names which one fired.
    limits = Limits(idle_timeout_s=0.5, total_timeout_s=30)
    store, _, _ = run_engine(tmp_path, sim, ["staller"], n=1, limits=limits)
    (row,) = store.results("run-e")
    assert row["status"] == "failed" and "ReadTimeout" in row["error"]


def test_total_timeout(tmp_path, sim):
    # dribble sends a chunk every 0.1 s for about 3 s. With the idle timeout equal to the total
    # one, a slow gap on a loaded machine cannot fire it first: each read starts after the
    # request did, so the total deadline is always the earlier timer.
    limits = Limits(idle_timeout_s=1.0, total_timeout_s=1.0)
    store, _, _ = run_engine(tmp_path, sim, ["dribble"], n=1, limits=limits)
    (row,) = store.results("run-e")
    assert row["error"] == "total request deadline exceeded"


def test_case_timeout_cancels_the_cell(tmp_path, sim):
    # dribble streams for about 3 s (a chunk every 0.1 s): still running at the case deadline
    # however loaded the machine, while the call's own timeouts are far away.
    limits = Limits(idle_timeout_s=30, total_timeout_s=30, case_timeout_s=0.4)
    store, _, _ = run_engine(tmp_path, sim, ["dribble"], n=1, limits=limits)
    (row,) = store.results("run-e")
    assert row["status"] in ("cancelled", "failed") and "deadline" in row["error"]


def test_concurrency_is_bounded_and_calls_overlap(tmp_path, sim):
    store, _, _ = run_engine(tmp_path, sim, ["slow"], n=20, concurrency=5)
    stats = sim_client.stats(sim.admin_url)
    assert stats["requests"] == 20
    # counted at the simulator: sequential calls would never overlap (each is held 0.3 s)
    assert 2 <= stats["max_in_flight"] <= 5


def test_opt_in_retry_journals_every_attempt(tmp_path, sim):
    limits = Limits(max_call_attempts=3, retry_backoff_s=0.01)
    store, _, _ = run_engine(tmp_path, sim, ["flaky429"], n=1, limits=limits)
    (row,) = store.results("run-e")
    assert row["status"] == "completed"
    calls = store.calls("run-e")
    assert [c["status"] for c in calls] == ["failed", "completed"]
    assert [c["attempt"] for c in calls] == [1, 2]


def test_retries_are_off_by_default(tmp_path, sim):
    store, _, _ = run_engine(tmp_path, sim, ["flaky429"], n=1)
    assert [c["status"] for c in store.calls("run-e")] == ["failed"]


def test_budget_refuses_before_any_call_row(tmp_path, sim):
    store, _, outcomes = run_engine(
        tmp_path, sim, ["always-right"], n=3, concurrency=1, budget=1e-9
    )
    assert store.calls("run-e") == []
    statuses = by_status(store)
    assert len(statuses["failed"]) == 1
    assert "Insufficient cost budget" in statuses["failed"][0]["error"]
    assert sorted(o.status for o in outcomes.values()) == ["failed", "pending", "pending"]


def test_fail_closed_stops_dispatch_after_max_failures(tmp_path, sim):
    store, _, outcomes = run_engine(tmp_path, sim, ["err500"], n=6, concurrency=1, max_failures=1)
    assert len(store.calls("run-e")) == 1
    assert sorted(o.status for o in outcomes.values()).count("pending") == 5


def test_output_limit_is_an_incorrect_completed_cell(tmp_path, sim):
    store, _, _ = run_engine(tmp_path, sim, ["truncating"], n=1)
    (row,) = store.results("run-e")
    assert row["status"] == "completed" and row["correct"] is False
    assert row["details"]["quality_failure"] == "output_limit"


def test_missing_credential_fails_before_sending(tmp_path, sim, monkeypatch):
    monkeypatch.delenv("SRBENCH_TEST_KEY", raising=False)
    cases = [mcq_case(0)]
    target = Target(
        id="keyed",
        model="always-right",
        prices={"always-right": CHEAP},
        simulated=True,
        api_key_env="SRBENCH_TEST_KEY",
    )
    plan = manifest(cases, [target])
    store = open_store(tmp_path / "store")
    store.create_run("run-e", plan)
    writer = GroupCommitWriter(store)
    runtime = RunRuntime(
        run_id="run-e",
        manifest=plan,
        store=store,
        writer=writer,
        transport=make_transport(),
        adapters=REGISTRY,
        base_urls={"keyed": sim.base_url},
        budget=Budget(cap_usd=5),
    )
    engine = Engine(runtime, EngineOptions(concurrency=1))
    engine.start([(cases[0], target)])
    outcome = engine.slots[(cases[0].id, "keyed")].result(timeout=120)
    assert engine.join(60)
    assert outcome.status == "failed"
    assert "SRBENCH_TEST_KEY" in outcome.result["error"]
    assert store.calls("run-e") == []


def test_output_character_cap(tmp_path, sim):
    limits = Limits(max_output_chars=100)
    store, _, _ = run_engine(tmp_path, sim, ["verbose"], n=1, limits=limits)
    (row,) = store.results("run-e")
    assert row["status"] == "failed" and "Output character cap exceeded" in row["error"]


def test_output_token_cap(tmp_path, sim):
    limits = Limits(max_output_tokens=10)
    store, _, _ = run_engine(tmp_path, sim, ["overrun"], n=1, limits=limits)
    (row,) = store.results("run-e")
    assert row["status"] == "failed" and "Output token cap exceeded" in row["error"]


def test_stream_byte_cap(tmp_path, sim):
    cases = [mcq_case(0)]
    target = sim_target("verbose")
    plan = manifest(cases, [target])
    sim_client.register_scripts(sim.admin_url, sim_client.scripts_for(cases, REGISTRY))
    store = open_store(tmp_path / "store")
    store.create_run("run-e", plan)
    runtime = RunRuntime(
        run_id="run-e",
        manifest=plan,
        store=store,
        writer=GroupCommitWriter(store),
        transport=make_transport(),
        adapters=REGISTRY,
        base_urls={target.id: sim.base_url},
        budget=Budget(cap_usd=5),
    )
    runtime.byte_cap = (
        2000  # the frozen cap is max(max_output_chars x 30, 1 MiB); shrink it to test the guard
    )
    engine = Engine(runtime, EngineOptions(concurrency=1))
    engine.start([(cases[0], target)])
    outcome = engine.slots[(cases[0].id, target.id)].result(timeout=120)
    assert engine.join(60)
    assert outcome.status == "failed" and "Stream byte cap exceeded" in outcome.result["error"]
    (call,) = store.calls("run-e")
    assert (
        call["evidence_bytes"] > 2000
        and len(store.read_evidence(call["evidence"])) == call["evidence_bytes"]
    )


class ChattyAdapter:
    """An adapter that asks the model five times in one cell."""

    benchmark = "mmlu-pro"

    def simulator_scripts(self, case):
        return []

    async def evaluate(self, ctx):
        from pytest_srbench.benchmarks.base import Grade

        for _ in range(5):
            await ctx.call([m.model_dump() for m in ctx.case.messages])
        return Grade(correct=True)


def test_calls_per_case_budget(tmp_path, sim, monkeypatch):
    monkeypatch.setattr(REGISTRY, "get", lambda benchmark: ChattyAdapter())
    store, _, _ = run_engine(
        tmp_path, sim, ["always-right"], n=1, limits=Limits(max_calls_per_case=3)
    )
    (row,) = store.results("run-e")
    assert row["status"] == "failed" and "Per-case call budget exhausted" in row["error"]
    assert len(store.calls("run-e")) == 3


def test_run_wall_time_limit_leaves_later_cells_pending(tmp_path, sim):
    limits = Limits(max_run_seconds=0.5, total_timeout_s=0.5, idle_timeout_s=0.5)
    store, _, outcomes = run_engine(tmp_path, sim, ["slow"], n=8, concurrency=1, limits=limits)
    statuses = sorted(o.status for o in outcomes.values())
    assert "pending" in statuses
    assert len(store.results("run-e")) < 8
    assert all(
        o.reason and "wall-time" in o.reason for o in outcomes.values() if o.status == "pending"
    )


def test_fail_closed_cancels_cells_in_flight(tmp_path, sim):
    # dribble answers take about 3 s, an err500 answer none: the dribble cells dispatched beside
    # the first failure are still streaming when it stops the run, however loaded the machine.
    store, _, outcomes = run_engine(
        tmp_path, sim, ["dribble", "err500"], n=6, concurrency=4, max_failures=1
    )
    statuses = [o.status for o in outcomes.values()]
    assert statuses.count("failed") == 1
    assert "cancelled" in statuses and "pending" in statuses
    assert any(c["status"] == "cancelled" for c in store.calls("run-e"))


def test_a_loop_that_cannot_start_is_an_error_not_a_wait(tmp_path, monkeypatch):
    """The engine's thread fails before its loop runs: ``start`` raises with the reason and
    every cell has an outcome, instead of waiting forever for a loop that never comes."""
    import pytest_srbench.engine.engine as engine_module

    def broken() -> None:
        raise OSError("no more file descriptors")

    cases = [mcq_case(1)]
    targets = [sim_target("sim-large")]
    plan = manifest(cases, targets)
    store = open_store(tmp_path / "store")
    store.create_run("run-e", plan)
    runtime = RunRuntime(
        run_id="run-e",
        manifest=plan,
        store=store,
        writer=GroupCommitWriter(store),
        transport=make_transport("aiohttp", connections=2),
        adapters=REGISTRY,
        base_urls={},
        budget=Budget(cap_usd=plan.limits.max_cost_usd),
    )
    monkeypatch.setattr(engine_module.asyncio, "new_event_loop", broken)
    engine = Engine(runtime, EngineOptions(concurrency=2))
    with pytest.raises(RuntimeError, match="could not start: OSError"):
        engine.start([(c, t) for c in cases for t in targets])
    assert all(slot.done() for slot in engine.slots.values())


def test_in_flight_progress_grows_while_a_stream_runs(tmp_path, sim):
    """While a call streams (dribble: a chunk every 0.1 s for about 3 s), the store shows it
    in flight with the bytes received so far and when it last grew, both advancing; once it
    ends it is no longer in flight."""
    cases = [mcq_case(0)]
    targets = [sim_target("dribble")]
    plan = manifest(cases, targets, limits=Limits(idle_timeout_s=30, total_timeout_s=30))
    sim_client.register_scripts(sim.admin_url, sim_client.scripts_for(cases, REGISTRY))
    store = open_store(tmp_path / "store")
    store.create_run("run-e", plan)
    runtime = RunRuntime(
        run_id="run-e", manifest=plan, store=store, writer=GroupCommitWriter(store),
        transport=make_transport(), adapters=REGISTRY,
        base_urls={t.id: sim.base_url for t in targets}, budget=Budget(cap_usd=5),
    )  # fmt: skip
    engine = Engine(runtime, EngineOptions(concurrency=2, watch_interval_s=0.05))
    engine.start([(cases[0], targets[0])])
    reader = open_store(tmp_path / "store")
    (slot,) = engine.slots.values()
    seen: list[tuple[int, str]] = []  # (bytes received, last activity) as the store showed them
    while not slot.done():
        for call in reader.calls("run-e", active=True):
            if call["last_activity_at"] and (not seen or seen[-1][0] != call["bytes_received"]):
                seen.append((call["bytes_received"], call["last_activity_at"]))
        time.sleep(0.02)
    slot.result(timeout=120)
    assert engine.join(60)
    assert len(seen) >= 3, seen  # ~3 s of stream, looked at every 0.02 s, published every 0.05
    assert [b for b, _ in seen] == sorted(b for b, _ in seen) and seen[0][0] < seen[-1][0]
    assert [a for _, a in seen] == sorted(a for _, a in seen) and seen[0][1] < seen[-1][1]
    (call,) = reader.calls("run-e")
    assert call["status"] == "completed" and seen[-1][0] <= call["evidence_bytes"]
    assert reader.calls("run-e", active=True) == []
