"""Starting and stopping the simulator as a child process on a free loopback port; it is
launched through :mod:`pytest_srbench.managed.childwatch`, so it exits when the process that
started it dies, even by SIGKILL."""

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
from pytest_srbench.managed.childwatch import spawn_watched, terminate
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

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def admin_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/srbench"

    def stop(self) -> None:
        """Terminate the process (SIGTERM, then SIGKILL after 5 s)."""
        terminate(self.popen, grace_s=5)


def start_simulator(
    models: list[SimModel] | None = None, *, log_dir: Path | None = None, timeout_s: float = 30.0
) -> SimulatorProcess:
    """Launch ``python -m pytest_srbench.simulator.server`` on port 0 and wait until it listens."""
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
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready.exists():
            info = json.loads(ready.read_text())
            return SimulatorProcess(
                pid=int(info.get("pid") or popen.pid),
                port=int(info["port"]),
                popen=popen,
                log_path=log_path,
            )
        if popen.poll() is not None:
            raise SimulatorStartError(
                f"the simulator exited with status {popen.returncode}; see {log_path}"
            )
        time.sleep(0.02)
    popen.kill()
    raise SimulatorStartError(
        f"the simulator did not start within {timeout_s:.0f} s; see {log_path}"
    )
