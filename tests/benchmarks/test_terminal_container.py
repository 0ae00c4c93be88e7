"""Terminal-Bench tasks that declare a container, through the engine with the real simulator:
the commands and the verifier run in the task's container (a fake ``docker`` on ``PATH`` that
records its arguments, as this machine has no Docker daemon), and without a usable Docker the
cell fails with the reason — it never runs in the sandbox instead."""

from __future__ import annotations

import shutil

import pytest

from pytest_srbench.core.report.build import build_report
from tests.core.helpers import run
from tests.engine.helpers import REGISTRY, drive
from tests.sandbox.fake_docker import install

VERIFIER = (
    "#!/bin/bash\n"
    "if grep -q hello /app/alpha.txt && test -f /tests/expected.txt; then\n"
    "  echo 1 > /logs/verifier/reward.txt\nelse\n  echo 0 > /logs/verifier/reward.txt\nfi\n"
)


def container_case(native: str = "alpha", image: str = "tb/alpha:1"):
    row = {
        "task_id": native, "instruction": "Create /app/alpha.txt containing hello.",
        "files": {"seed.txt": "never seeded into a container task\n"}, "verifier": VERIFIER,
        "container": {"image": image, "memory_mb": 512, "cpus": 1, "allow_internet": False},
        "verifier_timeout_s": 30, "reference_commands": ["echo hello > /app/alpha.txt"],
        "metadata": {"verifier_files": {"expected.txt": "hello\n"}},
    }  # fmt: skip
    return REGISTRY.get("terminal-bench-2.1").render(row, 1)


@pytest.mark.parametrize(("subject", "correct"), [("always-right", True), ("always-wrong", False)])
def test_a_container_task_runs_its_commands_and_verifier_in_the_container(
    tmp_path, sim, monkeypatch, subject, correct
):
    fake = install(tmp_path, monkeypatch)
    store, _ = drive(tmp_path, sim, [container_case()], subject=subject)
    (row,) = store.results("run-p")
    assert row["status"] == "completed" and row["correct"] is correct
    details = row["details"]
    assert details["reward"] == (1 if correct else 0)
    assert details["container"]["reward_from"] == "reward.txt"
    name = details["container"]["name"]
    calls = fake.calls()
    started = next(call for call in calls if call[0] == "run")
    assert started[3] == name and "--network=none" in started and "--memory=512m" in started
    assert "--label=srbench.run=run-p" in started
    assert "--label=srbench.case=terminal-bench-2.1/alpha" in started
    commands = [call[4] for call in calls if call[:4] == ["exec", name, "sh", "-c"]]
    assert ("echo hello > /app/alpha.txt" in commands) is correct
    assert commands[-1].endswith("bash /tests/test.sh; else sh /tests/test.sh; fi")
    assert ["exec", name, "cat", "/logs/verifier/reward.txt"] in calls
    assert calls[-1] == ["rm", "-f", name] and fake.containers() == []
    subject_calls = [call for call in store.calls("run-p") if call["role"] == "subject"]
    assert len(subject_calls) == row["call_count"] >= 1  # every model call journaled


def test_without_docker_the_cell_fails_with_the_reason_and_runs_nowhere_else(
    tmp_path, sim, monkeypatch
):
    if shutil.which("docker") is None:
        pytest.skip("no docker CLI on this machine")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent-srbench/docker.sock")
    store, plan = drive(tmp_path, sim, [container_case("beta", "tb/beta:1")])
    (row,) = store.results("run-p")
    assert row["status"] == "failed" and row["correct"] is None
    assert row["error"].startswith(
        "BENCHMARK_CONTAINER_UNAVAILABLE: this task needs Docker (task.toml names image "
        "tb/beta:1); install Docker or start its daemon; `docker info` said (exit code 1): "
    )
    assert "nonexistent-srbench/docker.sock" in row["error"]
    assert row["call_count"] == 0  # the agent never started: nothing ran in a sandbox
    report = build_report(plan, run("completed"), store.results("run-p"), store.calls("run-p"))
    metric = report["summary"]["targets"][0]
    assert metric["failed"] == 1 and metric["accuracy"] == 0  # in the denominator
