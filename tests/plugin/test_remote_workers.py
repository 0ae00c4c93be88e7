"""pytest-xdist remote gateways with the ownership scheduler: two workers behind execnet's
socket server on 127.0.0.1, and two reached through a real OpenSSH server on 127.0.0.1, each
started in another folder (like a remote host's checkout), take the store, the configuration
and the run from the controller and run each cell once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_srbench.managed.common import free_port
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store
from tests.plugin.helpers import project
from tests.ssh_server import ssh_server

pytestmark = pytest.mark.slow


def socket_server(folder: Path) -> tuple[subprocess.Popen[str], int]:
    """execnet's socket server listening on 127.0.0.1, working in ``folder``."""
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "execnet.script.socketserver", f"127.0.0.1:{port}"], cwd=folder,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=os.environ.copy(),
        )  # fmt: skip
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "… Entering Accept loop (host, port)", or a bind error
        if "Entering Accept loop" in line:
            return proc, port
        proc.kill()
        proc.wait()
    raise AssertionError(f"execnet's socket server did not start: {line}")


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[tuple[Path, list[int]]]:
    """Two socket servers in a folder of their own (no project files in it)."""
    folder = tmp_path / "remote-host"
    folder.mkdir()
    servers = [socket_server(folder) for _ in range(2)]
    try:
        yield folder, [port for _, port in servers]
    finally:
        for proc, _ in servers:
            proc.kill()
            proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()


def run_on_gateways(pytester, sim, gateways: list[str]) -> dict:
    """The smoke profile of two benchmarks (36 cells) on these xdist gateways; its report."""
    project(pytester, sim, "always-right", "slow")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=gpqa-diamond", "--dist=load",
        *(f"--tx={gateway}" for gateway in gateways), "--srbench-json=report.json",
        "--max-worker-restart=0",  # a worker that cannot start fails the test, not the machine
    )  # fmt: skip
    assert result.ret == 0, "\n".join(result.outlines[-40:])
    report: dict = json.loads((pytester.path / "report.json").read_text())
    assert report["status"] == "completed" and report["summary"]["planned_cells"] == 36
    calls = open_store(pytester.path / ".srbench").calls(report["run_id"])
    assert sim_client.stats(sim.admin_url)["requests"] == len(calls) == 36
    assert len({(c["case_id"], c["target_id"]) for c in calls}) == 36  # each cell once
    details = report["provenance"]["runner"]["process_details"]
    workers = sorted(p["cells"] for p in details if p.get("role") == "worker")
    assert workers == [18, 18]
    return report


def test_socket_gateways_take_the_store_and_the_run_from_the_controller(pytester, sim, remote):
    folder, ports = remote
    run_on_gateways(pytester, sim, [f"socket=127.0.0.1:{port}" for port in ports])
    # the workers ran in the servers' folder (xdist's pyexecnetcache), yet wrote nothing of
    # the run there: no store, no configuration of their own
    assert (folder / "pyexecnetcache").is_dir()
    assert not list(folder.rglob("journal.sqlite3")) and not list(folder.rglob("pyproject.toml"))


def test_ssh_gateways_take_the_store_and_the_run_from_the_controller(pytester, sim, tmp_path):
    folder = tmp_path / "remote-host"
    folder.mkdir()
    with ssh_server(tmp_path / "sshd") as server:
        before = server.logins()  # the fixture's own check that a login works
        run_on_gateways(pytester, sim, [server.gateway(python=sys.executable, chdir=folder)] * 2)
        assert server.logins() - before == 2  # each worker came in through sshd
    assert not list(folder.rglob("journal.sqlite3")) and not list(folder.rglob("pyproject.toml"))
