"""The srbench session plugin: set-up (the simulator, managed servers, the baseline) and
tear-down, composed with the collect, runner and controller phases.
"""

from __future__ import annotations

import pytest

from pytest_srbench.app.config import ConfigError
from pytest_srbench.app.planning import PlanDraft, build_draft, builtin_auxiliary_needed
from pytest_srbench.app.recovery import read_plan_file
from pytest_srbench.core.compare.runs import ComparisonError, RunSide
from pytest_srbench.core.models import Target
from pytest_srbench.core.user_targets import declared_targets
from pytest_srbench.datasets.suites import SuiteError
from pytest_srbench.managed.childwatch import die_with_parent
from pytest_srbench.plugin.collect import CollectPhase
from pytest_srbench.plugin.controller import FinishPhase
from pytest_srbench.plugin.errors import usage_errors
from pytest_srbench.plugin.progress import ProgressDisplay
from pytest_srbench.plugin.runner import RunPhase
from pytest_srbench.plugin.state import new_run_id
from pytest_srbench.simulator.process import launch_simulator
from pytest_srbench.store.base import Store
from pytest_srbench.store.liveness import host_id
from pytest_srbench.store.opening import store_exists


class SrbenchPlugin(CollectPhase, RunPhase, FinishPhase):
    """Registered (as ``srbench-session``) only when a srbench option activates the plugin."""

    # -- controller / single: set-up -----------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    @usage_errors
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.signals.install(self._on_terminate)
        if self.role.kind == "worker":
            controller = self.owner  # a worker dies with its controller (even by SIGKILL)
            if controller.get("host") == host_id() and controller.get("pid"):
                die_with_parent(int(controller["pid"]))
            return
        terminal = self.config.pluginmanager.getplugin("terminalreporter")
        if terminal is not None:
            interactive = bool(terminal.isatty) and self.role.kind == "single"
            self.progress = ProgressDisplay(terminal, interactive=interactive)
        self.run_id = new_run_id()
        store = self.open()  # a read-only, locked or uncreatable store: one line (usage_errors)
        with store.transaction():
            store.set_owner(self.run_id, self.owner)  # before the run row: never an orphan
        if self.settings.baseline:
            self.baseline = self._load_baseline(self.settings.baseline)
        targets = self._session_targets(store)
        if self._needs_simulator(targets) or builtin_auxiliary_needed(
            self.project, self.settings.run.benchmarks or None
        ):  # simulated subjects, or a built-in sim-judge / sim-user bound for real ones
            log_dir = self.settings.store / "simulator"
            self.sim = launch_simulator(  # waited for when its address is first needed
                list(self.project.simulator.sim_models().values()), log_dir=log_dir
            )
        managed = [t for t in targets if t.managed == "llama-server" and t.base_url is None]
        if managed:
            self._start_managed(managed)

    def _start_managed(self, targets: list[Target]) -> None:
        """Start each managed llama-server sized from the plan (measured on a probe server
        first), or refuse the run before anything is sent, saying what to change."""
        from pytest_srbench.app.managed_servers import ServerRefused, start_for_plan
        from pytest_srbench.managed.common import RealPartError

        draft = self._sizing_draft()
        limits = draft.limits if draft else self.project.frozen_limits(self.settings.run.limits)
        configured = self.project.all_targets()
        for target in targets:
            cases = None
            if draft is not None:
                ids = {case_id for case_id, target_id in draft.cells() if target_id == target.id}
                cases = [case for case in draft.cases if case.id in ids]
            params = {"max_tokens": limits.max_output_tokens, **self.project.sampling,
                      **self.settings.run.sampling, **target.request_params}  # fmt: skip
            config = configured.get(target.id)
            try:
                started = start_for_plan(
                    target.id, target.model, config.server if config else None, cases,
                    max_tokens=int(params["max_tokens"]), limits=limits,
                    concurrency=self.settings.concurrency, log_dir=self.settings.store / "servers",
                )  # fmt: skip
            except ServerRefused as error:
                raise pytest.UsageError(f"pytest-srbench: {error}") from None
            except RealPartError as error:
                raise pytest.UsageError(f"pytest-srbench: target {target.id!r}: {error}") from None
            self.managed.append(started.server)
            self.endpoints[target.id] = started.server.base_url
            self.managed_slots[target.id] = started.size.slots
            terminal = self.config.pluginmanager.getplugin("terminalreporter")
            if terminal is not None:
                terminal.write_line(started.note(target.id))

    def _sizing_draft(self) -> PlanDraft | None:
        """The plan draft a profile run will freeze (None when it is known only after
        collection, for benchmarks written as tests or a recovery, or cannot be made: then
        collection says why)."""
        if self.settings.recover is not None:
            return None
        try:
            return build_draft(self.project, self.settings.run, self.registry, self.rootdir)
        except (ConfigError, SuiteError, ValueError):
            return None

    def _session_targets(self, store: Store) -> list[Target]:
        """Targets this session may call: the configured ones, or a recovery parent's."""
        if self.settings.recover is not None:
            plan = read_plan_file(self.settings.recover)
            return list(store.get_manifest(str(plan["parent_run_id"])).target_inventory().values())
        known = self.project.all_targets()
        # the models that fixture targets declared so far (in conftest.py files) call, once each
        used_ids = dict.fromkeys(i for t in declared_targets() for i in t.uses if i in known)
        used = [known[i] for i in used_ids]
        requested = self.settings.run.targets
        if requested:  # an id no configuration knows may be a fixture target (@target), known
            # only once the tests are collected; planning refuses a truly unknown one
            requested = [i for i in requested if i in known]
            if not requested:
                return [target.to_target() for target in used]
        # before collection the benchmarks of marked tests are unknown: every kind may be needed
        kinds = {"single", "mom", "retrieval"} if requested else self._kinds()
        selected = self.project.select_targets(requested, kinds=kinds)
        chosen = {target.id for target in selected}
        extra = [target for target in used if target.id not in chosen]
        return [target.to_target() for target in [*selected, *extra]]

    def _kinds(self) -> set[str]:
        """Target kinds the run may need, before its benchmarks are loaded: a profile run is
        chat only; a benchmark without a registered adapter may be a RAG or agent dataset."""
        kinds: set[str] = set() if self.settings.run.benchmarks else {"single", "mom"}
        for benchmark in self.settings.run.benchmarks or []:
            if benchmark in self.registry:
                kinds |= set(self.registry.get(benchmark).target_kinds)
            else:
                kinds |= {"single", "mom", "retrieval"}
        return kinds

    def _load_baseline(self, reference: str) -> RunSide:
        """Read the gate's baseline before anything runs, so a typo costs nothing."""
        from pytest_srbench.app.reports import RunNotFound, load_side  # the report model: big

        has_store = store_exists(self.settings.location)
        try:
            return load_side(reference, self.open() if has_store else None)
        except (RunNotFound, ComparisonError) as error:
            raise pytest.UsageError(f"pytest-srbench: --srbench-baseline: {error}") from None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.signals.restore()
        if self.store is not None:
            self.store.close()  # merges the WAL into the database when it is the last one
        if self.sim is not None:
            self.sim.stop()
            self.sim = None
        for server in self.managed:
            server.stop()
        self.managed.clear()
