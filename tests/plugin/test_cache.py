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
from tests.zygote_server import new_session_command

pytestmark = pytest.mark.slow

BENCH = ("--srbench-benchmark=mmlu-pro", "--srbench-benchmark=gpqa-diamond")
BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgres"])


def run(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [*new_session_command(), "-p", "no:cacheprovider", "-q",
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
    second = run(root, *BENCH, *store_args, "--srbench-cache", "--srbench-json=b.json",
                 "--srbench-html=b.html")  # fmt: skip
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
    assert "from cache" in second.stdout and "FROM CACHE" in second.stdout
    assert "from cache" not in first.stdout
    assert 'id="cache-note"' in (root / "b.html").read_text()


def subject_statuses(location: str, run_id: str) -> dict[str, list[str]]:
    store = open_store(location)
    try:
        found: dict[str, list[str]] = {}
        for call in store.calls(run_id):
            if call["role"] == "subject":
                found.setdefault(call["case_id"], []).append(call["status"])
        return found
    finally:
        store.close()


APP = """
import os

import pytest


@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target):
    system = "Answer with the letter."
    if srbench_case.id == os.environ.get("CHANGED_CASE"):
        system += " Think twice."
    reply = await srbench_target.ask([{"role": "system", "content": system}, *srbench_case.messages])
    return reply.final_text
"""


def test_a_changed_prompt_sends_exactly_the_changed_cell(pytester, sim, monkeypatch):
    project(pytester, sim, "always-right")
    pytester.makepyfile(test_app=APP)
    root = pytester.path
    first = run(root, "test_app.py", "--srbench-cache", "--srbench-json=a.json")
    assert first.returncode == 0, first.stdout[-3000:]
    a = json.loads((root / "a.json").read_text())
    sent = requests(sim)
    changed = sorted(c["case_id"] for c in a["cells"])[1]
    monkeypatch.setenv("CHANGED_CASE", changed)
    second = run(root, "test_app.py", "--srbench-cache", "--srbench-json=b.json")
    assert second.returncode == 0, second.stdout[-3000:]
    assert requests(sim) == sent + 1  # exactly the changed cell
    b = json.loads((root / "b.json").read_text())
    statuses = subject_statuses(str(root / ".srbench"), b["run_id"])
    assert statuses.pop(changed) == ["completed"]
    assert statuses and all(s == ["replayed"] for s in statuses.values())
    target = b["summary"]["targets"][0]
    assert target["cache"]["cells"] == len(statuses) == target["total"] - 1
    assert 0 < target["total_spend_usd"] < a["summary"]["targets"][0]["total_spend_usd"]
    # the same run without the cache: every cell live again
    monkeypatch.delenv("CHANGED_CASE")
    third = run(root, "test_app.py", "--srbench-json=c.json")
    assert third.returncode == 0 and requests(sim) == sent + 1 + a["summary"]["planned_cells"]
    assert json.loads((root / "c.json").read_text())["summary"]["from_cache"] is False


def test_a_changed_sampling_value_sends_exactly_that_targets_cells(pytester, sim):
    project(pytester, sim, "always-right", "sim-large")
    root = pytester.path
    first = run(root, "--srbench-benchmark=mmlu-pro", "--srbench-cache", "--srbench-json=a.json")
    assert first.returncode == 0, first.stdout[-3000:]
    sent = requests(sim)
    per_target = json.loads((root / "a.json").read_text())["summary"]["targets"][0]["total"]
    text = (root / "pyproject.toml").read_text()
    marker = 'id = "sim-large"\n'
    (root / "pyproject.toml").write_text(
        text.replace(marker, marker + "request_params = { temperature = 0.5 }\n")
    )
    second = run(root, "--srbench-benchmark=mmlu-pro", "--srbench-cache", "--srbench-json=b.json")
    assert second.returncode == 0, second.stdout[-3000:]
    assert requests(sim) == sent + per_target  # only sim-large's cells: its request changed
    b = json.loads((root / "b.json").read_text())
    by_id = {t["id"]: t for t in b["summary"]["targets"]}
    assert by_id["always-right"]["cache"]["share"] == 1.0
    assert by_id["sim-large"]["cache"]["cells"] == 0


SDK_APP = """
import pytest


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target, srbench_client):
    client = srbench_client.async_openai()
    completion = await client.chat.completions.create(
        model=srbench_target.id, messages=srbench_case.messages
    )
    return completion.choices[0].message.content
"""


def test_the_openai_sdk_through_srbench_client_is_answered_from_the_cache(pytester, sim):
    pytest.importorskip("openai")
    project(pytester, sim, "always-right")
    pytester.makepyfile(test_sdk=SDK_APP)
    root = pytester.path
    first = run(root, "test_sdk.py", "--srbench-cache", "--srbench-json=a.json")
    assert first.returncode == 0, first.stdout[-3000:]
    sent = requests(sim)
    second = run(root, "test_sdk.py", "--srbench-cache", "--srbench-json=b.json")
    assert second.returncode == 0, second.stdout[-3000:]
    assert requests(sim) == sent
    a = json.loads((root / "a.json").read_text())
    b = json.loads((root / "b.json").read_text())
    assert answers(a) == answers(b) and b["summary"]["targets"][0]["correct"] > 0
    statuses = subject_statuses(str(root / ".srbench"), b["run_id"])
    assert statuses and all(s == ["replayed"] for s in statuses.values())
    assert "from cache" in second.stdout


def test_cache_only_fails_a_miss_and_srbench_cache_stats_and_clear(pytester, sim):
    project(pytester, sim, "always-right")
    root = pytester.path
    first = run(root, "--srbench-benchmark=mmlu-pro", "--srbench-cache", "--srbench-limit=2")
    assert first.returncode == 0, first.stdout[-3000:]
    sent = requests(sim)
    only = run(root, "--srbench-benchmark=mmlu-pro", "--srbench-limit=3", "--srbench-cache-only",
               "--srbench-json=b.json")  # fmt: skip
    assert requests(sim) == sent  # a miss sends nothing
    assert only.returncode == 1, only.stdout[-3000:]
    b = json.loads((root / "b.json").read_text())
    failed = [c for c in b["cells"] if c["status"] == "failed"]
    assert len(failed) == 1 and failed[0]["error"] == "cache miss (--srbench-cache-only)"
    assert b["summary"]["targets"][0]["cache"]["cells"] == 2

    def srbench(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_srbench", *args], cwd=root,
                              capture_output=True, text=True)  # fmt: skip

    stats = json.loads(srbench("cache", "stats", "--format", "json").stdout)
    assert stats["entries"] == 2 and stats["targets"] == {"always-right": 2}
    assert stats["live_cost_usd"] > 0
    kept = srbench("cache", "clear", "--older-than", "1d")
    assert kept.returncode == 0 and "removed 0 cache entries" in kept.stdout
    assert "invalid duration" in srbench("cache", "clear", "--older-than", "soon").stderr
    cleared = srbench("cache", "clear")
    assert "removed 2 cache entries" in cleared.stdout
    assert json.loads(srbench("cache", "stats", "--format", "json").stdout)["entries"] == 0
    again = run(root, "--srbench-benchmark=mmlu-pro", "--srbench-limit=2", "--srbench-cache")
    assert again.returncode == 0 and requests(sim) == sent + 2  # forgotten: live again


def test_repeats_are_fresh_samples_unless_asked(pytester, sim):
    project(pytester, sim, "always-right")
    root = pytester.path
    args = ("--srbench-benchmark=mmlu-pro", "--srbench-limit=2", "--srbench-repeats=3")
    first = run(root, *args, "--srbench-cache")
    assert first.returncode == 0, first.stdout[-3000:]
    assert requests(sim) == 6  # no repeat took another's answer
    second = run(root, *args, "--srbench-cache")
    assert second.returncode == 0 and requests(sim) == 6  # repeat k answers repeat k
    shared = run(root, "--srbench-benchmark=mmlu-pro", "--srbench-limit=3", "--srbench-repeats=2",
                 "--srbench-cache", "--srbench-cache-repeats", "--srbench-concurrency=1")  # fmt: skip
    assert shared.returncode == 0, shared.stdout[-3000:]
    # each case once: its second repeat takes the first's answer (keys without a repeat number)
    assert requests(sim) == 6 + 3


def test_sigkill_of_a_cached_run_then_recovery_resends_nothing_cached_or_completed(pytester, sim):
    """A cached run killed mid-way: its replayed calls are settled receipts (never ambiguous),
    its cells answered from the cache are completed evidence, and the recovery child sends
    exactly the cells that were neither cached nor completed."""
    import os
    import signal
    import time

    project(pytester, sim, "slow")  # 0.3 s per answer
    root = pytester.path
    location = str(root / ".srbench")
    warm = run(root, "--srbench-benchmark=mmlu-pro", "--srbench-cache", "--srbench-json=warm.json")
    assert warm.returncode == 0, warm.stdout[-3000:]
    cached_cells = json.loads((root / "warm.json").read_text())["summary"]["planned_cells"]
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
               "--srbench-profile=smoke", *BENCH, "--srbench-cache",
               "--srbench-concurrency=1"]  # fmt: skip
    proc = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    run_id = None
    while time.monotonic() < deadline:
        store = open_store(location)
        runs = store.list_runs(limit=1)
        if len(runs) and runs[0].id != json.loads((root / "warm.json").read_text())["run_id"]:
            statuses = [c["status"] for c in store.calls(runs[0].id)]
            if statuses.count("replayed") >= 1 and statuses.count("completed") >= 2:
                run_id = runs[0].id
                store.close()
                break
        store.close()
        time.sleep(0.05)
    assert run_id is not None, "the cached run did not get going"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    from tests.plugin.helpers import settle_simulator

    before = settle_simulator(sim)["requests"]
    cli = ("--store", location)

    def srbench(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest_srbench", *cli, *args], cwd=root,
                              capture_output=True, text=True)  # fmt: skip

    listed = srbench("recover-plan", run_id, "--output", str(root / "plan.json"))
    assert listed.returncode == 0, listed.stderr
    plan = json.loads((root / "plan.json").read_text())
    store = open_store(location)
    assert store.require_run(run_id).status == "interrupted"
    calls = store.calls(run_id)
    results = {(r["case_id"], r["target_id"]): r["status"] for r in store.results(run_id)}
    store.close()
    replayed = {c["case_id"] for c in calls if c["status"] == "replayed"}
    assert replayed and not any(c["status"] == "sent" for c in calls)
    excluded = {e["case_id"]: e["reason"] for e in plan["excluded"]}
    assert all(
        excluded[case] == "completed_evidence_is_preserved"
        for case in replayed
        if results.get((case, "slow")) == "completed"
    )
    eligible = [cell["case_id"] for cell in plan["eligible_cells"]]
    assert eligible and not set(eligible) & replayed
    # an eligible cell of the warmed benchmark is answered from the cache, the others live
    live = [case for case in eligible if not case.startswith("mmlu-pro/")]
    child = subprocess.run(
        [*command[:-2], "--srbench-cache", "--srbench-recover=plan.json",
         "--srbench-run-key=recover-1", "--srbench-json=child.json"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert child.returncode == 0, child.stdout[-3000:]
    assert sim_client.stats(sim.admin_url)["requests"] == before + len(live)
    assert cached_cells > 0
