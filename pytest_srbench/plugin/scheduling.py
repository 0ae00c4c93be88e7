"""xdist integration: each worker owns the items at collection index ``i`` with
``i % workers == slot`` and dispatches their cells itself; this scheduler sends every item to
its owner, so no cell is ever dispatched twice and results never depend on timing.

A worker that replaces a crashed one receives the dead worker's remaining items and only
reports what the store says about them; it never re-sends their calls.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pytest

from pytest_srbench.app.heap import peak_rss_mb
from pytest_srbench.plugin.roles import owns
from pytest_srbench.plugin.selection_notes import WORKER_KEY, show
from pytest_srbench.plugin.session import SessionState, process_id
from pytest_srbench.store.base import Store

if TYPE_CHECKING:
    from pytest_srbench.plugin.controller import ControllerPlugin


def _worker_specs(config: pytest.Config) -> list[str]:
    """The session's xdist worker specs (``-n``, ``--tx``): pytest-xdist 3.6 renamed the
    function that lists them (``parse_spec_config`` in 3.5, the declared lower bound)."""
    from xdist import workermanage

    parse = getattr(workermanage, "parse_tx_spec_config", None) or workermanage.parse_spec_config
    return list(parse(config))


class OwnerScheduling:
    """Deterministic ownership scheduler (implements xdist's ``Scheduling`` protocol)."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        self.config = config
        self.numnodes = len(_worker_specs(config))
        self.node2collection: dict[Any, list[str]] = {}
        self.node2pending: dict[Any, list[int]] = {}
        self._started: list[Any] = []
        self._orphans: list[list[int]] = []
        self.collection_is_completed = False
        self.log = log

    @property
    def nodes(self) -> list[Any]:
        return list(self.node2pending)

    @property
    def tests_finished(self) -> bool:
        if not self.collection_is_completed or self._orphans:
            return False
        return all(len(pending) < 2 for pending in self.node2pending.values())

    @property
    def has_pending(self) -> bool:
        return any(self.node2pending.values())

    def add_node(self, node: Any) -> None:
        self.node2pending[node] = []

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        if not self.collection_is_completed:
            self.node2collection[node] = list(collection)
            if len(self.node2collection) >= self.numnodes:
                first = next(iter(self.node2collection.values()))
                for other in self.node2collection.values():
                    if other != first:
                        raise RuntimeError("pytest-srbench: workers collected different cells")
                self.collection_is_completed = True
            return
        self.node2collection[node] = list(collection)
        if self._orphans:
            self.node2pending[node] = self._orphans.pop(0)

    def mark_test_complete(self, node: Any, item_index: int, duration: float = 0) -> None:
        pending = self.node2pending[node]
        if item_index in pending:
            pending.remove(item_index)

    def mark_test_pending(self, item: str) -> None:
        raise NotImplementedError("pytest-srbench never reschedules a cell")

    def remove_pending_tests_from_node(self, node: Any, indices: Sequence[int]) -> None:
        raise NotImplementedError("pytest-srbench does not steal work between workers")

    def remove_node(self, node: Any) -> str | None:
        pending = self.node2pending.pop(node)
        if not pending:
            return None
        crashed = self.node2collection[node][pending.pop(0)]
        if pending:
            self._orphans.append(pending)
        return crashed

    def _slot(self, node: Any) -> int:
        return int(node.workerinput.get("srbench_slot", 0))

    def schedule(self) -> None:
        assert self.collection_is_completed
        for node, pending in self.node2pending.items():
            if node in self._started:
                continue
            self._started.append(node)
            if not pending and not node.workerinput.get("srbench_replacement"):
                size = len(self.node2collection[node])
                slot = self._slot(node)
                pending[:] = [index for index in range(size) if owns(index, self.numnodes, slot)]
            if pending:
                node.send_runtest_some(list(pending))
            node.shutdown()


class XdistController:
    """The xdist controller's side of a session (registered only there): what every worker is
    told when it starts, which workers died, the scheduler, the progress line as workers report
    cells, and the controller's account of the processes (``controller.Processes``)."""

    def __init__(self, state: SessionState, controller: ControllerPlugin) -> None:
        self.state = state
        self.controller = controller
        self.workers_lost: list[str] = []  # xdist workers that died mid-run
        self._next_slot = 0
        self._notes: list[str] = []  # selection notes of the workers, printed once
        self._usage_error = False

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        state = self.state
        numnodes = int(node.workerinput.get("workercount", 1))
        node.workerinput["srbench_run_id"] = state.run_id
        launched = state.sim
        node.workerinput["srbench_sim_url"] = None if launched else state.sim_url
        node.workerinput["srbench_sim_ready"] = (
            [str(launched.ready_path), str(launched.log_path)] if launched else None
        )  # the worker waits for it when its run starts, not the controller now
        node.workerinput["srbench_endpoints"] = dict(state.endpoints)
        node.workerinput["srbench_managed_slots"] = dict(state.managed_slots)
        node.workerinput["srbench_owner"] = dict(state.owner)
        # a remote worker (--tx socket=… / ssh=…) runs in another folder, maybe on another
        # host: it gets the store, the configuration and the shard from here, not its cwd
        node.workerinput["srbench_store"] = str(state.settings.store)
        node.workerinput["srbench_project"] = state.project.model_dump(mode="json")
        shard = state.settings.shard
        node.workerinput["srbench_shard"] = shard.label if shard is not None else None
        node.workerinput["srbench_slot"] = self._next_slot % max(numnodes, 1)
        node.workerinput["srbench_replacement"] = self._next_slot >= numnodes
        self._next_slot += 1

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        if error is not None:
            self.workers_lost.append(str(node.gateway.id))
        for note in (getattr(node, "workeroutput", None) or {}).get(WORKER_KEY) or []:
            if note["line"] not in self._notes:  # every worker says the same: print once
                self._notes.append(note["line"])
                self._usage_error = self._usage_error or bool(note["usage_error"])
                show(self.state.config, str(note["line"]), error=bool(note["usage_error"]))

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """The progress line, as the workers' reports arrive."""
        self.controller.show_progress()

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A plan without cells is a usage error under xdist too (the workers reported it)."""
        if self._usage_error:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> OwnerScheduling:
        return OwnerScheduling(config, log)

    # -- controller.Processes --------------------------------------------------------------
    def count(self) -> int:
        value = getattr(self.state.config.option, "numprocesses", None)
        try:
            return max(1, int(value or 1))
        except (TypeError, ValueError):
            return 1

    def lost(self) -> list[str]:
        return list(self.workers_lost)

    def report_run(self, store: Store, run_id: str) -> str:
        """The run the workers joined: a sharded run is found by its key (the workers claimed
        their shard of it); otherwise the run this controller named."""
        settings = self.state.settings
        if settings.shard is not None and settings.run_key:
            found = store.find_run_by_key(settings.run_key)
            if found is not None:
                return found.id
        return run_id

    def record_reporter(self, store: Store, run_id: str) -> None:
        with store.transaction():
            store.register_process(
                run_id,
                {
                    "process_id": process_id(),
                    "pid": os.getpid(),
                    "role": "controller",
                    "peak_rss_mb": peak_rss_mb(),
                },
            )
