"""Starting and stopping the simulator as a child process on a free loopback port; it is
launched through :mod:`pytest_srbench.managed.childwatch`, so it exits when the process that
started it dies, even by SIGKILL. Its scratch folder (address file, model list and, without a
``log_dir``, its log) is removed when it is stopped and kept when it fails to start, for the
log the error names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from pytest_srbench.core.errors import UnavailableError
from pytest_srbench.managed.childwatch import remove_scratch, spawn_watched, terminate
from pytest_srbench.simulator.profiles import SimModel


class SimulatorStartError(UnavailableError):
    """The simulator process did not come up."""


@dataclass
class SimulatorProcess:
    """A running simulator child process (``pid`` is the server's own process id)."""

    pid: int
    port: int
    popen: subprocess.Popen[bytes]
    log_path: Path
    work_dir: Path | None = None  # the launch's scratch folder, removed at stop

    @property
    def base_url(self) -> str:
        return simulator_url(self.port)

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/srbench"

    def stop(self) -> None:
        """Terminate the process (SIGTERM, then SIGKILL after 5 s) and remove its scratch."""
        terminate(self.popen, grace_s=5)
        remove_scratch(self.work_dir)


def simulator_url(port: int) -> str:
    """The OpenAI-compatible base URL of a simulator listening on ``port``."""
    return f"http://127.0.0.1:{port}/v1"


def start_simulator(
    models: list[SimModel] | None = None, *, log_dir: Path | None = None, timeout_s: float = 30.0
) -> SimulatorProcess:
    """Launch ``python -m pytest_srbench.simulator.server`` on port 0 and wait until it listens."""
    return launch_simulator(models, log_dir=log_dir, timeout_s=timeout_s).wait()


@dataclass
class SimulatorLaunch:
    """A simulator that is starting: the caller goes on with its own work (a session collects
    and freezes its plan meanwhile) and ``wait``s only when it needs the address."""

    popen: subprocess.Popen[bytes]
    ready_path: Path
    log_path: Path
    deadline: float
    work_dir: Path | None = None
    _process: SimulatorProcess | None = None

    def wait(self) -> SimulatorProcess:
        """The running simulator, once it listens (raises ``SimulatorStartError`` if it exited
        or did not come up in time)."""
        if self._process is None:
            pid, port = wait_until_ready(
                self.ready_path, self.log_path, self.deadline, popen=self.popen
            )
            self._process = SimulatorProcess(
                pid=pid or self.popen.pid,
                port=port,
                popen=self.popen,
                log_path=self.log_path,
                work_dir=self.work_dir,
            )
        return self._process

    def stop(self) -> None:
        """Terminate the process, started or not (SIGTERM, then SIGKILL after 5 s), and remove
        its scratch folder."""
        terminate(self.popen, grace_s=5)
        remove_scratch(self.work_dir)


def launch_simulator(
    models: list[SimModel] | None = None, *, log_dir: Path | None = None, timeout_s: float = 30.0
) -> SimulatorLaunch:
    """Spawn the simulator on port 0 without waiting for it: it writes its address to
    ``ready_path`` when it listens."""
    work = Path(tempfile.mkdtemp(prefix="srbench-sim-"))
    ready = work / "ready.json"
    command = [
        sys.executable,
        "-m",
        "pytest_srbench.simulator.server",
        "--port",
        "0",
        "--ready-file",
        str(ready),
    ]
    if models:
        models_path = work / "models.json"
        models_path.write_text(json.dumps([model.model_dump(mode="json") for model in models]))
        command += ["--models", str(models_path)]
    log_path = (log_dir or work) / "simulator.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        popen = spawn_watched(command, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ))
    return SimulatorLaunch(popen, ready, log_path, time.monotonic() + timeout_s, work_dir=work)


def wait_until_ready(
    ready_path: Path,
    log_path: Path,
    deadline: float,
    *,
    popen: subprocess.Popen[bytes] | None = None,
) -> tuple[int | None, int]:
    """Wait for a launched simulator's ready file: its (pid, port). ``popen`` (when this
    process started it) turns an early exit into an error at once; past ``deadline`` it is
    killed. The file is read at least once: a launch first needed long after it started (a
    judge's simulator at the end of a run) is up since, whatever the deadline."""
    while True:
        if ready_path.exists():
            try:
                info = json.loads(ready_path.read_text())
            except ValueError:  # being written: read it again
                info = None
            if info is not None:
                return (int(info["pid"]) if info.get("pid") else None), int(info["port"])
        if popen is not None and popen.poll() is not None:
            raise SimulatorStartError(
                f"the simulator exited with status {popen.returncode}; see {log_path}"
            )
        if time.monotonic() >= deadline:
            break
        time.sleep(0.01)
    if popen is not None:
        popen.kill()
    raise SimulatorStartError(f"the simulator did not start within its time limit; see {log_path}")
