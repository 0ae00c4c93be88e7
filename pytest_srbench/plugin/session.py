"""What every role of a srbench session shares: ``SessionState`` (the resolved settings and
configuration, this process's role, the store, the run's identity, where each target is
reached, the frozen plan once collection made it, and what SIGTERM does) and ``Assignment``
(what collection hands the process that dispatches: its cells).

The role objects hold one state each and keep their own state to themselves: ``Collector``
(``collect.py``) and ``Dispatcher`` (``dispatch.py``) where cells run (a single process or an
xdist worker), ``ControllerPlugin`` (``controller.py``) where the run is reported (a single
process or the xdist controller), ``WorkerLink`` (``worker.py``) in a worker and
``XdistController`` (``scheduling.py``) in the controller. ``entry.py`` registers them by role.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest

from pytest_srbench.app.config import SrbenchConfig
from pytest_srbench.app.lifecycle import open_swept_store
from pytest_srbench.app.planning import PlanDraft
from pytest_srbench.benchmarks.registry import AdapterRegistry
from pytest_srbench.core.models import Manifest, Run, Target
from pytest_srbench.core.user_targets import UserTarget
from pytest_srbench.plugin.options import Settings
from pytest_srbench.plugin.roles import Role
from pytest_srbench.plugin.signals import SignalHandlers, request_cancellation
from pytest_srbench.simulator.process import (
    SimulatorLaunch,
    SimulatorStartError,
    simulator_url,
    wait_until_ready,
)
from pytest_srbench.store.base import Store
from pytest_srbench.store.opening import open_store

if TYPE_CHECKING:
    from pytest_srbench.transport.base import Transport

SIM_WAIT_S = 30.0  # how long a worker waits for the controller's simulator to listen


def new_run_id() -> str:
    return "run-" + uuid.uuid4().hex[:20]


def process_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(eq=False, repr=False)  # (its repr would spell out the plan: signal.signal makes it)
class SessionState:
    """The state every role of a session needs; one per process, passed to each role object.

    ``sweeps_store``: this process sweeps the store for orphaned runs when it opens it (the
    one that reports the run; a worker opens its controller's store as it is).
    ``interrupt_on_signal``: SIGTERM interrupts at once, as Ctrl-C does (one process runs the
    whole session); otherwise it cancels the run through the store, which every process of a
    distributed run polls (the signal usually reaches one process only).
    ``simulator_on_demand``: this process dispatches every call of the run, so its simulator
    may wait for the first call the response cache does not answer (``cache_may_answer``).
    """

    config: pytest.Config
    settings: Settings
    project: SrbenchConfig
    role: Role
    registry: AdapterRegistry
    owner: dict[str, Any]
    sweeps_store: bool = True
    interrupt_on_signal: bool = False
    simulator_on_demand: bool = False
    run_id: str = ""
    store: Store | None = None
    swept: list[Run] = field(default_factory=list)  # runs the opening sweep interrupted
    # where targets are reached besides their configured base_url
    sim: SimulatorLaunch | None = None  # launched by this process; waited for on first use
    # a simulator to launch when its address is first needed (the response cache may answer
    # every call of this session: ``SessionServers.start``)
    sim_deferred: Callable[[], SimulatorLaunch] | None = None
    cache_entries: bool | None = None  # see ``cache_may_answer``
    sim_ready: tuple[Path, Path] | None = None  # a worker: the controller's (ready, log) files
    sim_address: str | None = None
    endpoints: dict[str, str] = field(default_factory=dict)  # managed servers, by target id
    managed_slots: dict[str, int] = field(default_factory=dict)  # their servers' slots
    # the plan: drafted and frozen by collection
    draft: PlanDraft | None = None
    manifest: Manifest | None = None
    view_only: bool = False  # this process only reports the run (held elsewhere, or replaced)
    reused_run: bool = False  # the run key named a finished run: re-printed, no call made
    # how the session is being stopped
    interrupted: bool = False
    stop_signal: str | None = None  # SIGTERM received: the run ends as on Ctrl-C
    held_line: str | None = None  # the run's owner did not end within --srbench-wait-s
    store_failure: str | None = None  # journal writes the store never took (the session fails)
    finishing: bool = False  # the report is being written: a signal waits for it
    stoppers: list[Callable[[str], None]] = field(default_factory=list)  # called on SIGTERM
    signals: SignalHandlers = field(default_factory=SignalHandlers)
    started: float = field(default_factory=time.monotonic)

    @property
    def rootdir(self) -> Path:
        return Path(self.config.rootpath)

    @property
    def sim_url(self) -> str | None:
        """The simulator's address, waiting for it to listen the first time it is needed (it
        starts while the session collects and freezes its plan)."""
        if self.sim_address is None:
            if self.sim is None and self.sim_deferred is not None:
                launch, self.sim_deferred = self.sim_deferred, None
                self.sim = launch()
            if self.sim is not None:
                self.sim_address = self.sim.wait().base_url
            elif self.sim_ready is not None:
                ready, log = self.sim_ready
                _, port = wait_until_ready(ready, log, time.monotonic() + SIM_WAIT_S)
                self.sim_address = simulator_url(port)
        return self.sim_address

    def cache_may_answer(self, target_ids: Iterable[str]) -> bool:
        """Whether the response cache is on and the store holds a cached call of any of
        ``target_ids`` (asked once per session): then the simulator and the HTTP client wait
        for the first call the cache does not answer."""
        if self.settings.cache == "off":
            return False
        if self.cache_entries is None:
            self.cache_entries = self.open().has_cached_calls(list(target_ids))
        return self.cache_entries

    def open(self) -> Store:
        """The store (swept for orphaned runs first where ``sweeps_store``)."""
        if self.store is None:
            settings = self.settings
            if self.sweeps_store:
                self.store, self.swept = open_swept_store(settings.location, settings.store)
            else:
                self.store = open_store(settings.location, local_dir=settings.store)
        return self.store

    def target_urls(self, targets: Iterable[Target]) -> dict[str, str]:
        """Where each of ``targets`` without a base URL of its own is reached (with every
        managed server's address): its managed server, or the simulator for a simulated one."""
        base_urls = dict(self.endpoints)
        simulated = [target for target in targets if target.simulated and target.base_url is None]
        if simulated:
            url = self.sim_url
            if not url:
                raise SimulatorStartError("the simulator is not running")
            for target in simulated:
                base_urls[target.id] = url
        return base_urls

    def on_terminate(self, signum: int, frame: FrameType | None) -> None:
        """SIGTERM ends the run like Ctrl-C: at once where ``interrupt_on_signal`` (the
        Ctrl-C path); otherwise through the store, as ``srbench cancel`` does: every engine of
        the run stops within 0.5 s, the sessions end, the controller writes the report. A
        second signal interrupts at once."""
        name = signal.Signals(signum).name
        repeated = self.stop_signal is not None
        self.stop_signal = name
        self.interrupted = True
        if self.finishing:
            return  # the report is being written: let it finish
        if self.interrupt_on_signal or repeated or not self.run_id:
            raise KeyboardInterrupt
        for stop in self.stoppers:
            stop(f"interrupted ({name})")
        threading.Thread(
            target=request_cancellation,
            args=(self.settings.location, self.run_id, self.settings.run_key, name),
            name="srbench-cancel",
            daemon=True,
        ).start()

    def close(self) -> None:
        """The previous signal handlers back, the store closed (which merges the WAL into the
        database when it is the last connection)."""
        self.signals.restore()
        if self.store is not None:
            self.store.close()


@dataclass(eq=False, repr=False)
class Assignment:
    """What collection hands the dispatcher of this process: the cells it dispatches (its
    xdist share), the marked test items whose bodies are those cells (each submitted when it
    can run), the plan's fixture targets, and the HTTP client made before the run was
    created."""

    cells: list[tuple[str, str]] = field(default_factory=list)
    bodies: list[pytest.Function] = field(default_factory=list)
    user_targets: dict[str, UserTarget] = field(default_factory=dict)
    transport: Transport | None = None
