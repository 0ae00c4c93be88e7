"""An xdist worker's end of the link with its controller (registered only in a worker): what
the controller told it when it started (the run's id and owner, the simulator and managed
servers' addresses), and a worker that dies with its controller, even when that is killed.

Its notes for the user travel the other way through ``workeroutput``
(``selection_notes``); its cells are dispatched by its own ``Dispatcher``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_srbench.managed.childwatch import die_with_parent
from pytest_srbench.plugin.session import SessionState
from pytest_srbench.store.liveness import host_id


class WorkerLink:
    """The worker-only hooks; the controller's ``workerinput`` is read into the state."""

    def __init__(self, state: SessionState, workerinput: dict[str, Any]) -> None:
        self.state = state
        state.owner = dict(workerinput.get("srbench_owner") or state.owner)
        state.run_id = str(workerinput["srbench_run_id"])
        state.sim_address = workerinput.get("srbench_sim_url")
        ready = workerinput.get("srbench_sim_ready")
        state.sim_ready = (Path(ready[0]), Path(ready[1])) if ready else None
        state.endpoints = dict(workerinput.get("srbench_endpoints") or {})
        state.managed_slots = dict(workerinput.get("srbench_managed_slots") or {})

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        state = self.state
        state.signals.install(state.on_terminate)
        controller = state.owner  # a worker dies with its controller (even by SIGKILL)
        if controller.get("host") == host_id() and controller.get("pid"):
            die_with_parent(int(controller["pid"]))

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.state.close()
