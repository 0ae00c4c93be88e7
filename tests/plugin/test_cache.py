"""The response cache (docs/caching-honestly.md) with real processes and the built-in
simulator: a second run sends nothing, a changed request sends exactly its cells, the receipts
and the report say "from cache", and the cache lives in the store (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store
from tests.plugin.helpers import project

pytestmark = pytest.mark.slow

BENCH = ("--srbench-benchmark=mmlu-pro", "--srbench-benchmark=gpqa-diamond")
BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgres"])


def run(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
               "--srbench-profile=smoke", *extra]  # fmt: skip
    return subprocess.run(command, cwd=root, capture_output=True, text=True)


def where(backend: str, root: Path, request) -> tuple[str, tuple[str, ...]]:
    location = (
        request.getfixturevalue("postgres_url") if backend == "postgres" else str(root / ".srbench")
    )
    return location, (f"--srbench-store={location}",)


def answers(report: dict) -> list[tuple]:
    return sorted(
        (c["case_id"], c["target_id"], c.get("answer"), c.get("correct")) for c in report["cells"]
    )


def requests(sim) -> int:
    return int(sim_client.stats(sim.admin_url)["requests"])


@BACKENDS
def test_a_second_cached_run_sends_nothing_and_says_from_cache(pytester, sim, backend, request):
    project(pytester, sim, "always-right")
    root = pytester.path
    location, store_args = where(backend, root, request)
    first = run(root, *BENCH, *store_args, "--srbench-cache", "--srbench-json=a.json")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    sent = requests(sim)
    assert sent > 0
    second = run(root, *BENCH, *store_args, "--srbench-cache", "--srbench-json=b.json")
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-2000:]
    assert requests(sim) == sent  # zero requests reached the endpoint
    a = json.loads((root / "a.json").read_text())
    b = json.loads((root / "b.json").read_text())
    assert answers(a) == answers(b)
    store = open_store(location)
    calls = store.calls(b["run_id"])
    subject = [c for c in calls if c["role"] == "subject"]
    assert subject and all(c["status"] == "replayed" for c in subject)
    first_ids = {c["id"] for c in store.calls(a["run_id"])}
    assert all(c["source_call_id"] in first_ids for c in subject)
    assert all(c["latency_s"] is None and c["ttft_s"] is None for c in subject)
    assert all(c["estimated_usage"] for c in subject)
    store.close()
    target = b["summary"]["targets"][0]
    assert b["summary"]["total_spend_usd"] == 0
    assert target["total_spend_usd"] == 0
    live = a["summary"]["targets"][0]
    assert live["cache_avoided_cost_usd"] == 0 and live["cache"]["cells"] == 0
    assert target["cache_avoided_cost_usd"] == pytest.approx(live["total_spend_usd"])
    assert b["summary"]["cache_avoided_cost_usd"] == pytest.approx(live["total_spend_usd"])
    assert target["cache"] == {"cells": b["summary"]["planned_cells"], "share": 1.0,
                               "calls": len(subject)}  # fmt: skip
    assert target["complete"] is False and target["latency_p50_s"] is None
    assert all(row["cache"]["share"] == 1.0 for row in b["benchmarks"])
    assert b["summary"]["from_cache"] is True and a["summary"]["from_cache"] is False
    assert "from cache" in second.stdout
    assert "from cache" not in first.stdout
