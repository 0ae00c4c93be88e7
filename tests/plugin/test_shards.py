"""Runs sharded across invocations, with real processes, one real simulator and one store:
two shards of one plan give the report a single process gives; a shard killed mid-run leaves
its share interrupted and recoverable while the other finishes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store
from tests.plugin.test_concurrency import project

pytestmark = pytest.mark.slow

BENCH = ("--srbench-benchmark=mmlu-pro", "--srbench-benchmark=gpqa-diamond")


def command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "no:xdist",
            "--srbench-profile=smoke", *BENCH, *extra]  # fmt: skip


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
    single = subprocess.run(command("--srbench-run-key=whole", "--srbench-json=whole.json"),
                            cwd=root, capture_output=True, text=True)  # fmt: skip
    assert single.returncode == 0, single.stdout[-3000:]
    before = sim_client.stats(sim.admin_url)["requests"]
    shards = [
        start(root, "--srbench-run-key=split", f"--srbench-shard={k}/2", f"--srbench-json=s{k}.json")
        for k in (1, 2)
    ]
    outs = [finish(proc) for proc in shards]
    for proc, out in zip(shards, outs, strict=True):
        assert proc.returncode == 0, out[-3000:]
    written = [k for k in (1, 2) if (root / f"s{k}.json").exists()]
    assert len(written) == 1  # the last shard writes the report
    sharded = json.loads((root / f"s{written[0]}.json").read_text())
    other = 3 - written[0]
    assert f"shard {other}/2 done (18 cells); the report is written by the last shard" in (
        outs[other - 1]
    )
    assert "18 cells of other shards deselected" in outs[0] and "18 deselected" in outs[1]
    whole = json.loads((root / "whole.json").read_text())
    assert sharded["status"] == whole["status"] == "completed"
    assert comparable(sharded) == comparable(whole)
    shards = sharded["provenance"]["shards"]
    assert [(s["shard"], s["state"], s["cells"], s["ran"]) for s in shards] == [
        ("1/2", "finished", 18, 18),
        ("2/2", "finished", 18, 18),
    ]
    assert whole["provenance"]["shards"] is None
    calls = open_store(root / ".srbench").calls(sharded["run_id"])
    assert sim_client.stats(sim.admin_url)["requests"] - before == len(calls) == 36
    assert len({(c["case_id"], c["target_id"]) for c in calls}) == 36  # each cell once
