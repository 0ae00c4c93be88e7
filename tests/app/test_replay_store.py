"""The offline replay against a real store, SQLite and PostgreSQL (``store_location``): it is
created once per key, the reverse lookup lists the baselines of a preview, and a replay run
(or a cache hit, status ``replayed``) spends nothing wherever spend is summed from the calls,
while the report keeps the source cost as its estimate."""

from __future__ import annotations

import pytest

from pytest_srbench.app.replay import baseline_options, create_replay, replay_options
from pytest_srbench.app.reports import report_from_store
from pytest_srbench.store.base import StoreError
from tests.core.replay_helpers import Pair, store_with_pair


def test_a_replay_on_each_store_is_made_once_and_found_both_ways(store_location):
    store = store_with_pair(store_location)
    run, created, doc = create_replay(store, "live", "prev", idempotency_key="k-1")
    assert created and doc["eligible"] and run.status == "completed"
    again, created_again, _ = create_replay(store, "live", "prev", idempotency_key="k-1")
    assert again.id == run.id and not created_again
    with pytest.raises(StoreError, match="already bound to another run"):
        create_replay(store, "prev", "live", idempotency_key="k-1")
    calls = store.calls(run.id)
    assert sorted(c["source_call_id"] for c in calls) == ["call-mmlu-pro/1-a", "call-mmlu-pro/2-a"]
    assert {c["status"] for c in calls} == {"replayed"}
    assert [e["kind"] for e in store.events(run.id)].count("call_replayed") == 2
    assert store.get_manifest(run.id).replay_sources == {
        "baseline_run_id": "live",
        "preview_run_id": "prev",
    }

    (option,) = replay_options(store, "live")["options"]
    assert option["preview_run_id"] == "prev" and option["eligible"]
    # the reverse lookup lists live runs only: neither the preview nor the replay
    (baseline,) = baseline_options(store, "prev")["options"]
    assert baseline["baseline_run_id"] == "live" and baseline["eligible"]
    assert baseline["eligible_cells"] == 2 and baseline["name"] == Pair().baseline.name
    store.close()


def test_a_replay_spends_nothing_but_keeps_its_estimate(store_location):
    store = store_with_pair(store_location)
    live_spend = store.progress_counts("live").spend_usd
    assert live_spend == pytest.approx(0.04)  # four live calls of $0.01
    live_report = report_from_store(store, "live")
    run, _, _ = create_replay(store, "live", "prev", idempotency_key="k-spend")

    # the replayed calls keep the source's cost (the report's estimate) and spent nothing
    assert {c["cost_usd"] for c in store.calls(run.id)} == {0.01}
    assert store.progress_counts(run.id).spend_usd == 0
    report = report_from_store(store, run.id)
    (target,) = report["summary"]["targets"]
    assert target["estimated_cost_usd"] == pytest.approx(0.02)
    assert target["cost_usd"] is None and target["total_spend_usd"] == 0
    assert target["known_cost_usd"] == 0 and report["summary"]["total_spend_usd"] == 0
    assert all(
        row["cost_usd"] is None and row["known_cost_usd"] == 0
        for row in target["decision_breakdown"]
    )
    # the live run is as it was: its report does not change
    assert store.progress_counts("live").spend_usd == pytest.approx(live_spend)
    assert report_from_store(store, "live")["summary"] == live_report["summary"]

    # a cache hit in a live run (status replayed) spends nothing either, whatever its row says
    cached = {**store.calls("live")[0], "id": "call-cached", "status": "replayed"}
    cached = {k: v for k, v in cached.items() if not k.startswith("_")}
    store.insert_call("live", cached)
    assert store.progress_counts("live").spend_usd == pytest.approx(live_spend)
    store.close()
