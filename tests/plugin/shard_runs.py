"""Runs sharded across invocations as real pytest processes, for the SQLite and PostgreSQL
shard tests: starting and finishing a shard, and telling when shard 1 is mid-run."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from pytest_srbench.app.shards import share_of
from pytest_srbench.core.shards import ShardSpec
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store

BENCH = ("--srbench-benchmark=mmlu-pro", "--srbench-benchmark=gpqa-diamond")


def command(*extra: str, xdist: bool = False) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            *(() if xdist else ("-p", "no:xdist")), "--srbench-profile=smoke", *BENCH,
            *extra]  # fmt: skip


def start(root: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(*extra), cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=env,
    )  # fmt: skip


def finish(proc: subprocess.Popen[str], timeout: float = 90.0) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError(f"the shard did not end within {timeout} s:\n{out[-3000:]}") from None
    return out


def wait_until(condition, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def shard_1_mid_run(location: str | Path, sim) -> bool:
    """Both shards of the store's newest run have claimed, and shard 1 has a finished call and
    one still in flight: its request has reached the simulator. (A call's row is committed
    before its request leaves, so a row in ``sent`` alone may not have been sent yet; the
    simulator counted before the rows were read, every row has arrived when the counts agree.)"""
    requests = sim_client.stats(sim.admin_url)["requests"]
    store = open_store(location)
    try:
        runs = store.list_runs(limit=1)
        if not runs or len(store.shards(runs[0].id)) < 2:
            return False
        share = set(share_of(store.get_manifest(runs[0].id), ShardSpec(1, 2)))
        every_call = store.calls(runs[0].id)
        calls = [c for c in every_call if (c["case_id"], c["target_id"]) in share]
        return (
            any(c["status"] == "completed" for c in calls)
            and any(c["status"] == "sent" for c in calls)
            and requests == len(every_call)
        )
    finally:
        store.close()
