"""Runs sharded across invocations, with real processes, one real simulator and one store:
two shards of one plan give the report a single process gives; a shard killed mid-run leaves
its share interrupted and recoverable while the other finishes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from pytest_srbench.app.shards import share_of
from pytest_srbench.core.shards import ShardSpec
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store
from tests.plugin.helpers import project, settle_simulator
from tests.plugin.shard_runs import command, finish, shard_1_mid_run, start, wait_until

pytestmark = pytest.mark.slow


VOLATILE = {"run_id", "created_at", "updated_at", "runner", "shards"}


def comparable(value):
    """A report without ids, times (every duration is a ``…_s`` field) and runner / shard
    metadata."""
    if isinstance(value, dict):
        return {
            k: comparable(v) for k, v in value.items() if k not in VOLATILE and not k.endswith("_s")
        }
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def test_two_shards_give_the_report_of_one_process(pytester, sim):
    project(pytester, sim, "always-right", "always-wrong")
    root = pytester.path
    # one process and two shards of the same plan, all at once (two runs, two keys); shard 1
    # splits its share between two xdist workers
    split = ("--srbench-run-key=split", "--srbench-json=s1.json", "--srbench-shard=1/2")
    procs = [
        start(root, "--srbench-run-key=whole", "--srbench-json=whole.json"),
        subprocess.Popen(command(*split, "-n", "2", xdist=True), cwd=root, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT),
        start(root, "--srbench-run-key=split", "--srbench-json=s2.json", "--srbench-shard=2/2"),
    ]  # fmt: skip
    outs = [finish(proc) for proc in procs]
    for proc, out in zip(procs, outs, strict=True):
        assert proc.returncode == 0, out[-3000:]
    outs = outs[1:]
    written = [k for k in (1, 2) if (root / f"s{k}.json").exists()]
    assert len(written) == 1  # the last shard writes the report
    sharded = json.loads((root / f"s{written[0]}.json").read_text())
    other = 3 - written[0]
    assert (
        f"shard {other}/2 done (18 cells); the report is written by the last shard"
        in (outs[other - 1])
    )
    # the xdist workers' line is shown once by their controller
    assert outs[0].count("runs 18 of 36 cells; 18 cells of other shards deselected") == 1
    assert "18 cells of other shards deselected" in outs[1] and "18 deselected" in outs[1]
    whole = json.loads((root / "whole.json").read_text())
    assert sharded["status"] == whole["status"] == "completed"
    assert comparable(sharded) == comparable(whole)
    shards = sharded["provenance"]["shards"]
    assert [(s["shard"], s["state"], s["cells"], s["ran"]) for s in shards] == [
        ("1/2", "finished", 18, 18),
        ("2/2", "finished", 18, 18),
    ]
    assert whole["provenance"]["shards"] is None
    store = open_store(root / ".srbench")
    calls = store.calls(sharded["run_id"])
    assert sim_client.stats(sim.admin_url)["requests"] == len(calls) + 36  # + the whole run's
    assert len({(c["case_id"], c["target_id"]) for c in calls}) == len(calls) == 36  # once each
    assert store.count_calls(whole["run_id"]) == 36
    details = sharded["provenance"]["runner"]["process_details"]
    engines = sorted((p["role"], p["cells"]) for p in details if p.get("role") != "controller")
    assert engines == [("single", 18), ("worker", 9), ("worker", 9)]


def test_a_killed_shard_leaves_its_share_interrupted_and_recoverable(pytester, sim):
    project(pytester, sim, "slow")  # 0.3 s per answer; 9 cells a shard, one at a time
    root = pytester.path
    key = ("--srbench-run-key=matrix", "--srbench-concurrency=1")
    env = {**os.environ, "SRBENCH_HOST_ID": os.uname().nodename}  # both "hosts" are this one
    shards = {k: start(root, *key, f"--srbench-shard={k}/2", f"--srbench-json=s{k}.json", env=env)
              for k in (1, 2)}  # fmt: skip
    journal = root / ".srbench" / "journal.sqlite3"
    wait_until(lambda: journal.exists() and shard_1_mid_run(root / ".srbench", sim),
               "shard 1 to be mid-run")  # fmt: skip
    shards[1].send_signal(signal.SIGKILL)
    shards[1].wait(timeout=10)
    out = finish(shards[2])
    assert shards[2].returncode == 0, out[-3000:]
    assert not (root / "s1.json").exists()
    report = json.loads((root / "s2.json").read_text())
    run_id = report["run_id"]
    assert report["status"] == "interrupted", out[-3000:]
    assert "shard 1/2" in report["error"]
    states = {s["shard"]: s["state"] for s in report["provenance"]["shards"]}
    assert states == {"1/2": "interrupted", "2/2": "finished"}
    stats = settle_simulator(sim)

    store = open_store(root / ".srbench")
    manifest = store.get_manifest(run_id)
    share1 = set(share_of(manifest, ShardSpec(1, 2)))
    share2 = set(manifest.planned_keys()) - share1
    calls = store.calls(run_id)
    assert stats["requests"] == len(calls)  # no lost and no duplicate sends
    assert len({(c["case_id"], c["target_id"]) for c in calls}) == len(calls)
    assert not [c for c in calls if c["status"] == "sent"]
    unknown = {(c["case_id"], c["target_id"]) for c in calls if c["status"] == "sent_unknown"}
    assert unknown and unknown <= share1  # the dead shard's in-flight call, settled
    statuses = store.result_statuses(run_id)
    assert all(statuses.get(cell) == "completed" for cell in share2)  # the other finished
    missing = {cell for cell in share1 if cell not in statuses}
    assert missing

    planned = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "recover-plan", run_id, "--output", "plan.json"],
        cwd=root, capture_output=True, text=True,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    plan = json.loads((root / "plan.json").read_text())
    assert {(c["case_id"], c["target_id"]) for c in plan["eligible_cells"]} == missing

    # the ended run takes no shard any more (xdist workers hand the refusal to their controller)
    late = subprocess.run(command(*key, "--srbench-shard=1/2", "-n", "2", xdist=True), cwd=root,
                          capture_output=True, text=True, env=env)  # fmt: skip
    assert late.returncode == pytest.ExitCode.USAGE_ERROR, late.stdout[-3000:]
    assert f"run {run_id} already ended interrupted; shard 1/2 cannot join it" in late.stdout
    assert sim_client.stats(sim.admin_url)["requests"] == stats["requests"]


def test_a_shard_needs_a_run_key_and_the_k_of_n_form(pytester, sim, monkeypatch):
    project(pytester, sim, "always-right")
    no_key = pytester.runpytest("-p", "no:xdist", "--srbench-profile=smoke", "--srbench-shard=1/2")
    assert no_key.ret == pytest.ExitCode.USAGE_ERROR
    no_key.stderr.fnmatch_lines(
        ["*--srbench-shard needs --srbench-run-key KEY: the shards find their one run by it*"]
    )
    monkeypatch.setenv("SRBENCH_SHARD", "4/3")
    bad = pytester.runpytest("-p", "no:xdist", "--srbench-profile=smoke", "--srbench-run-key=k")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*SRBENCH_SHARD '4/3': expected K/N with whole numbers 1 ≤ K ≤ N*"])
    assert sim_client.stats(sim.admin_url)["requests"] == 0
    assert not (pytester.path / ".srbench" / "journal.sqlite3").exists()
