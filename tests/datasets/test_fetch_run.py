"""From nothing to a run on fetched data: `srbench datasets fetch --profile smoke` against the
local Hub/GitHub server, then `pytest --srbench-profile=smoke` on the simulator (a real
subprocess) scores the fetched suites, not the shipped ones."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from pytest_srbench.datasets.fetch import FetchRequest, fetch_all
from pytest_srbench.datasets.fetchlock import read_lock
from pytest_srbench.datasets.sources import RELEASES
from tests.datasets.fakehub import TOKEN, FakeHub, Server, hub_env
from tests.datasets.releases import publish
from tests.optional import import_extra

# loaded before any test sets HF_* variables (the module skips without the extra)
import_extra("huggingface_hub.hf_api", "fetch")

pytestmark = pytest.mark.slow


def docker_usable() -> bool:
    docker = shutil.which("docker")
    return bool(docker) and subprocess.run([docker, "info"], capture_output=True).returncode == 0


def test_fetch_smoke_then_a_smoke_run_scores_the_fetched_suites(pytester, tmp_path):
    hub = FakeHub()
    server = Server(hub)
    try:
        hub.tokens_with_access.add(TOKEN)
        publish(hub)
        suites = pytester.path / "suites"
        summaries, failures = fetch_all(
            FetchRequest(tuple(RELEASES), {"*": "main"}, profile="smoke", out=suites),
            env=hub_env(hub, tmp_path, HF_TOKEN=TOKEN),
            log=lambda _: None,
        )
    finally:
        server.stop()
    assert failures == [] and len(summaries) == 9
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-json=report.json"
    )
    report = json.loads((pytester.path / "report.json").read_text())
    failed = [c for c in report["cells"] if c["status"] == "failed"]
    if docker_usable():
        assert failed == [], result.stdout.str()
    else:  # the released Terminal-Bench task declares a container: it never runs elsewhere
        assert {c["benchmark"] for c in failed} == {"terminal-bench-2.1"}, result.stdout.str()
        assert all(c["error"].startswith("BENCHMARK_CONTAINER_UNAVAILABLE") for c in failed)
        groups = {g["reason"] for g in report["failure_groups"]}
        assert groups == {"Task container unavailable (Docker not usable)"}
    assert result.parseoutcomes().get("error", 0) == 0
    used = {s["benchmark"]: s for s in report["provenance"]["dataset"]["suites"]}
    lock = read_lock(suites / "fetch-lock.json")
    assert set(used) == set(RELEASES)
    for benchmark, suite in used.items():
        assert suite["location"] == "project" and suite["prepared"]["profile"] == "smoke"
        assert suite["revision"] == lock[benchmark].revision
    assert len(report["cells"]) == 2 * 36  # two simulated targets, sr-bench's smoke counts
    # fetched data is released data: the report says so per benchmark
    for row in report["benchmarks"]:
        source = row["data_source"]
        assert source["kind"] == "released", row["benchmark"]
        assert source["revision"] == lock[row["benchmark"]].revision
        assert source["files"] and all(len(h) == 64 for h in source["files"].values())
    assert report["data_sources"]["kind"] == "released"
    # tau3's fetch holds only the airline domain of sr-bench's three: released, yet not sr-bench
    assert report["data_sources"]["comparable"] is False
    assert "(tau3: airline only;" in report["data_sources"]["label"]
    assert all(not t["score_comparable"] for t in report["summary"]["targets"])
