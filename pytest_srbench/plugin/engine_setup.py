"""The engine a process runs its cells on, made from the session's state: the HTTP clients
(one per target that must not reuse connections), the share of the run's budget, the limits
per target (a managed server's slots, shared between processes), where each target is reached,
the simulator's scripts for the cases, and this process recorded among the run's processes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pytest_srbench.app.planning import suite_search_path
from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.models import Target
from pytest_srbench.core.plan.budget import Budget
from pytest_srbench.datasets.suites import discover_suites
from pytest_srbench.engine.engine import Engine, EngineOptions
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.plugin.session import Assignment, SessionState, process_id
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.simulator.process import SimulatorStartError
from pytest_srbench.store.liveness import host_id
from pytest_srbench.store.writer import GroupCommitWriter
from pytest_srbench.transport.factory import transport_for_run


def make_engine(state: SessionState, assignment: Assignment) -> tuple[Engine, dict[str, Any]]:
    """The engine for this process's cells (not started) and the process's record in the run
    (registered, the run started)."""
    settings = state.settings
    manifest = state.manifest
    store = state.open()
    assert manifest is not None
    # made before the run was created (or first here: a recovery child), loading the HTTP
    # client (0.1 s) while the simulator, launched when the session started, may still be
    # starting (its address is waited for below); or, when the response cache may answer
    # every call, made by the first request that leaves
    targets = manifest.target_inventory()
    cached = state.cache_may_answer(targets.keys())
    transport = assignment.transport or transport_for_run(
        settings.transport, connections=settings.concurrency, cached=cached
    )
    assignment.transport = None  # the engine's from now on
    cases = {case.id: case for case in manifest.cases}
    work = [(cases[case_id], targets[target_id]) for case_id, target_id in assignment.cells]
    base_urls: Mapping[str, str]
    if state.sim is None and state.sim_deferred is not None:
        base_urls = SimulatorOnDemand(state, work, targets.values())
        # simulators reached at their own address learn the cases now; the session's own
        # when it starts
        register_scripts(state, work, dict(state.endpoints))
    else:
        base_urls = state.target_urls(targets.values())
        register_scripts(state, work, base_urls)
    role = state.role
    process = {
        "process_id": process_id(),
        "pid": os.getpid(),
        "host": host_id(),
        "role": role.kind,
        "slot": role.slot,
        "cells": len(work),
        "concurrency": settings.concurrency,
    }
    with store.transaction():
        store.register_process(state.run_id, process)
    store.start_queued_run(state.run_id)
    shards = settings.shard.count if settings.shard is not None else 1
    budget_share = manifest.limits.max_cost_usd / max(role.workers, 1) / shards
    runtime = RunRuntime(
        run_id=state.run_id,
        manifest=manifest,
        store=store,
        writer=GroupCommitWriter(store),  # bound to the engine loop
        transport=transport,
        adapters=state.registry,
        base_urls=base_urls,
        budget=Budget(cap_usd=budget_share),
        max_failures=state.config.getoption("maxfail") or None,
        cache=settings.cache,
        cache_repeats=settings.cache_repeats,
    )
    draft = state.draft
    if draft is not None:
        runtime.asset_roots = dict(draft.suite_paths)
    else:  # a recovery child: its parent's suites, found again (assets are hash-checked)
        found = discover_suites(suite_search_path(state.project, state.rootdir), manifest.profile)
        runtime.asset_roots = {b: Path(p) for b, p in found.items()}
    # (keyed by the configured target: its variants share its limit and its connections)
    per_target = {t.id: t.concurrency for t in state.project.targets if t.concurrency}
    for target_id, slots in state.managed_slots.items():  # no cell waits silently in a
        # server's queue (its idle timeout would run): each process sends its share
        per_target.setdefault(target_id, max(1, slots // max(role.workers, 1)))
    if draft is not None:
        runtime.target_transports = {
            t.id: transport_for_run(
                settings.transport,
                connections=settings.concurrency,
                keep_alive=False,
                cached=cached,
            )
            for t in draft.targets
            if not t.reuses_connections()
        }
    if store.cancellation_requested(state.run_id):  # SIGTERM / cancel during start-up
        runtime.stop("cancelled by request before dispatch", user=True)
    return Engine(runtime, EngineOptions(settings.concurrency, per_target)), process


class SimulatorOnDemand(Mapping[str, str]):
    """Where each target is reached, for a session whose simulator waits for the first call
    the response cache does not answer (``SessionState.cache_may_answer``): asking for a
    simulated target's address launches the simulator, waits until it listens and tells it
    the process's cases, once. The engine asks only when a request is about to leave."""

    def __init__(
        self, state: SessionState, work: list[tuple[Any, Target]], targets: Iterable[Target]
    ) -> None:
        self._state = state
        self._work = work
        self._urls = dict(state.endpoints)
        self._simulated = [t for t in targets if t.simulated and t.base_url is None]
        self._lock = threading.Lock()

    def _started(self) -> None:
        with self._lock:
            if not self._simulated:
                return
            try:
                urls = self._state.target_urls(self._simulated)
            except SimulatorStartError as error:
                raise CallFailure(f"the simulator did not start: {error}") from None
            register_scripts(self._state, self._work, urls)
            self._urls.update(urls)
            self._simulated = []

    def __getitem__(self, target_id: str) -> str:
        if target_id not in self._urls and any(t.id == target_id for t in self._simulated):
            self._started()
        return self._urls[target_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._urls)

    def __len__(self) -> int:
        return len(self._urls)


def register_scripts(
    state: SessionState, work: list[tuple[Any, Target]], base_urls: Mapping[str, str]
) -> None:
    """Tell each simulator that plays a part in the plan how to answer its cases."""
    manifest = state.manifest
    assert manifest is not None
    inventory = manifest.target_inventory()
    simulated = [t for t in inventory.values() if t.simulated]
    if not simulated:
        return  # no simulator plays a part in this plan
    options = manifest.benchmark_options
    by_url: dict[str, dict[str, Any]] = {}
    for case, target in work:
        # a python target's code may call any simulated model of the plan about its case;
        # a simulated judge or user plays its part of the case (a real subject's too)
        bound = [
            inventory[name]
            for name in (options.get(case.benchmark) or {}).values()
            if isinstance(name, str) and name in inventory
        ]
        for called in [*(simulated if target.kind == "python" else [target]), *bound]:
            url = (base_urls.get(called.id) or called.base_url) if called.simulated else None
            if url:
                by_url.setdefault(url, {})[case.id] = case
    for url, cases in by_url.items():
        admin = sim_client.admin_url_for(url)
        sim_client.register_models(admin, state.project.simulator.sim_models().values())
        sim_client.register_case_scripts(admin, cases.values(), state.registry)
