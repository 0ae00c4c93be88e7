"""The srbench session plugin: plans the run, turns cells into items, drives the engine in
worker / single processes, and finalises and reports the run in the controller / single."""

from __future__ import annotations

import concurrent.futures
import os
import resource
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Generator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from pytest_srbench import __version__
from pytest_srbench.benchmarks.registry import AdapterRegistry, default_registry
from pytest_srbench.childwatch import die_with_parent
from pytest_srbench.config import ConfigError, SrbenchConfig
from pytest_srbench.core.benchmark_errors import BenchmarkError
from pytest_srbench.core.budget import Budget
from pytest_srbench.core.compare import ComparisonError, RunSide, check_plans, plan_side
from pytest_srbench.core.gate import evaluate_gate
from pytest_srbench.core.models import Cell, Manifest, Run, Target
from pytest_srbench.core.recovery import RecoveryError
from pytest_srbench.core.report import plan_identity
from pytest_srbench.datasets.suites import SuiteError, discover_suites
from pytest_srbench.engine.engine import CellOutcome, Engine, EngineOptions
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.lifecycle import claim_ownership, open_swept_store, this_process
from pytest_srbench.planning import PlanDraft, PlanRequest, build_draft, suite_search_path
from pytest_srbench.plugin.finish import finalize_run, write_outputs, write_run_report
from pytest_srbench.plugin.items import SrbenchCell, SrbenchSuite, run_cell_protocol
from pytest_srbench.plugin.options import Settings
from pytest_srbench.plugin.progress import ProgressDisplay, read_status
from pytest_srbench.plugin.roles import Role
from pytest_srbench.plugin.selection_notes import check_plan, note_deselected, refuse
from pytest_srbench.plugin.signals import SignalHandlers, request_cancellation
from pytest_srbench.recovering import RecoveryRequest, create_child, prepare_child, read_plan_file
from pytest_srbench.render.compare import gate_markdown
from pytest_srbench.render.terminal import render_summary
from pytest_srbench.runs import RunNotFound, load_side
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.simulator.process import SimulatorProcess, start_simulator
from pytest_srbench.store.base import StoreError
from pytest_srbench.store.sqlite import SqliteStore, open_store
from pytest_srbench.store.writer import GroupCommitWriter
from pytest_srbench.transport.factory import make_transport

TERMINAL = frozenset({"completed", "failed", "cancelled", "sent_unknown"})


def new_run_id() -> str:
    return "run-" + uuid.uuid4().hex[:20]


def process_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def peak_rss_mb() -> float:
    """This process's peak resident set size (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


class SrbenchPlugin:
    """Registered (as ``srbench-session``) only when a srbench option activates the plugin."""

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
        self.store: SqliteStore | None = None
        self.run_id: str = ""
        self.sim: SimulatorProcess | None = None
        self.sim_url: str | None = None
        self.managed: list[Any] = []
        self.endpoints: dict[str, str] = {}
        self.draft: PlanDraft | None = None
        self.manifest: Manifest | None = None
        self.engine: Engine | None = None
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
        workerinput = getattr(config, "workerinput", None)
        if workerinput is not None:
            self.owner = dict(workerinput.get("srbench_owner") or self.owner)
            self.run_id = str(workerinput["srbench_run_id"])
            self.sim_url = workerinput.get("srbench_sim_url")
            self.endpoints = dict(workerinput.get("srbench_endpoints") or {})

    # -- shared helpers ------------------------------------------------------------------
    def open(self) -> SqliteStore:
        """The store; the controller (or single process) sweeps it for orphaned runs first."""
        if self.store is None:
            if self.role.kind == "worker":
                self.store = open_store(self.settings.store)
            else:
                self.store, self.swept = open_swept_store(self.settings.store)
        return self.store

    def _needs_simulator(self, targets: list[Target]) -> bool:
        return any(target.simulated and target.base_url is None for target in targets)

    # -- controller / single: set-up -----------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.signals.install(self._on_terminate)
        if self.role.kind == "worker":
            controller = self.owner  # a worker dies with its controller (even by SIGKILL)
            if controller.get("host") == socket.gethostname() and controller.get("pid"):
                die_with_parent(int(controller["pid"]))
            return
        terminal = self.config.pluginmanager.getplugin("terminalreporter")
        if terminal is not None:
            interactive = bool(terminal.isatty) and self.role.kind == "single"
            self.progress = ProgressDisplay(terminal, interactive=interactive)
        self.run_id = new_run_id()
        try:  # a read-only, locked or uncreatable store is one line, not a traceback
            store = self.open()
            with store.transaction():
                store.set_owner(self.run_id, self.owner)  # before the run row: never an orphan
        except StoreError as error:
            raise pytest.UsageError(f"pytest-srbench: {error}") from None
        if self.settings.baseline:
            self.baseline = self._load_baseline(self.settings.baseline)
        try:
            targets = self._session_targets(store)
        except (ConfigError, RecoveryError, StoreError) as error:
            raise pytest.UsageError(f"pytest-srbench: {error}") from None
        if self._needs_simulator(targets):
            log_dir = self.settings.store / "simulator"
            self.sim = start_simulator(
                list(self.project.simulator.sim_models().values()), log_dir=log_dir
            )
            self.sim_url = self.sim.base_url
        for target in targets:
            if target.managed == "llama-server" and target.base_url is None:
                from pytest_srbench.realparts.common import RealPartError
                from pytest_srbench.realparts.llama import start_llama_server

                try:
                    server = start_llama_server(
                        target.model, log_dir=self.settings.store / "servers"
                    )
                except RealPartError as error:
                    raise pytest.UsageError(
                        f"pytest-srbench: target {target.id!r}: {error}"
                    ) from None
                self.managed.append(server)
                self.endpoints[target.id] = server.base_url

    def _session_targets(self, store: SqliteStore) -> list[Target]:
        """Targets this session may call: the configured ones, or a recovery parent's."""
        if self.settings.recover is not None:
            plan = read_plan_file(self.settings.recover)
            return list(store.get_manifest(str(plan["parent_run_id"])).target_inventory().values())
        selected = self.project.select_targets(self.settings.targets, kinds=self._kinds())
        return [target.to_target() for target in selected]

    def _kinds(self) -> set[str]:
        """Target kinds the run may need, before its benchmarks are loaded: a profile run is
        chat only; a benchmark without a registered adapter may be a RAG or agent dataset."""
        kinds: set[str] = set() if self.settings.benchmarks else {"single", "mom"}
        for benchmark in self.settings.benchmarks or []:
            if benchmark in self.registry:
                kinds |= set(self.registry.get(benchmark).target_kinds)
            else:
                kinds |= {"single", "mom", "retrieval"}
        return kinds

    def _load_baseline(self, reference: str) -> RunSide:
        """Read the gate's baseline before anything runs, so a typo costs nothing."""
        has_store = (self.settings.store / "journal.sqlite3").exists()
        try:
            return load_side(reference, self.open() if has_store else None)
        except (RunNotFound, ComparisonError) as error:
            raise pytest.UsageError(f"pytest-srbench: --srbench-baseline: {error}") from None

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.signals.restore()
        if self.sim is not None:
            self.sim.stop()
            self.sim = None
        for server in self.managed:
            server.stop()
        self.managed.clear()

    # -- collection ----------------------------------------------------------------------
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            return True
        return None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self.settings.recover is not None:
            self._collect_recovery(session, items)
            return
        request = PlanRequest(
            profile=self.settings.profile,
            seed=self.settings.seed,
            benchmarks=self.settings.benchmarks,
            targets=self.settings.targets,
            limit=self.settings.limit,
            limits=self.settings.limits,
            repeats=self.settings.repeats,
            mode=self.settings.mode,
            preview_context=self.settings.preview_context,
            offline=self.settings.offline,
            name=self.settings.name,
            sampling=dict(self.settings.sampling or {}),
        )
        try:
            draft = build_draft(self.project, request, self.registry, self.rootdir)
        except (ConfigError, SuiteError, ValueError) as error:
            refuse(self.config, f"pytest-srbench: {error}")
            return  # an xdist worker: it collects nothing, the controller says why
        if check_plan(self.config, draft, self.project, self.settings.targets):
            return  # refused in an xdist worker: it collects nothing, the controller says why
        self.draft = draft
        items[:0] = self._cell_items(session, draft.cells())

    def _cell_items(
        self, session: pytest.Session, cells: list[tuple[str, str]]
    ) -> list[SrbenchCell]:
        """One pytest item per (case, target) cell, in the given order."""
        suite = SrbenchSuite.from_parent(session, name="srbench", nodeid="srbench")
        source = Path(self.project.source) if self.project.source else self.rootdir
        items = [
            SrbenchCell.from_parent(
                suite,
                name=f"{case_id}[{target_id}]",
                nodeid=f"{case_id}[{target_id}]",
                case_id=case_id,
                target_id=target_id,
                source=source,
                outcome=self.outcome,
            )
            for case_id, target_id in cells
        ]
        # Report the suite's collection like any collector's, so the terminal's "collected N
        # items / M deselected / K selected" counts the cells.
        report = pytest.CollectReport(suite.nodeid, "passed", None, list(items))
        session.ihook.pytest_collectreport(report=report)
        return items

    def _collect_recovery(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        """Items of a recovery child: exactly the cells its reviewed plan selected."""
        assert self.settings.recover is not None
        if not self.settings.run_key:
            raise pytest.UsageError(
                "pytest-srbench: --srbench-recover needs --srbench-run-key KEY (the idempotency key)"
            )
        store = self.open()
        try:
            plan = read_plan_file(self.settings.recover)
            parent = str(plan.get("parent_run_id"))
            manifest, _, _ = prepare_child(
                store,
                parent,
                plan,
                idempotency_key=self.settings.run_key,
                acknowledge_new_attempt=self.settings.acknowledge_new_attempt,
            )
        except (RecoveryError, StoreError) as error:
            raise pytest.UsageError(f"pytest-srbench: --srbench-recover: {error}") from None
        self.recovery = RecoveryRequest(plan=plan, parent=parent, manifest=manifest)
        items[:0] = self._cell_items(session, manifest.planned_keys())

    def _create_recovery_child(self, selected: list[SrbenchCell]) -> None:
        assert self.recovery is not None and self.store is not None
        planned = {(c.case_id, c.target_id) for c in self.recovery.manifest.planned_cells()}
        if {(item.case_id, item.target_id) for item in selected} != planned:
            raise pytest.UsageError(
                "pytest-srbench: a recovery run executes exactly its plan's cells; edit "
                "selected_cells in the plan instead of deselecting items"
            )
        try:
            run, _ = create_child(
                self.store,
                self.recovery.parent,
                self.recovery.plan,
                idempotency_key=self.settings.run_key,
                acknowledge_new_attempt=self.settings.acknowledge_new_attempt,
                child_run_id=self.run_id,
            )
        except (RecoveryError, StoreError) as error:
            raise pytest.UsageError(f"pytest-srbench: --srbench-recover: {error}") from None
        self.manifest = self.store.get_manifest(run.id)
        self._adopt(run)

    def _adopt(self, run: Run) -> None:
        """Run an existing run only when it is queued and nobody alive holds it (e.g. a
        recovery child created by ``srbench recover``); otherwise only report it."""
        assert self.store is not None
        if run.id != self.run_id:
            self.run_id = run.id
            self.view_only = not claim_ownership(self.store, run.id, self.owner)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if (
            not self.role.runs_cells
            or (self.draft is None and self.recovery is None)
            or self.config.getoption("collectonly")
        ):
            return
        selected = [item for item in session.items if isinstance(item, SrbenchCell)]
        if not selected:  # say why, never a bare "no tests ran"
            note_deselected(self.config, self.draft)
            return
        if self.recovery is not None:
            self._create_recovery_child(selected)
            self._assign(session, selected)
            return
        assert self.draft is not None
        cells = [Cell(case_id=item.case_id, target_id=item.target_id) for item in selected]
        try:
            self.manifest = self.draft.freeze(cells)
        except ValueError as error:
            raise pytest.UsageError(f"pytest-srbench: {error}") from None
        if self.baseline is not None:
            try:
                check_plans(self.baseline, plan_side(self.run_id, plan_identity(self.manifest)))
            except ComparisonError as error:
                raise pytest.UsageError(
                    f"pytest-srbench: the baseline {self.baseline.run_id} ({self.baseline.source}) "
                    f"cannot gate this run: {error}"
                ) from None
        indexes = self._check_indexes(self.manifest)
        store = self.open()
        try:
            run, created = store.create_run(
                self.run_id, self.manifest, request_key=self.settings.run_key
            )
        except StoreError as error:
            raise pytest.UsageError(f"pytest-srbench: {error}") from None
        if created:
            self._capture_recipes(store, run.id, self.manifest)
            with store.transaction():
                for target_id, info in indexes.items():
                    store.save_snapshot(run.id, "index", target_id, info)
        self._adopt(run)
        self._assign(session, selected)

    def _target_urls(self, manifest: Manifest) -> dict[str, str]:
        """Where each target is reached: managed endpoints, and the simulator for simulated ones."""
        base_urls = dict(self.endpoints)
        if self.sim_url:
            for target in manifest.targets:
                if target.simulated and target.base_url is None:
                    base_urls.setdefault(target.id, self.sim_url)
        return base_urls

    def _check_indexes(self, manifest: Manifest) -> dict[str, dict[str, Any]]:
        """Before any query: an unusable index is an environment problem, not bad retrieval."""
        if not any(target.kind == "retrieval" for target in manifest.targets):
            return {}
        from pytest_srbench.indexes import check_indexes  # httpx: only for retrieval runs

        try:
            return check_indexes(manifest, self._target_urls(manifest))
        except (BenchmarkError, ConfigError) as error:
            raise pytest.UsageError(f"pytest-srbench: {error}") from None

    def _capture_recipes(self, store: SqliteStore, run_id: str, manifest: Manifest) -> None:
        """Router recipes are read once, by the process that created the run."""
        if not any(t.kind == "mom" and t.capture_recipe for t in manifest.targets):
            return
        from pytest_srbench.recipes import capture_recipes  # httpx: only when a recipe is wanted

        snapshots = capture_recipes(manifest, self._target_urls(manifest))
        if snapshots:
            with store.transaction():
                for snapshot in snapshots:
                    store.save_recipe(run_id, snapshot)

    def _assign(self, session: pytest.Session, selected: list[SrbenchCell]) -> None:
        """The cells this process dispatches (its xdist share; none for a replacement)."""
        if self.role.replacement:
            self.view_only = True
        index = {item.nodeid: position for position, item in enumerate(session.items)}
        owned = (
            [item for item in selected if index[item.nodeid] % self.role.workers == self.role.slot]
            if self.role.kind == "worker"
            else selected
        )
        self._owned = [(item.case_id, item.target_id) for item in owned]

    # -- running -------------------------------------------------------------------------
    def _start_engine(self) -> None:
        assert self.manifest is not None and self.store is not None
        manifest = self.manifest
        targets = manifest.target_inventory()
        cases = {case.id: case for case in manifest.cases}
        work = [(cases[case_id], targets[target_id]) for case_id, target_id in self._owned]
        base_urls: dict[str, str] = dict(self.endpoints)
        for target in targets.values():
            if target.simulated and target.base_url is None:
                if not self.sim_url:
                    raise pytest.UsageError("pytest-srbench: the simulator is not running")
                base_urls[target.id] = self.sim_url
        self._register_scripts(work, base_urls)
        self.process_info = {
            "process_id": process_id(),
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "role": self.role.kind,
            "slot": self.role.slot,
            "cells": len(work),
            "concurrency": self.settings.concurrency,
        }
        with self.store.transaction():
            self.store.register_process(self.run_id, self.process_info)
        self.store.db.execute(
            "UPDATE runs SET status = 'running' WHERE id = ? AND status = 'queued'", (self.run_id,)
        )
        budget_share = manifest.limits.max_cost_usd / max(self.role.workers, 1)
        runtime = RunRuntime(
            run_id=self.run_id,
            manifest=manifest,
            store=self.store,
            writer=GroupCommitWriter(self.store),  # bound to the engine loop
            transport=make_transport(
                self.settings.transport, connections=self.settings.concurrency
            ),
            adapters=self.registry,
            base_urls=base_urls,
            budget=Budget(cap_usd=budget_share),
            max_failures=self.config.getoption("maxfail") or None,
        )
        if self.draft is not None:
            runtime.asset_roots = dict(self.draft.suite_paths)
        else:  # a recovery child: its parent's suites, found again (assets are hash-checked)
            found = discover_suites(suite_search_path(self.project, self.rootdir), manifest.profile)
            runtime.asset_roots = {b: Path(p) for b, p in found.items()}
        per_target = {t.id: t.concurrency for t in self.project.targets if t.concurrency}
        runtime.target_transports = (
            {
                t.id: make_transport(
                    self.settings.transport, connections=self.settings.concurrency, keep_alive=False
                )
                for t in self.draft.targets
                if not t.reuses_connections()
            }
            if self.draft is not None
            else {}
        )
        if self.store.cancellation_requested(self.run_id):  # SIGTERM / cancel during start-up
            runtime.stop("cancelled by request before dispatch", user=True)
        self.engine = Engine(runtime, EngineOptions(self.settings.concurrency, per_target))
        self.engine.start(work)

    def _register_scripts(self, work: list[tuple[Any, Target]], base_urls: dict[str, str]) -> None:
        by_url: dict[str, list[Any]] = {}
        for case, target in work:
            if target.simulated:
                url = base_urls.get(target.id) or target.base_url
                if url:
                    by_url.setdefault(url, []).append(case)
        for url, cases in by_url.items():
            admin = sim_client.admin_url_for(url)
            sim_client.register_models(admin, self.project.simulator.sim_models().values())
            sim_client.register_scripts(admin, sim_client.scripts_for(cases, self.registry))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, None]:
        if self.role.runs_cells and self.manifest is not None and not self.view_only:
            self._start_engine()
        try:
            yield
        finally:
            self._stop_engine(session)

    def _stop_engine(self, session: pytest.Session) -> None:
        engine = self.engine
        if engine is None:
            return
        if session.shouldstop or session.shouldfail:
            engine.cancel(f"pytest stopped: {session.shouldstop or session.shouldfail}", user=False)
        elif not all(future.done() for future in engine.futures.values()):
            engine.cancel("pytest session ended before every cell finished", user=False)
        engine.join(timeout=60)
        runtime = engine.runtime
        assert self.store is not None
        with self.store.transaction():
            if runtime.stop_reason:
                self.store.append_event(
                    self.run_id,
                    "dispatch_stopped",
                    {"reason": runtime.stop_reason, "user": runtime.user_cancelled},
                )
            self.store.register_process(
                self.run_id, {**self.process_info, "peak_rss_mb": peak_rss_mb(), "finished": True}
            )

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> bool | None:
        """A lean protocol for cell items: they have no fixtures, print and log nothing, so
        capture, log capture and fixture set-up are skipped; every reporting hook still runs."""
        if not isinstance(item, SrbenchCell) or not self.lean:
            return None
        run_cell_protocol(item)
        return True

    def outcome(self, case_id: str, target_id: str) -> CellOutcome:
        """The cell's terminal outcome: from this process's engine, or from the store."""
        engine = self.engine
        if engine is not None and (case_id, target_id) in engine.futures:
            future = engine.futures[(case_id, target_id)]
            try:
                while True:
                    try:
                        return _with_stop_reason(
                            future.result(timeout=0.25), engine.runtime.stop_reason
                        )
                    except concurrent.futures.TimeoutError:
                        self._show_progress()
            except KeyboardInterrupt:
                self.interrupted = True
                engine.cancel(f"interrupted ({self.stop_signal or 'Ctrl-C'})", user=True)
                raise
            finally:
                if self.progress is not None:
                    self.progress.clear()
        store = self.open()
        for row in store.results(self.run_id):
            if (
                row["case_id"] == case_id
                and row["target_id"] == target_id
                and row["status"] in TERMINAL
            ):
                return CellOutcome(row["status"], row)
        return CellOutcome(
            "pending",
            None,
            "not dispatched by this process (its owner stopped or the run key reused another run)",
        )

    def _show_progress(self) -> None:
        if self.progress is None or self.role.kind == "worker" or self.manifest is None:
            return
        if self.progress.due():
            planned = len(self.manifest.planned_cells())
            self.progress.show(read_status(self.open(), self.run_id, planned, self.started))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.role.kind == "controller" and self.progress is not None and self.progress.due():
            store = self.open()
            if store.get_run(self.run_id) is not None:
                planned = len(store.get_manifest(self.run_id).planned_cells())
                self.progress.show(read_status(store, self.run_id, planned, self.started))

    # -- reporting -----------------------------------------------------------------------
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "call" and isinstance(item, SrbenchCell):
            report.srbench = item.summary()  # type: ignore[attr-defined]
        return report

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        info = getattr(report, "srbench", None)
        if not info or report.when != "call" or not report.passed:
            return None
        if info.get("correct"):
            return "correct", ".", ("CORRECT", {"green": True})
        if info.get("routed_to") is not None or self.settings.mode == "preview":
            return "routed", "r", (f"ROUTED → {info.get('routed_to')}", {"cyan": True})
        why = info.get("quality_failure") or info.get("answer_status") or "wrong answer"
        return "wrong", "w", (f"WRONG ({why})" if why != "answered" else "WRONG", {"yellow": True})

    # -- SIGTERM -------------------------------------------------------------------------
    def _on_terminate(self, signum: int, frame: FrameType | None) -> None:
        """SIGTERM ends the run like Ctrl-C. A single process raises KeyboardInterrupt (the
        Ctrl-C path). Under xdist the signal usually reaches one process only (the controller,
        from ``timeout`` or Docker), so the run is cancelled through the store, as by
        ``srbench cancel``: every worker's engine stops within 0.5 s, the sessions end, the
        controller writes the report. A second signal interrupts at once."""
        name = signal.Signals(signum).name
        repeated = self.stop_signal is not None
        self.stop_signal = name
        self.interrupted = True
        if self._finishing:
            return  # the report is being written: let it finish
        if self.role.kind == "single" or repeated or not self.run_id:
            raise KeyboardInterrupt
        if self.engine is not None:
            self.engine.cancel(f"interrupted ({name})", user=True)
        threading.Thread(
            target=request_cancellation,
            args=(self.settings.store, self.run_id, self.settings.run_key, name),
            name="srbench-cancel",
            daemon=True,
        ).start()

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self._finishing = True
        if self.stop_signal is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        if not self.role.reports or not self.run_id:
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            self.interrupted = True
        store = self.open()
        if store.get_run(self.run_id) is None:
            return
        if self.role.kind == "controller":
            with store.transaction():
                store.register_process(
                    self.run_id,
                    {
                        "process_id": process_id(),
                        "pid": os.getpid(),
                        "role": "controller",
                        "peak_rss_mb": peak_rss_mb(),
                    },
                )
        workers = 1 if self.role.kind == "single" else _worker_count(self.config)
        runner = {
            "pytest_srbench": __version__,
            "python": sys.version.split()[0],
            "platform": sys.platform,
            "xdist_workers": workers,
            "concurrency_per_worker": self.settings.concurrency,
            "total_concurrency": workers * self.settings.concurrency,
            "transport": self.settings.transport,
        }
        try:
            self.report = finalize_run(
                store,
                self.run_id,
                runner=runner,
                interrupted=self.interrupted,
                workers_lost=self.workers_lost,
            )
        except (StoreError, ValueError) as error:
            self.report_error = f"pytest-srbench could not build the report: {error}"
            return
        if self.baseline is not None and self.report is not None:
            self._apply_gate(session, store)
        if self.report is not None:
            settings = self.settings
            self.output_problems = write_outputs(
                store, self.run_id, self.report, settings.json_path, settings.html_path
            )
            if self.output_problems and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.USAGE_ERROR  # the run itself is saved

    def _apply_gate(self, session: pytest.Session, store: SqliteStore) -> None:
        """Judge the run against the baseline; a failed gate fails the session (exit 1)."""
        assert self.baseline is not None and self.report is not None
        settings = self.settings
        self.gate = evaluate_gate(
            self.baseline,
            RunSide.from_report(self.report),
            mode=settings.gate,
            margin=settings.margin,
            interval=settings.gate_interval,
        )
        self.report["gate"] = self.gate
        write_run_report(store, self.run_id, self.report, None)  # the user's files: later
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(gate_markdown(self.gate, self.report))
        if not self.gate["passed"]:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(
        self, terminalreporter: Any, exitstatus: int, config: pytest.Config
    ) -> None:
        if not self.role.reports:
            return
        for run in self.swept:
            terminalreporter.write_line(
                f"srbench: run {run.id} was left running by a stopped process; marked "
                f"interrupted ({run.error})",
                yellow=True,
            )
        if self.stop_signal is not None:
            terminalreporter.write_line(
                f"srbench: {self.stop_signal} received; the run was cancelled as on Ctrl-C",
                yellow=True,
            )
        if self.report_error:
            terminalreporter.write_sep("=", "srbench report", red=True)
            terminalreporter.write_line(self.report_error)
            return
        if self.report is None:
            return
        terminalreporter.write_sep("=", "srbench report")
        for line in render_summary(self.report):
            terminalreporter.write_line(line)
        unwritten = "\n".join(self.output_problems)
        for label, path in (("JSON", self.settings.json_path), ("HTML", self.settings.html_path)):
            if path is not None and f"cannot write {path}:" not in unwritten:
                terminalreporter.write_line(f"{label} report: {path}")
        for problem in self.output_problems:
            terminalreporter.write_line(problem, red=True, bold=True)
        if self.gate is not None:
            passed = bool(self.gate["passed"])
            terminalreporter.write_line(self.gate["line"], green=passed, red=not passed, bold=True)


def _with_stop_reason(outcome: CellOutcome, stop_reason: str | None) -> CellOutcome:
    """A cell cancelled because the run stopped says why the run stopped (under ``-x`` the
    first failure pytest shows is then the one that stopped the run, not a bare cancel)."""
    if outcome.status != "cancelled" or not stop_reason or outcome.reason:
        return outcome
    error = (outcome.result or {}).get("error") or "cancelled"
    return CellOutcome(outcome.status, outcome.result, f"{error} — the run {stop_reason}")


def _worker_count(config: pytest.Config) -> int:
    value = getattr(config.option, "numprocesses", None)
    try:
        return max(1, int(value or 1))
    except (TypeError, ValueError):
        return 1
