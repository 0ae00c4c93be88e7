"""``POST /api/replays``, ``GET /api/replay-options`` and ``GET /api/replays/review`` over real
HTTP, on a store holding a live baseline of two single models and a preview of a router."""

from __future__ import annotations

import httpx

from tests.core.replay_helpers import store_with_pair
from tests.service.helpers import assert_error


def test_replay_routes_over_http(start_api, tmp_path):
    store_with_pair(str(tmp_path / "store")).close()
    api = start_api(store=str(tmp_path / "store"))
    with httpx.Client(base_url=api.base_url, timeout=60) as client:
        options = client.get("/api/replay-options", params={"baseline_run_id": "live"}).json()
        assert options["options"] == [
            {"preview_run_id": "prev", "name": options["options"][0]["name"],
             "created_at": options["options"][0]["created_at"],
             "eligible": True, "problems": [], "eligible_cells": 2, "ineligible_cells": 0}
        ] and options["next_cursor"] is None  # fmt: skip
        # the reverse lookup: the live runs a preview could be replayed on
        baselines = client.get("/api/replay-options", params={"preview_run_id": "prev"}).json()
        assert baselines["preview_run_id"] == "prev" and baselines["next_cursor"] is None
        assert [(o["baseline_run_id"], o["eligible"], o["eligible_cells"])
                for o in baselines["options"]] == [("live", True, 2)]  # fmt: skip
        for params in ({}, {"baseline_run_id": "live", "preview_run_id": "prev"}):
            wrong = client.get("/api/replay-options", params=params)
            assert_error(wrong, 422, "BENCHMARK_INVALID_REQUEST")
        missing = client.get("/api/replay-options", params={"preview_run_id": "nope"})
        assert_error(missing, 404, "BENCHMARK_RUN_NOT_FOUND")
        after = client.get(
            "/api/replay-options", params={"baseline_run_id": "live", "after": "prev"}
        )
        assert after.json()["options"] == []
        review = client.get("/api/replays/review",
                            params={"baseline_run_id": "live", "preview_run_id": "prev"}).json()  # fmt: skip
        assert review["eligible"] and len(review["cells"]) == 2

        body = {"baseline_run_id": "live", "preview_run_id": "prev", "idempotency_key": "api-1"}
        made = client.post("/api/replays", json=body)
        assert made.status_code == 201, made.text
        run = made.json()["run"]
        assert run["mode"] == "replay" and run["status"] == "completed"
        again = client.post("/api/replays", json=body)
        assert again.status_code == 200 and again.json()["run"]["id"] == run["id"]
        report = client.get(f"/api/runs/{run['id']}/report").json()
        (target,) = report["summary"]["targets"]
        assert target["accuracy"] is None and target["estimated_accuracy"] == 1.0
        calls = client.get(f"/api/runs/{run['id']}/calls").json()["calls"]
        assert {c["status"] for c in calls} == {"replayed"}
        assert {c["source_call_id"] for c in calls} == {"call-mmlu-pro/1-a", "call-mmlu-pro/2-a"}
        compared = client.get("/api/compare", params={"baseline": "live", "candidate": run["id"]})
        assert_error(compared, 422, "BENCHMARK_COMPARISON_INVALID")
        assert (
            f"run {run['id']} is an offline replay (estimate), not live evidence" in compared.text
        )

        swapped = {"baseline_run_id": "prev", "preview_run_id": "live", "idempotency_key": "api-2"}
        refused = client.post("/api/replays", json=swapped)
        assert_error(refused, 409, "BENCHMARK_REPLAY_REJECTED")
        assert "replay_ineligible: baseline_not_live" in refused.text
        rebound = client.post("/api/replays", json={**swapped, "idempotency_key": "api-1"})
        assert_error(rebound, 409, "BENCHMARK_REPLAY_REJECTED")
