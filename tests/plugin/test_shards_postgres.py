"""Two "hosts" (two host identities) shard one run in a real PostgreSQL store: a shard killed
mid-run is known dead only by its lease; once the lease expires `srbench finalize` (another
host) settles the dead shard's in-flight call `sent_unknown`, ends the run `interrupted`, and
recovery lists exactly the dead shard's missing cells; every request the simulator saw is a
journaled call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pytest_srbench.app.shards import share_of
from pytest_srbench.core.shards import ShardSpec
from pytest_srbench.store import open_store
from tests.plugin.helpers import project, settle_simulator
from tests.plugin.shard_runs import finish, shard_1_mid_run, start, wait_until

pytestmark = pytest.mark.slow

LEASE = {"SRBENCH_LEASE_INTERVAL_S": "0.5", "SRBENCH_LEASE_EXPIRY_S": "3"}


def test_a_shard_killed_on_another_host_is_settled_once_its_lease_expires(
    pytester, sim, postgres_url
):
    project(pytester, sim, "slow")  # 0.3 s per answer; 9 cells a shard, one at a time
    root = pytester.path
    common = ("--srbench-run-key=matrix", "--srbench-concurrency=1",
              f"--srbench-store={postgres_url}")  # fmt: skip
    shards = {
        k: start(root, *common, f"--srbench-shard={k}/2", f"--srbench-json=s{k}.json",
                 env={**os.environ, **LEASE, "SRBENCH_HOST_ID": f"host-{k}"})
        for k in (1, 2)
    }  # fmt: skip

    wait_until(lambda: shard_1_mid_run(postgres_url, sim), "shard 1 to be mid-run")
    shards[1].send_signal(signal.SIGKILL)
    shards[1].wait(timeout=10)
    out = finish(shards[2])
    assert shards[2].returncode == 0, out[-3000:]
    store = open_store(postgres_url)
    run_id = store.list_runs(limit=1)[0].id
    states = {row["shard"]: row["state"] for row in store.shards(run_id)}
    if states[1] != "interrupted":  # its lease had not expired when shard 2 ended
        assert "the report is written by the last shard" in out, out[-3000:]
        assert store.require_run(run_id).status == "running"
        time.sleep(3.5)  # the lease expires (3 s without renewal)
        done = subprocess.run(
            [sys.executable, "-m", "pytest_srbench", "--store", postgres_url, "finalize",
             run_id, "--json", "final.json"],
            cwd=root, capture_output=True, text=True, timeout=120,
            env={**os.environ, **LEASE, "SRBENCH_HOST_ID": "host-3"},
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        report = json.loads((root / "final.json").read_text())
    else:
        report = json.loads((root / "s2.json").read_text())
    assert report["status"] == "interrupted"
    assert {s["shard"]: s["state"] for s in report["provenance"]["shards"]} == {
        "1/2": "interrupted",
        "2/2": "finished",
    }
    stats = settle_simulator(sim)
    manifest = store.get_manifest(run_id)
    share1 = set(share_of(manifest, ShardSpec(1, 2)))
    calls = store.calls(run_id)
    assert stats["requests"] == len(calls)  # no lost and no duplicate sends
    assert not [c for c in calls if c["status"] == "sent"]
    unknown = {(c["case_id"], c["target_id"]) for c in calls if c["status"] == "sent_unknown"}
    assert unknown and unknown <= share1  # the dead shard's in-flight call, settled
    statuses = store.result_statuses(run_id)
    missing = {cell for cell in share1 if cell not in statuses}
    assert missing and all(
        statuses.get(cell) == "completed" for cell in set(manifest.planned_keys()) - share1
    )
    planned = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "--store", postgres_url, "recover-plan",
         run_id, "--output", "plan.json"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    plan = json.loads((root / "plan.json").read_text())
    assert {(c["case_id"], c["target_id"]) for c in plan["eligible_cells"]} == missing
