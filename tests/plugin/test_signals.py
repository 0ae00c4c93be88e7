"""No orphans, every signal: real pytest runs in subprocesses with the built-in simulator,
stopped by real SIGKILL and SIGTERM, alone and under pytest-xdist ``-n 2``."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pytest_srbench.app.lifecycle import open_swept_store
from pytest_srbench.app.reports import report_from_store
from pytest_srbench.app.settle import WORKER_STOPPED
from pytest_srbench.core.calls.failures import INTERRUPTED
from pytest_srbench.store import open_store
from tests.plugin.helpers import project
from tests.process_helpers import DEADLINE_S, descendants, identities, wait_all_gone

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]

# A simulated target without a base_url: the run starts its own simulator process.
CONFIG = """
[tool.srbench]
default_targets = ["slowpoke"]

[[tool.srbench.targets]]
id = "slowpoke"
model = "slowpoke"
simulated = true
[tool.srbench.targets.prices.slowpoke]
input = 1.0
cached_input = 0.5
cache_write = 2.0
output = 2.0

[tool.srbench.simulator.models.slowpoke]
accuracy = 1.0
latency_s = 3.0
prices = { input = 1.0, cached_input = 0.5, cache_write = 2.0, output = 2.0 }
"""
XDIST_STARTUP_S = 180.0  # two workers import everything on a busy two-core machine
SIMULATOR = "pytest_srbench.simulator.server"


def start(root: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--srbench-profile=smoke",
         "--srbench-benchmark=mmlu-pro", "--srbench-benchmark=gpqa-diamond",
         "--srbench-concurrency=2", "--srbench-json=report.json", *extra],
        cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def wait_in_flight(root: Path, proc: subprocess.Popen[str], timeout: float) -> str:
    """Wait until the run has a call in flight (journaled ``sent``); return the run id."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it could be stopped"
        if (root / ".srbench" / "journal.sqlite3").exists():
            store = open_store(root / ".srbench")
            try:
                runs = store.list_runs(limit=1)
                if runs and store.calls(runs[0].id, active=True):
                    return runs[0].id
            finally:
                store.close()
        time.sleep(0.1)
    raise AssertionError("no call went in flight in time")


def process_tree(proc: subprocess.Popen[str]) -> dict[int, str | None]:
    """The run's child processes (simulator, xdist workers), identified by start stamp."""
    below = descendants(proc.pid)
    assert sum(SIMULATOR in command for command in below.values()) == 1, below
    return identities(below)


def test_sigkill_leaves_no_simulator_and_the_sweep_keeps_the_real_wall_time(pytester):
    pytester.makepyprojecttoml(CONFIG)
    root = pytester.path
    proc = start(root)
    run_id = wait_in_flight(root, proc, DEADLINE_S)
    tree = process_tree(proc)
    killed_at = datetime.now(UTC)
    proc.kill()
    proc.communicate(timeout=DEADLINE_S)
    wait_all_gone(tree)  # the simulator watched its parent and exited

    raw = open_store(root / ".srbench")
    assert raw.require_run(run_id).status == "running"  # nobody has looked yet
    seen = max(datetime.fromisoformat(e["at"]) for e in raw.events(run_id, limit=100_000))
    raw.close()
    store, swept = open_swept_store(root / ".srbench")
    assert [run.id for run in swept] == [run_id]
    run = store.require_run(run_id)
    ended = datetime.fromisoformat(run.updated_at)
    assert run.status == "interrupted"
    assert seen <= ended <= killed_at  # it ran until its last activity, not until the sweep
    report = report_from_store(store, run_id)
    created = datetime.fromisoformat(run.created_at)
    assert report["summary"]["wall_time_s"] == (ended - created).total_seconds()

    # the cells the kill cut off are labelled interrupted, never "Target call failed"
    cut_off = [c for c in report["cells"] if c["status"] == "sent_unknown"]
    assert cut_off and {c["error"] for c in cut_off} == {WORKER_STOPPED}  # the cells' own reason
    reasons = {group["reason"] for group in report["failure_groups"]}
    assert INTERRUPTED in reasons and "Target call failed" not in reasons
    assert {c["status"] for c in store.calls(run_id)} <= {"completed", "sent_unknown"}


def test_sigkill_of_an_xdist_controller_leaves_no_worker_and_no_simulator(pytester):
    pytester.makepyprojecttoml(CONFIG)
    root = pytester.path
    proc = start(root, "-n", "2")
    run_id = wait_in_flight(root, proc, XDIST_STARTUP_S)
    tree = process_tree(proc)
    assert len(tree) >= 3  # two workers and the simulator
    proc.kill()
    proc.communicate(timeout=DEADLINE_S)
    wait_all_gone(tree)
    store, swept = open_swept_store(root / ".srbench")
    assert [run.id for run in swept] == [run_id]
    # the workers died with their controller, at the same moment as the simulator: no call
    # saw the simulator vanish and failed; what was in flight is unknown and interrupted
    calls = store.calls(run_id)
    assert {c["status"] for c in calls} <= {"completed", "sent_unknown"}
    assert any(c["status"] == "sent_unknown" for c in calls)
    reasons = {group["reason"] for group in report_from_store(store, run_id)["failure_groups"]}
    assert INTERRUPTED in reasons and "Target call failed" not in reasons


def sigterm_and_check(root: Path, proc: subprocess.Popen[str], run_id: str) -> str:
    """SIGTERM to the pytest process only; the run ends cancelled with its report written
    and no child process left behind. Returns pytest's output."""
    tree = process_tree(proc)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=DEADLINE_S * 2)
    wait_all_gone(tree)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out[-3000:]
    assert "SIGTERM received" in out
    report = json.loads((root / "report.json").read_text())
    assert report["run_id"] == run_id and report["status"] == "cancelled"
    target = report["summary"]["targets"][0]
    assert target["total"] == 18 and target["pending"] > 0
    store = open_store(root / ".srbench")
    assert store.require_run(run_id).status == "cancelled"
    assert (store.run_dir(run_id) / "report.json").exists()
    # in-flight streams were aborted and journaled: nothing is left unknown
    assert {c["status"] for c in store.calls(run_id)} <= {"completed", "cancelled"}
    return out


def test_sigterm_ends_a_run_like_ctrl_c(pytester):
    pytester.makepyprojecttoml(CONFIG)
    root = pytester.path
    proc = start(root)
    run_id = wait_in_flight(root, proc, DEADLINE_S)
    sigterm_and_check(root, proc, run_id)


def test_sigterm_to_the_xdist_controller_cancels_every_worker(pytester):
    pytester.makepyprojecttoml(CONFIG)
    root = pytester.path
    proc = start(root, "-n", "2")
    run_id = wait_in_flight(root, proc, XDIST_STARTUP_S)
    out = sigterm_and_check(root, proc, run_id)
    assert "crashed" not in out and "replacing" not in out  # the workers stopped cleanly
    workers = [p for p in open_store(root / ".srbench").processes(run_id) if p["role"] == "worker"]
    assert len(workers) == 2 and all(p.get("finished") for p in workers)


QUIET = ("-p", "no:cacheprovider", "-p", "no:asyncio", "--assert=plain")  # in-process runs
PROBE = """
import signal

def test_probe():
    handler = signal.getsignal(signal.SIGTERM)
    owner = getattr(handler, "__self__", None)
    with open("probe.txt", "w") as sink:
        sink.write(type(owner).__name__ if owner is not None else handler.__name__)
"""


def test_the_sigterm_handler_is_installed_only_for_a_srbench_session(pytester, sim):
    project(pytester, sim, "always-right")
    pytester.makepyfile(test_probe=PROBE)
    probe = pytester.path / "probe.txt"

    def mine(signum: int, frame: object) -> None:
        raise AssertionError("not called")

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        result = pytester.runpytest_inprocess(
            *QUIET, "-p", "no:xdist", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
            "--srbench-limit=1", "test_probe.py",
        )  # fmt: skip
        assert result.ret == 0, result.stdout.str()[-2000:]
        assert probe.read_text() == "SessionState"  # installed while the run was active
        assert signal.getsignal(signal.SIGTERM) is mine  # and the previous one restored
        result = pytester.runpytest_inprocess(*QUIET, "test_probe.py")
        assert result.ret == 0
        assert probe.read_text() == "mine"  # no srbench session: left alone
    finally:
        signal.signal(signal.SIGTERM, previous)
