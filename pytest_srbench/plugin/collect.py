"""Collection: the cells of the plan become pytest items, the plan is frozen and the run
created (or a recovery child adopted), and each process learns which cells it dispatches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _pytest.skipping import evaluate_skip_marks

from pytest_srbench.app.config import ConfigError, TargetConfig
from pytest_srbench.app.lifecycle import claim_ownership
from pytest_srbench.app.planning import PlanDraft, build_draft
from pytest_srbench.app.recovery import RecoveryRequest, create_child, prepare_child, read_plan_file
from pytest_srbench.app.shards import ShardRefused, claim_shard
from pytest_srbench.core.compare.design import gate_design, plan_groups
from pytest_srbench.core.compare.runs import ComparisonError, check_plans, plan_side
from pytest_srbench.core.models import Manifest, Run
from pytest_srbench.core.offline.recovery import RecoveryError
from pytest_srbench.core.plan.build import release_case_text
from pytest_srbench.core.user_targets import declared_targets, target_record
from pytest_srbench.datasets.suites import SuiteError
from pytest_srbench.plugin.bench_tests import CELL_PARAM, cell_id, cell_of, marked_benchmark
from pytest_srbench.plugin.errors import usage_errors
from pytest_srbench.plugin.items import SrbenchCell, SrbenchSuite
from pytest_srbench.plugin.roles import owns
from pytest_srbench.plugin.selection_notes import check_plan, note_deselected, refuse, say
from pytest_srbench.plugin.state import PluginState, long_lived
from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.transport.factory import make_transport


class CollectPhase(PluginState):
    """The collection hooks."""

    # -- collection ----------------------------------------------------------------------
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            return True
        return None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """A test marked ``@pytest.mark.srbench("<benchmark>")`` gets one item per cell."""
        benchmark = marked_benchmark(metafunc.definition)
        if benchmark is None:
            return
        chosen = self.settings.run.benchmarks
        if chosen and benchmark not in chosen and self.settings.recover is None:
            metafunc.parametrize(CELL_PARAM, [])  # skipped: --srbench-benchmark names others
            return
        cells = self._cells_of_benchmark(benchmark)
        metafunc.parametrize(
            CELL_PARAM, cells, ids=[cell_id(case, target) for case, target in cells]
        )

    def _cells_of_benchmark(self, benchmark: str) -> list[tuple[str, str]]:
        if self.settings.recover is not None:  # a recovery child: its reviewed plan's cells
            self._python_targets()
            manifest = self._recovery_request().manifest
            benchmarks = {case.id: case.benchmark for case in manifest.cases}
            cells = [key for key in manifest.planned_keys() if benchmarks[key[0]] == benchmark]
            self._test_cells[benchmark] = cells
            return cells
        if benchmark not in self._test_cells:
            try:
                # the session's plan (_plan_marked_tests) refuses a target no test can use
                draft = self._marked_draft([benchmark], drop_other_kinds=True)
            except (ConfigError, SuiteError, ValueError) as error:
                raise pytest.UsageError(f"pytest-srbench: {error}") from None
            self._test_cells[benchmark] = draft.cells()
        return self._test_cells[benchmark]

    def _marked_draft(self, benchmarks: list[str], *, drop_other_kinds: bool = False) -> PlanDraft:
        """The plan draft of marked tests' ``benchmarks``, with the declared fixture targets."""
        options = self.settings.run.model_copy(update={"benchmarks": benchmarks})
        return build_draft(
            self.project,
            options,
            self.registry,
            self.rootdir,
            self._python_targets(),
            self._python_uses(),
            drop_other_kinds=drop_other_kinds,
        )

    def _python_targets(self) -> list[TargetConfig]:
        """The declared fixture targets (fixed at the first marked test's plan)."""
        if not self._user_targets:
            self._user_targets = {t.id: t for t in declared_targets()}
        return [TargetConfig.model_validate(target_record(t)) for t in self._user_targets.values()]

    def _python_uses(self) -> dict[str, tuple[str, ...]]:
        """The models each declared fixture target calls through ``srbench_client``."""
        self._python_targets()
        return {t.id: t.uses for t in self._user_targets.values() if t.uses}

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        with long_lived():  # the plan's cases and the cells' items
            self._modify_items(session, items)

    def _modify_items(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        """The plan's cells as items (or a recovery child's, or the marked tests' plan)."""
        if self.settings.recover is not None:
            self._collect_recovery(session, items)
            return
        if self._test_cells:
            self._plan_marked_tests(items)
            return
        try:
            draft = build_draft(self.project, self.settings.run, self.registry, self.rootdir)
        except (ConfigError, SuiteError, ValueError) as error:
            refuse(self.config, f"pytest-srbench: {error}")
            return  # an xdist worker: it collects nothing, the controller says why
        if check_plan(self.config, draft, self.project, self.settings.run.targets):
            return  # refused in an xdist worker: it collects nothing, the controller says why
        self.draft = draft
        items[:0] = self._cell_items(session, draft.cells())

    def _plan_marked_tests(self, items: list[pytest.Item]) -> None:
        """The plan of a session of marked test functions: their benchmarks, no shipped items."""
        if {t.id for t in declared_targets()} != set(self._user_targets):
            raise pytest.UsageError(
                "pytest-srbench: a target fixture was declared after the plan was made; declare "
                "@pytest_srbench.target fixtures in a conftest.py"
            )
        try:
            draft = self._marked_draft(sorted(self._test_cells))
        except (ConfigError, SuiteError, ValueError) as error:
            refuse(self.config, f"pytest-srbench: {error}")
            return
        planned = set(draft.cells())
        for benchmark, cells in self._test_cells.items():
            if not set(cells) <= planned:
                raise pytest.UsageError(
                    f"pytest-srbench: the cells of {benchmark} differ between its own plan and "
                    "the session's; report this as a bug"
                )
        keys = [cell_of(item) for item in items]
        if len([k for k in keys if k is not None]) != len({k for k in keys if k is not None}):
            raise pytest.UsageError(
                "pytest-srbench: two test functions are marked with the same benchmark; a cell "
                "is one test body (mark one function per benchmark)"
            )
        self.draft = draft
        self.driven = True

    def _cell_items(
        self, session: pytest.Session, cells: list[tuple[str, str]]
    ) -> list[SrbenchCell]:
        """One pytest item per (case, target) cell, in the given order."""
        suite = SrbenchSuite.from_parent(session, name="srbench", nodeid="srbench")
        if self.config.pluginmanager.has_plugin("timeout"):
            # pytest-timeout: a cell keeps its own deadlines (the plan's limits); a per-test
            # timeout would fail (or, by its thread method, end) the session while the cell
            # goes on in the engine
            suite.add_marker(pytest.mark.timeout(0))
        source = Path(self.project.source) if self.project.source else self.rootdir
        mark = pytest.mark.srbench
        items: list[SrbenchCell] = []
        location_path = None  # every cell reports the same file: its path is resolved once
        outcome = self.outcome  # one bound method for every item
        for case_id, target_id in cells:
            name = f"{case_id}[{target_id}]"
            item = SrbenchCell.from_parent(
                suite,
                name=name,
                nodeid=name,
                case_id=case_id,
                target_id=target_id,
                source=source,
                outcome=outcome,
                mark=mark,
                location_path=location_path,
            )
            location_path = location_path or item.location[0]
            items.append(item)
        # Report the suite's collection like any collector's, so the terminal's "collected N
        # items / M deselected / K selected" counts the cells.
        report = pytest.CollectReport(suite.nodeid, "passed", None, list(items))
        session.ihook.pytest_collectreport(report=report)
        return items

    def _collect_recovery(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        """Items of a recovery child: exactly the cells its reviewed plan selected (the marked
        test functions' own items when its parent ran a benchmark written as tests)."""
        recovery = self._recovery_request()
        if self._test_cells:
            self.driven = True
            return
        items[:0] = self._cell_items(session, recovery.manifest.planned_keys())

    def _recovery_request(self) -> RecoveryRequest:
        """The reviewed recovery plan and its child's manifest (prepared once)."""
        if self.recovery is not None:
            return self.recovery
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
        return self.recovery

    def _create_recovery_child(self, selected: list[pytest.Item]) -> None:
        assert self.recovery is not None and self.store is not None
        planned = {(c.case_id, c.target_id) for c in self.recovery.manifest.planned_cells()}
        if {cell_of(item) for item in selected} != planned:
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

    @pytest.hookimpl(tryfirst=True)  # before xdist and the terminal see the items (shards)
    @usage_errors
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        with long_lived():  # the frozen manifest
            self._finish_collection(session)

    def _finish_collection(self, session: pytest.Session) -> None:
        """Freeze the plan over the selected cells, create (or adopt) the run, assign cells."""
        if (
            not self.role.runs_cells
            or (self.draft is None and self.recovery is None)
            or self.config.getoption("collectonly")
        ):
            return
        # a marked test that a skip mark skips plans no cells (its items are reported skipped)
        selected = [
            item
            for item in session.items
            if cell_of(item) is not None
            and (isinstance(item, SrbenchCell) or evaluate_skip_marks(item) is None)
        ]
        if not selected:  # say why, never a bare "no tests ran"
            note_deselected(self.config, self.draft)
            return
        if self.recovery is not None:
            self._create_recovery_child(selected)
            self._assign(session, selected)
            return
        assert self.draft is not None
        cells = [pair for pair in map(cell_of, selected) if pair]  # the plan's own ids
        try:
            self.manifest = self.draft.freeze(cells)
        except ValueError as error:
            raise pytest.UsageError(f"pytest-srbench: {error}") from None
        if self.baseline is not None:
            from pytest_srbench.core.report.build import plan_identity  # only to gate a run

            try:
                check_plans(
                    self.baseline,
                    plan_side(self.run_id, plan_identity(self.manifest)),
                    self.settings.allow_mixed_sources,
                )
            except ComparisonError as error:
                raise pytest.UsageError(
                    f"pytest-srbench: the baseline {self.baseline.run_id} ({self.baseline.source}) "
                    f"cannot gate this run: {error}"
                ) from None
            self._check_gate_design(self.manifest)
        indexes = self._check_indexes(self.manifest)
        # the HTTP client loads (0.1 s) before the run is created: the run's wall time starts
        # when its cells can be sent
        self.transport = make_transport(
            self.settings.transport, connections=self.settings.concurrency
        )
        store = self.open()
        try:
            run, created = store.create_run(
                self.run_id, self.manifest, request_key=self.settings.run_key
            )
        except StoreError as error:
            if self.settings.shard is None:
                raise
            self._refuse_shard(
                session,
                f"pytest-srbench: shard {self.settings.shard.label}: {error}; every shard must "
                "freeze the same plan (the same options, configuration, suites and selection)",
            )
            return
        finally:
            release_case_text(self.manifest)  # the store has the plan's text (or never will)
        if created:
            self._capture_recipes(store, run.id, self.manifest)
            with store.transaction():
                for target_id, info in indexes.items():
                    store.save_snapshot(run.id, "index", target_id, info)
        if self.settings.shard is not None:
            try:
                selected = self._take_shard(session, run, selected)
            except ShardRefused as error:
                self._refuse_shard(session, f"pytest-srbench: {error}")
                return
        else:
            self._adopt(run)
        self._assign(session, selected)

    def _refuse_shard(self, session: pytest.Session, line: str) -> None:
        """A usage error (exit 4); an xdist worker hands the line to its controller and
        keeps none of the cells' items, so nothing runs and nothing is reported as run."""
        refuse(self.config, line)  # raises, except in an xdist worker
        self.view_only = True
        cells = [item for item in session.items if cell_of(item) is not None]
        if cells:
            session.items[:] = [item for item in session.items if cell_of(item) is None]
            self.config.hook.pytest_deselected(items=cells)

    def _take_shard(
        self, session: pytest.Session, run: Run, selected: list[pytest.Item]
    ) -> list[pytest.Item]:
        """Claim this invocation's shard of the run and deselect the items of every other
        shard's cells (and of its own cells that already have results, when its shard is
        claimed again after its owner died); returns the selected items it keeps."""
        spec = self.settings.shard
        assert spec is not None and self.store is not None and self.manifest is not None
        claim = claim_shard(self.store, run.id, spec, self.owner, self.manifest)
        self.run_id = run.id
        self.shard_claim = claim
        keep = set(claim.to_run)
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in session.items:
            cell = cell_of(item)
            (kept if cell is None or cell in keep else dropped).append(item)
        if dropped:
            session.items[:] = kept
            self.config.hook.pytest_deselected(items=dropped)
        others = self.manifest.planned_count() - len(claim.share)
        line = (
            f"srbench: shard {spec.label} of run {run.id} runs {len(claim.to_run)} of "
            f"{len(claim.share) + others} cells; {others} cells of other shards deselected"
        )
        if len(claim.share) > len(claim.to_run):
            line += (
                f", {len(claim.share) - len(claim.to_run)} of its own already have results "
                "(not sent again)"
            )
        say(self.config, line)
        return [item for item in selected if cell_of(item) in keep]

    def _check_gate_design(self, manifest: Manifest) -> None:
        """A gate that can never pass (or never fail) at this plan's size is refused before
        anything runs, naming the cases it would need."""
        from pytest_srbench.core.report.build import plan_identity

        settings = self.settings
        names, sizes, weights = plan_groups(plan_identity(manifest))
        design = gate_design(
            names,
            sizes,
            weights,
            mode=settings.gate,
            margin=settings.margin,
            scope=settings.gate_scope,
            interval=settings.gate_interval,
        )
        if not design["usable"]:
            raise pytest.UsageError(f"pytest-srbench: {design['problem']}")

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
        from pytest_srbench.app.index_check import check_indexes  # httpx: only for retrieval runs

        return check_indexes(manifest, self._target_urls(manifest))  # errors: usage_errors

    def _capture_recipes(self, store: Store, run_id: str, manifest: Manifest) -> None:
        """Router recipes are read once, by the process that created the run."""
        if not any(t.kind == "mom" and t.capture_recipe for t in manifest.targets):
            return
        from pytest_srbench.app.recipes import (
            capture_recipes,  # httpx: only when a recipe is wanted
        )

        snapshots = capture_recipes(manifest, self._target_urls(manifest))
        if snapshots:
            with store.transaction():
                for snapshot in snapshots:
                    store.save_recipe(run_id, snapshot)

    def _assign(self, session: pytest.Session, selected: list[pytest.Item]) -> None:
        """The cells this process dispatches (its xdist share; none for a replacement)."""
        if self.role.replacement:
            self.view_only = True
        index = {item.nodeid: position for position, item in enumerate(session.items)}
        owned = (
            [
                item
                for item in selected
                if owns(index[item.nodeid], self.role.workers, self.role.slot)
            ]
            if self.role.kind == "worker"
            else selected
        )
        self._owned = [cell for cell in map(cell_of, owned) if cell is not None]
        if self.driven:
            self._driven_items = [item for item in owned if isinstance(item, pytest.Function)]
            self._driven_position = {
                item.nodeid: position for position, item in enumerate(self._driven_items)
            }
