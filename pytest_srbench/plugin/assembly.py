"""Which objects a srbench session registers in each process — the one place that decides by
the process's role (``roles.role_of``); no hook branches on it afterwards.

| role | registered |
|---|---|
| single (no xdist) | ``ControllerPlugin``, ``Collector``, ``Dispatcher``, ``CellReports`` |
| xdist controller | ``ControllerPlugin``, ``XdistController``, ``CellReports`` |
| xdist worker | ``WorkerLink``, ``Collector``, ``Dispatcher``, ``CellReports`` |

Every object of a process shares its ``SessionState``; the collector hands the dispatcher its
cells through an ``Assignment``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_srbench.app.config import controller_config, load_config
from pytest_srbench.app.heap import thaw_heap
from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.plugin.collect import Collector
from pytest_srbench.plugin.controller import ControllerPlugin, OneProcess
from pytest_srbench.plugin.dispatch import Dispatcher
from pytest_srbench.plugin.errors import usage_errors
from pytest_srbench.plugin.options import check_gate_options, resolve
from pytest_srbench.plugin.reports import CellReports
from pytest_srbench.plugin.roles import role_of
from pytest_srbench.plugin.session import Assignment, SessionState
from pytest_srbench.plugin.worker import WorkerLink
from pytest_srbench.store.liveness import this_process


@usage_errors
def register_session(config: pytest.Config) -> None:
    """Resolve the options and the configuration, then register this process's objects."""
    check_gate_options(config)
    explicit = config.getoption("srbench_config")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and workerinput.get("srbench_project") is not None:
        project = controller_config(workerinput["srbench_project"])
    else:
        project = load_config(Path(config.rootpath), Path(explicit) if explicit else None)
    settings = resolve(config, project)
    role = role_of(config)
    registry = default_registry()
    config.hook.pytest_srbench_adapters(registry=registry, config=config)
    state = SessionState(
        config,
        settings,
        project,
        role,
        registry,
        owner=this_process(),
        sweeps_store=role.kind != "worker",  # the reporting process sweeps; workers join
        interrupt_on_signal=role.kind == "single",
        # one process dispatches every call: it may start the simulator on its first miss
        simulator_on_demand=role.kind == "single",
    )
    # after pytest's own collections at exit (its cleanups run last-registered first, and
    # this plugin configures before pytest's unraisable-exception plugin)
    config.add_cleanup(thaw_heap)
    manager = config.pluginmanager
    manager.register(CellReports(config, preview=settings.run.mode == "preview"), "srbench-reports")
    if role.kind == "controller":
        from pytest_srbench.plugin.scheduling import XdistController

        controller = ControllerPlugin(state, OneProcess(), progress_in_place=False)
        xdist = XdistController(state, controller)
        controller.processes = xdist  # the workers ran the cells
        manager.register(controller, "srbench-controller")
        manager.register(xdist, "srbench-xdist")
        return
    assignment = Assignment()
    if role.kind == "worker":
        assert workerinput is not None
        manager.register(WorkerLink(state, workerinput), "srbench-worker")
        dispatcher = Dispatcher(state, assignment)
        collector = Collector(state, assignment, gate=lambda: None)
    else:
        controller = ControllerPlugin(state, OneProcess(), progress_in_place=True)
        manager.register(controller, "srbench-controller")
        dispatcher = Dispatcher(state, assignment, waiting=controller)
        collector = Collector(state, assignment, gate=controller.gate_request)
    manager.register(collector, "srbench-collector")
    manager.register(dispatcher, "srbench-dispatcher")
