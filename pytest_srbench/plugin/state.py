"""What every phase of the srbench session plugin shares: its settings, the store, the
run's identity and the servers and engine it started.
"""

from __future__ import annotations

import atexit
import gc
import os
import resource
import socket
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_srbench.app.config import SrbenchConfig
from pytest_srbench.app.lifecycle import open_swept_store
from pytest_srbench.app.planning import PlanDraft
from pytest_srbench.app.recovery import RecoveryRequest
from pytest_srbench.app.shards import ShardClaim
from pytest_srbench.benchmarks.registry import AdapterRegistry, default_registry
from pytest_srbench.core.collector import collector_paused
from pytest_srbench.core.compare.runs import RunSide
from pytest_srbench.core.models import TERMINAL_CELL_STATUSES, Case, Manifest, Target
from pytest_srbench.core.user_targets import UserTarget
from pytest_srbench.engine.engine import CellOutcome, Engine
from pytest_srbench.plugin.client import SrbenchClient
from pytest_srbench.plugin.options import Settings
from pytest_srbench.plugin.progress import ProgressDisplay
from pytest_srbench.plugin.roles import Role
from pytest_srbench.plugin.signals import SignalHandlers
from pytest_srbench.simulator.process import (
    SimulatorLaunch,
    SimulatorStartError,
    simulator_url,
    wait_until_ready,
)
from pytest_srbench.store.base import Store
from pytest_srbench.store.liveness import this_process
from pytest_srbench.store.opening import open_store

if TYPE_CHECKING:
    from pytest_srbench.app.report_ahead import ReportAhead
    from pytest_srbench.transport.base import Transport

TERMINAL = TERMINAL_CELL_STATUSES


def new_run_id() -> str:
    return "run-" + uuid.uuid4().hex[:20]


def process_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def freeze_heap() -> None:
    """Exempt every object alive now from the cyclic garbage collector's later passes.

    A session holds the plan, its cases and one item per cell until it ends; each full
    collection would walk all of them again (pytest collects twice while it unconfigures, a
    second or more at 20,000 cells), though none of them can become garbage before the end.
    Freezing them costs nothing; reference counting still frees whatever is released, and
    ``thaw_heap`` hands the objects back to the collector when the session's cleanup runs."""
    gc.freeze()


@contextmanager
def long_lived() -> Iterator[None]:
    """Build what lives to the session's end (the plan, its cases, one item per cell) without
    the cyclic collector running while it is made (none of it is garbage), then freeze it."""
    with collector_paused():
        try:
            yield
        finally:
            freeze_heap()


def thaw_heap() -> None:
    """Undo ``freeze_heap`` when the session's cleanup runs (a program that runs pytest
    in-process keeps collecting what the session left), and freeze again at interpreter
    exit: the interpreter's last collection would otherwise walk the whole heap it is about
    to hand back to the operating system (6 s at 20,000 cells; cycles left then are not
    finalized, as for any object the interpreter does not free at exit)."""
    gc.unfreeze()
    if not _REFREEZE_AT_EXIT:
        _REFREEZE_AT_EXIT.append(atexit.register(freeze_heap))


_REFREEZE_AT_EXIT: list[object] = []  # registered once per process


def peak_rss_mb() -> float:
    """This process's peak resident set size (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


SIM_WAIT_S = 30.0  # how long a worker waits for the controller's simulator to listen


class PluginState:
    """The session's state; the phases (collect, runner, controller) are mixins on it."""

    def __init__(
        self, config: pytest.Config, settings: Settings, project: SrbenchConfig, role: Role
    ) -> None:
        self.config = config
        self.settings = settings
        self.project = project
        self.role = role
        self.rootdir = Path(config.rootpath)
        self.registry: AdapterRegistry = default_registry()
        config.hook.pytest_srbench_adapters(registry=self.registry, config=config)
        self.store: Store | None = None
        self.run_id: str = ""
        self.sim: SimulatorLaunch | None = None  # started here; waited for on first use
        self._sim_url: str | None = None
        self._sim_ready: tuple[Path, Path] | None = None  # a worker: the controller's sim's
        self.managed: list[Any] = []
        self.endpoints: dict[str, str] = {}
        self.managed_slots: dict[str, int] = {}  # managed target -> its server's slots
        self.draft: PlanDraft | None = None
        self.manifest: Manifest | None = None
        self._planned: int | None = None  # the run's planned cells, once counted
        self.engine: Engine | None = None
        # the HTTP client, made before the run is created (loading it is set-up, not the run)
        self.transport: Transport | None = None
        # the report begun while the last cells run (a single process that runs the whole
        # run: no xdist worker, no shard); made on the first wait for an outcome
        self.report_ahead: ReportAhead | None = None
        self._may_report_ahead = False
        self.view_only = False
        self.report: dict[str, Any] | None = None
        self.report_error: str | None = None
        self.output_problems: list[str] = []  # report files that could not be written
        self.interrupted = False
        self.stop_signal: str | None = None  # SIGTERM received: the run ends as on Ctrl-C
        self.signals = SignalHandlers()
        self._finishing = False
        self.workers_lost: list[str] = []  # xdist workers that died mid-run
        self.started = time.monotonic()
        self.process_info: dict[str, Any] = {}
        self.progress: ProgressDisplay | None = None
        self.baseline: RunSide | None = None
        self.gate: dict[str, Any] | None = None
        self.lean = not (
            config.getoption("usepdb", False)
            or config.getoption("trace", False)
            or config.getoption("srbench_full_protocol", False)
        )
        self.owner: dict[str, Any] = this_process()
        self.swept: list[Any] = []
        self.recovery: RecoveryRequest | None = None
        self.shard_claim: ShardClaim | None = None  # this invocation's shard of a sharded run
        self.shard_note: str | None = None  # a shard that is not the last: why no report
        self._owned: list[tuple[str, str]] = []  # (case, target) cells this process dispatches
        self.driven = False  # the cells are marked test functions: each item runs its own
        self._test_cells: dict[str, list[tuple[str, str]]] = {}  # benchmark -> its cells
        self._driven_items: list[pytest.Function] = []  # this process's marked test items
        self._driven_position: dict[str, int] = {}  # their node ids -> position
        self._ahead = 0  # the first of them not yet considered for an early start
        self._lean_parent: Any = None  # the parent whose set-up stays for the next item
        self._cases_by_id: dict[str, Case] = {}
        self._targets_by_id: dict[str, Target] = {}
        self._case_views: dict[str, Any] = {}
        self._user_targets: dict[str, UserTarget] = {}  # python targets of the plan, by id
        self.client = SrbenchClient()  # srbench_client: calls of the running body's cell
        # after pytest's own collections at exit (its cleanups run last-registered first, and
        # this plugin configures before pytest's unraisable-exception plugin)
        config.add_cleanup(thaw_heap)
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None:
            self.owner = dict(workerinput.get("srbench_owner") or self.owner)
            self.run_id = str(workerinput["srbench_run_id"])
            self.sim_url = workerinput.get("srbench_sim_url")
            ready = workerinput.get("srbench_sim_ready")
            self._sim_ready = (Path(ready[0]), Path(ready[1])) if ready else None
            self.endpoints = dict(workerinput.get("srbench_endpoints") or {})
            self.managed_slots = dict(workerinput.get("srbench_managed_slots") or {})

    # -- shared helpers ------------------------------------------------------------------
    @property
    def sim_url(self) -> str | None:
        """The simulator's address, waiting for it to listen the first time it is needed (it
        starts while the session collects and freezes its plan)."""
        if self._sim_url is None and (self.sim is not None or self._sim_ready is not None):
            try:
                if self.sim is not None:
                    self._sim_url = self.sim.wait().base_url
                elif self._sim_ready is not None:
                    ready, log = self._sim_ready
                    _, port = wait_until_ready(ready, log, time.monotonic() + SIM_WAIT_S)
                    self._sim_url = simulator_url(port)
            except SimulatorStartError as error:
                raise pytest.UsageError(f"pytest-srbench: {error}") from None
        return self._sim_url

    @sim_url.setter
    def sim_url(self, url: str | None) -> None:
        self._sim_url = url

    def open(self) -> Store:
        """The store; the controller (or single process) sweeps it for orphaned runs first."""
        if self.store is None:
            settings = self.settings
            if self.role.kind == "worker":
                self.store = open_store(settings.location, local_dir=settings.store)
            else:
                self.store, self.swept = open_swept_store(settings.location, settings.store)
        return self.store

    def _needs_simulator(self, targets: list[Target]) -> bool:
        return any(target.simulated and target.base_url is None for target in targets)

    def outcome(self, case_id: str, target_id: str) -> CellOutcome:
        """The cell's terminal outcome (``RunPhase`` provides it)."""
        raise NotImplementedError
