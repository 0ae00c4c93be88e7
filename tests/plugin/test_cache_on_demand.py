"""A session whose response cache may answer every call starts the built-in simulator and
loads the HTTP client only for the first call the cache does not answer (real sessions, the
plugin's own simulator): a fully cached run starts neither, a miss starts both and is answered
as a live call, and a store without cached calls starts the simulator at once as before."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_srbench.simulator.process import start_simulator
from tests.conftest import TEST_MODELS
from tests.plugin.helpers import external_target
from tests.zygote_server import new_session_command

pytestmark = pytest.mark.slow

# what the session loaded, written when it ends (the plugin's own modules load aiohttp only
# when a transport is made)
CONFTEST = """
import json
import sys


def pytest_unconfigure(config):
    with open("loaded.json", "w") as out:
        json.dump({"aiohttp": "aiohttp" in sys.modules}, out)
"""
ARGS = ("--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro")


def run(
    root: Path, *extra: str, target: str = "sim-large", fresh: bool = False
) -> subprocess.CompletedProcess[str]:
    """A session (``fresh``: in a new interpreter, as the suite's fork server has aiohttp
    loaded before any session)."""
    start = [sys.executable, "-m", "pytest"] if fresh else list(new_session_command())
    command = [*start, "-p", "no:cacheprovider", "-q", *ARGS, f"--srbench-target={target}",
               *extra]  # fmt: skip
    return subprocess.run(command, cwd=root, capture_output=True, text=True)


def started_simulator(root: Path) -> bool:
    """Whether the session launched its simulator (the launch makes its log folder)."""
    found = (root / ".srbench" / "simulator").exists()
    shutil.rmtree(root / ".srbench" / "simulator", ignore_errors=True)
    return found


def loaded_aiohttp(root: Path) -> bool:
    return bool(json.loads((root / "loaded.json").read_text())["aiohttp"])


def cells(root: Path, name: str) -> list[dict]:
    return sorted(json.loads((root / name).read_text())["cells"], key=lambda c: c["case_id"])


def test_a_fully_cached_run_starts_no_simulator_and_a_miss_starts_it(pytester):
    pytester.makeconftest(CONFTEST)
    root = pytester.path
    first = run(root, "--srbench-limit=2", "--srbench-cache", "--srbench-json=a.json")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    # nothing cached yet: the simulator started with the session
    assert started_simulator(root)
    live = cells(root, "a.json")
    assert len(live) == 2 and all(c["status"] == "completed" for c in live)

    cached = run(root, "--srbench-limit=2", "--srbench-cache", "--srbench-json=b.json", fresh=True)
    assert cached.returncode == 0, cached.stdout[-3000:] + cached.stderr[-2000:]
    assert not started_simulator(root) and not loaded_aiohttp(root)
    again = cells(root, "b.json")
    assert [(c["case_id"], c["answer"], c["correct"]) for c in again] == [
        (c["case_id"], c["answer"], c["correct"]) for c in live
    ]
    assert "from cache" in cached.stdout

    # one more case: its cell misses, the simulator starts then and answers it live
    grown = run(root, "--srbench-limit=3", "--srbench-cache", "--srbench-json=c.json", fresh=True)
    assert grown.returncode == 0, grown.stdout[-3000:] + grown.stderr[-2000:]
    assert started_simulator(root) and loaded_aiohttp(root)
    report = json.loads((root / "c.json").read_text())
    target = report["summary"]["targets"][0]
    assert target["total"] == 3 and target["completed"] == 3
    assert target["cache"]["cells"] == 2
    new = [c for c in report["cells"] if c["case_id"] not in {c["case_id"] for c in live}]
    assert len(new) == 1 and new[0]["status"] == "completed" and new[0]["answer"] is not None


def test_cache_only_with_every_call_missing_starts_nothing(pytester):
    pytester.makeconftest(CONFTEST)
    root = pytester.path
    warm = run(root, "--srbench-limit=1", "--srbench-cache")
    assert warm.returncode == 0, warm.stdout[-3000:]
    started_simulator(root)
    only = run(root, "--srbench-limit=3", "--srbench-cache-only", "--srbench-json=b.json",
               fresh=True)  # fmt: skip
    assert only.returncode == 1, only.stdout[-3000:]
    assert not started_simulator(root) and not loaded_aiohttp(root)
    statuses = sorted(c["status"] for c in cells(root, "b.json"))
    assert statuses == ["completed", "failed", "failed"]


def test_without_cached_calls_of_its_targets_the_simulator_starts_with_the_session(pytester):
    """Cached calls of another target do not defer the start: every call would miss."""
    pytester.makeconftest(CONFTEST)
    root = pytester.path
    other = run(root, "--srbench-limit=1", "--srbench-cache", target="sim-small")
    assert other.returncode == 0, other.stdout[-3000:]
    started_simulator(root)
    fresh = run(root, "--srbench-limit=1", "--srbench-cache")
    assert fresh.returncode == 0, fresh.stdout[-3000:]
    assert started_simulator(root)


def test_a_simulator_at_its_own_address_learns_the_cases_while_the_sessions_waits(pytester):
    """A plan with the session's own simulator (waiting for a miss) and a simulated target at
    an address of its own: that one is told the cases when the engine starts, so its miss is
    answered right though the session's own simulator never starts."""
    outside_sim = start_simulator(TEST_MODELS)  # its own: no other test told it these cases
    try:
        pytester.makefile(".toml", pyproject=external_project(outside_sim.base_url))
        root = pytester.path
        both = ("--srbench-target=sim-large", "--srbench-target=outside")
        first = run_targets(root, "--srbench-limit=2", "--srbench-cache", *both)
        assert first.returncode == 0, first.stdout[-3000:]
        # sim-large's third case cached too, without the outside target
        ahead = run_targets(
            root, "--srbench-limit=3", "--srbench-cache", "--srbench-target=sim-large"
        )
        assert ahead.returncode == 0, ahead.stdout[-3000:]
        started_simulator(root)
        grown = run_targets(root, "--srbench-limit=3", "--srbench-cache", *both,
                            "--srbench-json=c.json")  # fmt: skip
        assert grown.returncode == 0, grown.stdout[-3000:]
        assert not started_simulator(root)  # only the outside target missed
        report = json.loads((root / "c.json").read_text())
        outside = {t["id"]: t for t in report["summary"]["targets"]}["outside"]
        assert outside["cache"]["cells"] == 2 and outside["correct"] == outside["total"] == 3
    finally:
        outside_sim.stop()


def external_project(base_url: str) -> str:
    return "[tool.srbench]\n" + external_target("always-right", base_url, "outside")


def run_targets(root: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = [*new_session_command(), "-p", "no:cacheprovider", "-q", *ARGS, *extra]
    return subprocess.run(command, cwd=root, capture_output=True, text=True)
