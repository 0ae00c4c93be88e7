"""The simulator process: launched without waiting, waited for on first use; a simulator that
cannot start is a clear error, whether this process started it or only reads its ready file."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import httpx
import pytest

from pytest_srbench.simulator.process import (
    SimulatorStartError,
    launch_simulator,
    simulator_url,
    wait_until_ready,
)


def test_a_launched_simulator_is_waited_for_once_and_answers(tmp_path):
    launch = launch_simulator(log_dir=tmp_path)
    try:
        process = launch.wait()
        assert launch.wait() is process  # waited for once
        assert process.base_url == simulator_url(process.port)
        models = httpx.get(f"{process.base_url}/models", timeout=30).json()
        assert models["data"], models
    finally:
        launch.stop()
    assert launch.popen.poll() is not None


def test_the_ready_file_written_later_is_read(tmp_path):
    ready, log = tmp_path / "ready.json", tmp_path / "sim.log"

    def write_later() -> None:
        time.sleep(0.2)
        ready.write_text(json.dumps({"pid": 4321, "port": 8123}))

    writer = threading.Thread(target=write_later)
    writer.start()
    try:
        assert wait_until_ready(ready, log, time.monotonic() + 30) == (4321, 8123)
    finally:
        writer.join()


def test_a_simulator_that_exits_before_listening_is_an_error_naming_its_log(tmp_path):
    log = tmp_path / "sim.log"
    exited = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    exited.wait()
    with pytest.raises(SimulatorStartError, match=r"exited with status 3; see .*sim\.log"):
        wait_until_ready(tmp_path / "never.json", log, time.monotonic() + 30, popen=exited)


def test_no_ready_file_by_the_deadline_is_an_error_and_the_process_is_killed(tmp_path):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        with pytest.raises(SimulatorStartError, match="did not start within its time limit"):
            wait_until_ready(
                tmp_path / "never.json", tmp_path / "sim.log", time.monotonic() + 0.3, popen=sleeper
            )
        assert sleeper.wait(timeout=10) != 0
    finally:
        sleeper.kill()


def test_a_launch_waited_for_after_its_deadline_is_still_found_when_it_is_up(tmp_path):
    """A judge's simulator may first be needed minutes after it was launched."""
    launch = launch_simulator(log_dir=tmp_path, timeout_s=30.0)
    try:
        process = launch.wait()  # up now
        late = wait_until_ready(launch.ready_path, launch.log_path, time.monotonic() - 60)
        assert late[1] == process.port
    finally:
        launch.stop()


def test_a_stopped_simulator_leaves_no_scratch_folder_behind():
    """Its address file, model list and (without a ``log_dir``) log are removed at stop."""
    launch = launch_simulator()
    work = launch.work_dir
    assert work is not None
    try:
        launch.wait()
        assert launch.ready_path.parent == work and launch.log_path.parent == work
        assert launch.ready_path.exists()
    finally:
        launch.stop()
    assert not work.exists()


def test_a_simulator_that_did_not_start_keeps_the_log_its_error_names():
    launch = launch_simulator(timeout_s=0.0)
    with pytest.raises(SimulatorStartError, match="did not start within its time limit"):
        launch.wait()
    try:
        assert launch.log_path.exists()  # the error says "see <log>": it is there to see
    finally:
        launch.stop()
