"""Shard ownership over a real SQLite store with real (live and dead) processes: one owner per
shard, a dead owner's shard claimed again for its cells without results, the last shard
decided in one transaction, the sweep and ``srbench finalize``."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from pytest_srbench.app.lifecycle import open_swept_store
from pytest_srbench.app.run_end import finalize_sharded
from pytest_srbench.app.settle import WORKER_STOPPED
from pytest_srbench.app.shards import ShardRefused, claim_shard, finish_shard, share_of
from pytest_srbench.core.shards import ShardSpec
from pytest_srbench.store import open_store
from pytest_srbench.store.liveness import this_process
from tests.app.helpers import call_row, dead_pid
from tests.core.helpers import case, manifest, result, target

CASES = [case("mmlu-pro", str(i)) for i in range(6)]
ONE, TWO = ShardSpec(1, 2), ShardSpec(2, 2)


@pytest.fixture
def live() -> Iterator[dict]:
    """The owner record of another live process on this host."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield {**this_process(), "pid": proc.pid, "process_started": None}
    finally:
        proc.kill()
        proc.wait()


def dead() -> dict:
    return {**this_process(), "pid": dead_pid(), "process_started": None}


def new_run(tmp_path):
    store = open_store(tmp_path / "store")
    plan = manifest(CASES, [target("t")])
    run, _ = store.create_run("run-s", plan, request_key="k")
    return store, plan, run.id


def test_a_live_owner_keeps_its_shard_and_a_dead_ones_is_claimed_for_what_is_left(tmp_path, live):
    store, plan, run_id = new_run(tmp_path)
    first = claim_shard(store, run_id, ONE, live, plan)
    assert first.to_run == first.share == share_of(plan, ONE) and len(first.share) == 3
    assert claim_shard(store, run_id, ONE, live, plan) == first  # an xdist sibling of its owner
    with pytest.raises(
        ShardRefused,
        match=rf"shard 1/2 of run {run_id} is held by a live process \(pid {live['pid']}",
    ):
        claim_shard(store, run_id, ONE, this_process(), plan)
    elsewhere = {**this_process(), "host": "another-host"}  # liveness unknowable: kept
    with pytest.raises(ShardRefused, match="held by a live process"):
        claim_shard(store, run_id, ONE, elsewhere, plan)
    with pytest.raises(ShardRefused, match="split into 2 shards, not 3"):
        claim_shard(store, run_id, ShardSpec(1, 3), this_process(), plan)

    # shard 2's owner dies mid-run: one cell done, one in flight
    gone = dead()
    claim_shard(store, run_id, TWO, gone, plan)
    done, flying, untouched = (case_id for case_id, _ in share_of(plan, TWO))
    with store.transaction():
        store.upsert_result(run_id, result(done, "t", correct=True))
        store.insert_call(run_id, call_row(done, "completed"))
        store.upsert_result(run_id, result(flying, "t", status="running", correct=None))
        store.insert_call(run_id, call_row(flying, "sent"))
    again = claim_shard(store, run_id, TWO, this_process(), plan)
    assert again.to_run == [(untouched, "t")] and again.attempt == 2
    assert store.get_call(call_row(flying, "sent")["id"])["status"] == "sent_unknown"
    assert store.result_statuses(run_id)[(flying, "t")] == "sent_unknown"


def test_the_last_shard_finalizes_and_a_dead_one_makes_the_run_interrupted(tmp_path, live):
    store, plan, run_id = new_run(tmp_path)
    me = this_process()
    claim_shard(store, run_id, ONE, me, plan)
    assert not finish_shard(store, run_id, ONE, me, interrupted=False).last  # 2/2 not started
    gone = dead()
    claim_shard(store, run_id, TWO, gone, plan)
    with store.transaction():
        store.insert_call(run_id, call_row(share_of(plan, TWO)[0][0], "sent"))
    # shard 1 ended before shard 2 died: nobody is left to finalize; the sweep settles 2/2
    # and marks the run interrupted (every shard has a row, none is live)
    store.close()
    swept_store, swept = open_swept_store(tmp_path / "store")
    assert [r.id for r in swept] == [run_id]
    states = {row["shard"]: row["state"] for row in swept_store.shards(run_id)}
    assert states == {1: "finished", 2: "interrupted"}
    assert not swept_store.calls(run_id, active=True)
    report = finalize_sharded(swept_store, run_id, runner={})
    assert report["status"] == "interrupted"
    assert [s["state"] for s in report["provenance"]["shards"]] == ["finished", "interrupted"]


def test_the_shard_that_ends_last_is_told_so_once(tmp_path, live):
    store, plan, run_id = new_run(tmp_path)
    me = this_process()
    claim_shard(store, run_id, ONE, live, plan)
    claim_shard(store, run_id, TWO, me, plan)
    assert not finish_shard(store, run_id, TWO, me, interrupted=False).last  # 1/2 is live
    end = finish_shard(store, run_id, ONE, live, interrupted=False)
    assert end.mine and end.last and end.lost == []
    assert not finish_shard(store, run_id, ONE, live, interrupted=False).mine  # once only


def test_finalize_refuses_while_a_shard_lives_and_counts_a_missing_one_lost(tmp_path, live):
    store, plan, run_id = new_run(tmp_path)
    claim_shard(store, run_id, ONE, live, plan)
    with pytest.raises(ShardRefused, match=rf"live shards: shard 1/2 \(pid {live['pid']} on"):
        finalize_sharded(store, run_id, runner={})
    finish_shard(store, run_id, ONE, live, interrupted=False)
    report = finalize_sharded(store, run_id, runner={}, json_path=tmp_path / "r.json")
    assert report["status"] == "interrupted" and (tmp_path / "r.json").exists()
    assert report["error"] == f"{WORKER_STOPPED} (lost: shard 2/2 (never started))"
    with pytest.raises(ShardRefused, match="already ended interrupted; shard 2/2 cannot join"):
        claim_shard(store, run_id, TWO, this_process(), plan)


def test_a_shard_cannot_join_a_run_that_runs_unsharded(tmp_path):
    store, plan, run_id = new_run(tmp_path)
    assert store.start_queued_run(run_id)  # an invocation without --srbench-shard runs it
    with pytest.raises(ShardRefused, match=r"run-s \(run key 'k'\) is running unsharded"):
        claim_shard(store, run_id, ONE, this_process(), plan)
    assert store.shards(run_id) == []


def test_finalize_of_a_run_that_is_not_sharded_says_what_to_use(tmp_path):
    store, _, run_id = new_run(tmp_path)
    with pytest.raises(ShardRefused, match=rf"srbench report {run_id}"):
        finalize_sharded(store, run_id, runner={})


def test_a_host_id_from_the_environment_names_this_host(monkeypatch):
    monkeypatch.setenv("SRBENCH_HOST_ID", "host-a")
    assert this_process()["host"] == "host-a" and this_process()["pid"] == os.getpid()
