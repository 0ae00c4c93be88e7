"""The service says where cases came from (datasets list, run report) and refuses to compare
runs whose same benchmark came from other data unless asked, then flags it — over a live API
with its own project (its suites change mid-test, so no other test shares it)."""

from __future__ import annotations

import json
import shutil

import httpx

from pytest_srbench.datasets.suites import shipped_suites_dir
from tests.service.helpers import TERMINAL, assert_error, create, wait_for


def test_data_sources_in_the_catalog_the_report_and_compare(start_api):
    live = start_api()
    with httpx.Client(base_url=live.base_url, timeout=30) as client:
        listed = {d["id"]: d for d in client.get("/api/datasets").json()["datasets"]}
        assert listed["mmlu-pro"]["data"] == "original"
        assert listed["rag-smoke"]["data"] == "original"
        base = create(client, targets=["sim-slow"], name="originals", idempotency_key="orig")
        base = wait_for(client, base["id"], TERMINAL)
        # the same items as the project's own suite (its suite.json says no origin)
        folder = live.project / "suites" / "mmlu-pro"
        shutil.copytree(shipped_suites_dir() / "mmlu-pro", folder)
        meta = json.loads((folder / "suite.json").read_text())
        del meta["origin"]
        meta["source"] = "our mmlu copy"
        (folder / "suite.json").write_text(json.dumps(meta))
        assert client.get("/api/datasets/mmlu-pro").json()["data"] == "user"
        cand = create(client, targets=["sim-slow"], name="ours", idempotency_key="ours")
        cand = wait_for(client, cand["id"], TERMINAL)
        assert (base["status"], cand["status"]) == ("completed", "completed")
        report = client.get(f"/api/runs/{cand['id']}/report").json()
        assert report["data_sources"]["kind"] == "user"
        assert report["benchmarks"][0]["data_source"]["source"] == "our mmlu copy"
        pair = {"baseline": base["id"], "candidate": cand["id"]}
        refused = client.get("/api/compare", params=pair)
        assert_error(refused, 422, "BENCHMARK_COMPARISON_INVALID")
        message = refused.json()["error"]["message"]
        assert message.startswith(
            "Cannot compare runs whose cases come from different data sources: mmlu-pro is "
            "original: original smoke items written for pytest-srbench in the baseline"
        )
        assert "but user: our mmlu copy in the candidate" in message
        allowed = client.get("/api/compare", params={**pair, "allow_mixed_sources": "true"})
        assert allowed.status_code == 200, allowed.text
        result = allowed.json()
        assert result["mixed_sources"] is True
        assert "MIXED DATA SOURCES" in result["candidates"][0]["data_sources"]["warning"]
