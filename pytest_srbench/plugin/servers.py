"""The servers a session starts before it collects, in the process that reports the run: the
built-in simulator (for simulated targets, or a built-in simulated judge or user bound for real
ones) and managed llama-servers sized from the plan; and which targets the session may call.
"""

from __future__ import annotations

from typing import Any

from pytest_srbench.app.planning import PlanDraft, build_draft, builtin_auxiliary_needed
from pytest_srbench.app.recovery import read_plan_file
from pytest_srbench.core.errors import SrbenchError
from pytest_srbench.core.models import Target
from pytest_srbench.core.user_targets import declared_targets
from pytest_srbench.plugin.errors import usage_error
from pytest_srbench.plugin.session import SessionState
from pytest_srbench.simulator.process import launch_simulator
from pytest_srbench.store.base import Store


class SessionServers:
    """Starts the simulator and managed servers a session needs; stops them at its end."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.managed: list[Any] = []  # managed servers this session started

    def start(self, store: Store) -> None:
        state = self.state
        targets = self._session_targets(store)
        simulated = any(target.simulated and target.base_url is None for target in targets)
        if simulated or builtin_auxiliary_needed(
            state.project, state.settings.run.benchmarks or None
        ):
            models = list(state.project.simulator.sim_models().values())
            log_dir = state.settings.store / "simulator"
            if state.simulator_on_demand and state.cache_may_answer(t.id for t in targets):
                # the response cache may answer every call: started on the first miss
                state.sim_deferred = lambda: launch_simulator(models, log_dir=log_dir)
            else:  # waited for when its address is first needed
                state.sim = launch_simulator(models, log_dir=log_dir)
        managed = [t for t in targets if t.managed == "llama-server" and t.base_url is None]
        if managed:
            self._start_managed(managed)

    def stop(self) -> None:
        state = self.state
        if state.sim is not None:
            state.sim.stop()
            state.sim = None
        for server in self.managed:
            server.stop()
        self.managed.clear()

    def _start_managed(self, targets: list[Target]) -> None:
        """Start each managed llama-server sized from the plan (measured on a probe server
        first), or refuse the run before anything is sent, saying what to change."""
        from pytest_srbench.app.managed_servers import start_for_plan
        from pytest_srbench.managed.common import RealPartError

        state = self.state
        project, settings = state.project, state.settings
        draft = self._sizing_draft()
        limits = draft.limits if draft else project.frozen_limits(settings.run.limits)
        configured = project.all_targets()
        for target in targets:
            cases = None
            if draft is not None:
                ids = {case_id for case_id, target_id in draft.cells() if target_id == target.id}
                cases = [case for case in draft.cases if case.id in ids]
            params = {"max_tokens": limits.max_output_tokens, **project.sampling,
                      **settings.run.sampling, **target.request_params}  # fmt: skip
            config = configured.get(target.id)
            try:  # (a plan the server cannot serve is refused with its own reason)
                started = start_for_plan(
                    target.id, target.model, config.server if config else None, cases,
                    max_tokens=int(params["max_tokens"]), limits=limits,
                    concurrency=settings.concurrency, log_dir=settings.store / "servers",
                )  # fmt: skip
            except RealPartError as error:
                raise usage_error(error, f"target {target.id!r}") from None
            self.managed.append(started.server)
            state.endpoints[target.id] = started.server.base_url
            state.managed_slots[target.id] = started.size.slots
            terminal = state.config.pluginmanager.getplugin("terminalreporter")
            if terminal is not None:
                terminal.write_line(started.note(target.id))

    def _sizing_draft(self) -> PlanDraft | None:
        """The plan draft a profile run will freeze (None when it is known only after
        collection, for benchmarks written as tests or a recovery, or cannot be made: then
        collection says why)."""
        state = self.state
        if state.settings.recover is not None:
            return None
        try:
            return build_draft(state.project, state.settings.run, state.registry, state.rootdir)
        except SrbenchError:
            return None

    def _session_targets(self, store: Store) -> list[Target]:
        """Targets this session may call: the configured ones, or a recovery parent's."""
        state = self.state
        settings, project = state.settings, state.project
        if settings.recover is not None:
            plan = read_plan_file(settings.recover)
            return list(store.get_manifest(str(plan["parent_run_id"])).target_inventory().values())
        known = project.all_targets()
        # the models that fixture targets declared so far (in conftest.py files) call, once each
        used_ids = dict.fromkeys(i for t in declared_targets() for i in t.uses if i in known)
        used = [known[i] for i in used_ids]
        requested = settings.run.targets
        if requested:  # an id no configuration knows may be a fixture target (@target), known
            # only once the tests are collected; planning refuses a truly unknown one
            requested = [i for i in requested if i in known]
            if not requested:
                return [target.to_target() for target in used]
        # before collection the benchmarks of marked tests are unknown: every kind may be needed
        kinds = {"single", "mom", "retrieval"} if requested else self._kinds()
        selected = project.select_targets(requested, kinds=kinds)
        chosen = {target.id for target in selected}
        extra = [target for target in used if target.id not in chosen]
        return [target.to_target() for target in [*selected, *extra]]

    def _kinds(self) -> set[str]:
        """Target kinds the run may need, before its benchmarks are loaded: a profile run is
        chat only; a benchmark without a registered adapter may be a RAG or agent dataset."""
        benchmarks = self.state.settings.run.benchmarks
        registry = self.state.registry
        kinds: set[str] = set() if benchmarks else {"single", "mom"}
        for benchmark in benchmarks or []:
            if benchmark in registry:
                kinds |= set(registry.get(benchmark).target_kinds)
            else:
                kinds |= {"single", "mom", "retrieval"}
        return kinds
