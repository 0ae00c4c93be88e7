"""The container runner against a fake ``docker`` client that records its arguments (this
machine has the Docker CLI but no daemon), the real CLI without a daemon, and a real daemon
when there is one."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time

import pytest

from pytest_srbench.core.container_spec import ContainerSpec
from pytest_srbench.sandbox import container
from pytest_srbench.sandbox.container import (
    KEEP_ALIVE,
    LABEL,
    ContainerUnavailable,
    open_container,
)
from tests.sandbox.fake_docker import install

LABELS = {"srbench.run": "run-1", "srbench.case": "terminal-bench-2.1/alpha"}
IMAGE_SPEC = ContainerSpec(image="tb/alpha:1", cpus=1.5, memory_mb=512, allow_internet=False)


def run(coro):
    return asyncio.run(coro)


def test_a_named_image_is_pulled_run_with_limits_and_labels_and_removed(tmp_path, monkeypatch):
    fake = install(tmp_path, monkeypatch)

    async def scenario():
        async with open_container(IMAGE_SPEC, labels=LABELS) as box:
            made = await box.run("echo hello > out.txt && cat out.txt", timeout_s=10)
            await box.put_files({"test.sh": "grep -q hello /app/out.txt\n"}, "/tests")
            checked = await box.run("sh /tests/test.sh", timeout_s=10)
            missing = await box.read_text("/logs/verifier/reward.txt")
            return box.name, made, checked, missing

    name, made, checked, missing = run(scenario())
    assert (made.status, made.stdout) == ("ok", "hello\n")
    assert checked.status == "ok" and missing is None
    calls = fake.calls()
    assert calls[0] == ["info", "--format", "{{.ServerVersion}}"]
    assert calls[1] == ["image", "inspect", "--format", "{{.Id}}", "tb/alpha:1"]
    assert calls[2] == ["pull", "tb/alpha:1"]
    assert calls[3] == [
        "run", "-d", "--name", name, f"--label={LABEL}=1", "--label=srbench.run=run-1",
        "--label=srbench.case=terminal-bench-2.1/alpha", "--memory=512m", "--memory-swap=512m",
        "--cpus=1.5", "--pids-limit=1024", "--security-opt=no-new-privileges", "--network=none",
        "--entrypoint", "sh", "tb/alpha:1", "-c", KEEP_ALIVE,
    ]  # fmt: skip
    assert calls[4] == ["exec", name, "sh", "-c", "echo hello > out.txt && cat out.txt"]
    assert ["exec", name, "mkdir", "-p", "/tests"] in calls
    assert any(c[0] == "cp" and c[2] == f"{name}:/tests" for c in calls)
    assert calls[-1] == ["rm", "-f", name] and fake.containers() == []


def test_a_dockerfile_is_built_once_per_content_with_its_context(tmp_path, monkeypatch):
    fake = install(tmp_path, monkeypatch)
    spec = ContainerSpec(
        dockerfile="FROM ubuntu:24.04\nWORKDIR /app\nCOPY . /app\n",
        context={"data/seed.txt": b"seed\n", "blob.bin": b"\x00\x01"},
    )

    async def scenario():
        for _ in range(2):
            async with open_container(spec, labels=LABELS) as box:
                seen = await box.run("cat data/seed.txt", timeout_s=10)
        return seen

    assert run(scenario()).stdout == "seed\n"  # the build context is in the container
    builds = [call for call in fake.calls() if call[0] == "build"]
    assert len(builds) == 1  # the second cell finds the image by its content tag
    (build,) = builds
    assert build[1:3] == ["-t", spec.build_tag()] and f"--label={LABEL}=1" in build
    assert (fake.state / "built").is_dir()
    runs = [call for call in fake.calls() if call[0] == "run"]
    assert len(runs) == 2 and all("--network=none" not in call for call in runs)
    assert [call[0] for call in fake.calls()].count("rm") == 2 and fake.containers() == []


def test_a_command_past_its_wall_clock_is_killed_with_everything_it_started(tmp_path, monkeypatch):
    fake = install(tmp_path, monkeypatch)
    fake.has_image("tb/alpha:1")
    marker = tmp_path / "still-running"

    async def scenario():
        async with open_container(IMAGE_SPEC, labels=LABELS) as box:
            slow = await box.run(f"(sleep 1; touch {marker}) & sleep 30", timeout_s=0.5)
            after = await box.run("echo next", timeout_s=10)
            return box.name, slow, after

    started = time.monotonic()
    name, slow, after = run(scenario())
    assert time.monotonic() - started < 10
    assert slow.status == "timeout" and slow.exit_code is None
    assert slow.reason == "wall-clock timeout after 0.5 s"
    assert after.status == "ok" and after.stdout == "next\n"  # the container lives on
    calls = fake.calls()
    kill = calls.index(["exec", name, "kill", "-KILL", "-1"])
    assert calls[kill - 1][:4] == ["exec", name, "sh", "-c"] and calls[-1] == ["rm", "-f", name]
    time.sleep(1.5)
    assert not marker.exists()  # the background child died with the timed-out command


def test_output_is_capped_per_stream(tmp_path, monkeypatch):
    fake = install(tmp_path, monkeypatch)
    fake.has_image("tb/alpha:1")

    async def scenario():
        async with open_container(IMAGE_SPEC, labels=LABELS) as box:
            return await box.run("yes | head -c 100000", timeout_s=10, output_bytes=1000)

    result = run(scenario())
    assert result.status == "ok" and result.stdout.endswith("\n…[truncated]")
    assert len(result.stdout) == 1000 + len("\n…[truncated]")


def test_the_container_is_removed_on_cancellation_and_on_the_case_deadline(tmp_path, monkeypatch):
    fake = install(tmp_path, monkeypatch)
    fake.has_image("tb/alpha:1")

    async def cancelled():
        inside = asyncio.Event()

        async def cell():
            async with open_container(IMAGE_SPEC, labels=LABELS) as box:
                inside.set()
                await box.run("sleep 30", timeout_s=30)

        task = asyncio.create_task(cell())
        await asyncio.wait_for(inside.wait(), 30)
        await asyncio.sleep(0.3)  # the command is running
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    async def deadline():
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(None) as case_deadline:  # run_cell's case deadline
                async with open_container(IMAGE_SPEC, labels=LABELS) as box:
                    case_deadline.reschedule(asyncio.get_running_loop().time() + 0.3)
                    await box.run("sleep 30", timeout_s=30)

    started = time.monotonic()
    run(cancelled())
    run(deadline())
    assert time.monotonic() - started < 10
    names = [call[3] for call in fake.calls() if call[0] == "run"]
    assert len(names) == 2
    for name in names:
        assert ["rm", "-f", name] in fake.calls()
    assert fake.containers() == []  # rm -f also ended the sleeping commands


def test_an_error_in_the_cell_still_removes_the_container(tmp_path, monkeypatch):
    fake = install(tmp_path, monkeypatch)
    fake.has_image("tb/alpha:1")

    async def scenario():
        async with open_container(IMAGE_SPEC, labels=LABELS) as box:
            await box.run("true", timeout_s=10)
            raise RuntimeError("adapter bug")

    with pytest.raises(RuntimeError, match="adapter bug"):
        run(scenario())
    name = next(call[3] for call in fake.calls() if call[0] == "run")
    assert fake.calls()[-1] == ["rm", "-f", name]


def test_no_daemon_or_a_failed_pull_is_a_clear_unavailable_error(tmp_path, monkeypatch):
    fake = install(tmp_path, monkeypatch)
    fake.without_daemon()

    async def scenario():
        async with open_container(IMAGE_SPEC, labels=LABELS):
            raise AssertionError("must not be reached")

    with pytest.raises(ContainerUnavailable) as caught:
        run(scenario())
    assert str(caught.value) == (
        "BENCHMARK_CONTAINER_UNAVAILABLE: this task needs Docker (task.toml names image "
        "tb/alpha:1); install Docker or start its daemon; `docker info` said (exit code 1): "
        "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker "
        "daemon running?"
    )
    assert fake.commands() == ["info"]  # nothing else was tried

    other = install(tmp_path / "second", monkeypatch)
    (other.state / "pull_fails").write_text("")
    with pytest.raises(ContainerUnavailable, match=r"`docker pull tb/alpha:1` failed: .*denied"):
        run(scenario())
    assert "run" not in other.commands()


def test_compose_only_tasks_are_refused_as_unsupported(tmp_path, monkeypatch):
    fake = install(tmp_path, monkeypatch)
    spec = ContainerSpec(compose="services:\n  app:\n    build: .\n")

    async def scenario():
        async with open_container(spec, labels=LABELS):
            raise AssertionError("must not be reached")

    with pytest.raises(ContainerUnavailable, match=r"BENCHMARK_CONTAINER_UNSUPPORTED: .*compose"):
        run(scenario())
    assert fake.calls() == []


def test_the_real_cli_without_a_daemon_says_so(monkeypatch):
    real = shutil.which("docker")
    if real is None:
        pytest.skip("no docker CLI on this machine")
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent-srbench/docker.sock")
    problem = run(container.docker_problem())
    assert problem is not None and problem.startswith("`docker info` said (exit code 1): ")
    assert "nonexistent-srbench/docker.sock" in problem


def _daemon() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and not os.environ.get("DOCKER_HOST", "").startswith(
        "unix:///nonexistent"
    )


@pytest.mark.skipif(not _daemon(), reason="no Docker daemon on this machine")
def test_a_real_daemon_runs_a_task_container():
    spec = ContainerSpec(image="busybox:1.36", memory_mb=128, allow_internet=False)

    async def scenario():
        async with open_container(spec, labels=LABELS) as box:
            ran = await box.run("echo hello > /tmp/x && cat /tmp/x", timeout_s=30)
            await box.put_files({"test.sh": "echo 1 > /logs/verifier/reward.txt\n"}, "/tests")
            await box.run("mkdir -p /logs/verifier && sh /tests/test.sh", timeout_s=30)
            return box.name, ran, await box.read_text("/logs/verifier/reward.txt")

    name, ran, reward = run(scenario())
    assert ran.stdout == "hello\n" and reward == "1\n"
    gone = subprocess.run(["docker", "inspect", name], capture_output=True, check=False)
    assert gone.returncode != 0  # removed
