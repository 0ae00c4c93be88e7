"""Collection, in each process that runs cells (a single process or an xdist worker): the
plan's cells become pytest items (shipped suites' cells, or the marked test functions'
parametrizations), the plan is frozen over the selected items and the run started
(``app/run_start.py``) or a recovery child adopted, and the process learns which cells it
dispatches (``Assignment``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _pytest.skipping import evaluate_skip_marks

from pytest_srbench.app.config import TargetConfig
from pytest_srbench.app.heap import long_lived
from pytest_srbench.app.lifecycle import claim_ownership
from pytest_srbench.app.planning import PlanDraft, build_draft
from pytest_srbench.app.recovery import RecoveryRequest, create_child, prepare_child, read_plan_file
from pytest_srbench.app.run_start import GateRequest, RunRequest, RunStart, start_run
from pytest_srbench.app.shards import ShardRefused
from pytest_srbench.core.errors import SrbenchError
from pytest_srbench.core.user_targets import declared_targets, target_record
from pytest_srbench.plugin.bench_tests import CELL_PARAM, cell_id, cell_of, marked_benchmark
from pytest_srbench.plugin.errors import about, usage_errors, usage_line
from pytest_srbench.plugin.items import OutcomeSource, SrbenchCell, SrbenchSuite
from pytest_srbench.plugin.roles import owns
from pytest_srbench.plugin.selection_notes import check_plan, note_deselected, refuse, say
from pytest_srbench.plugin.session import Assignment, SessionState
from pytest_srbench.transport.factory import make_transport


class Collector:
    """The collection hooks of a process that runs cells; fills ``state.draft``,
    ``state.manifest`` and the ``Assignment`` its ``Dispatcher`` reads."""

    def __init__(
        self,
        state: SessionState,
        assignment: Assignment,
        outcome: OutcomeSource,
        gate: Callable[[], GateRequest | None],
    ) -> None:
        """``outcome``: where a shipped cell's item reads its cell's outcome (the dispatcher);
        ``gate``: the CI gate to check the frozen plan against (a process that also reports
        the run loads its baseline; a worker's controller checks the gate at the end)."""
        self.state = state
        self.assignment = assignment
        self.outcome = outcome
        self.gate = gate
        self.recovery: RecoveryRequest | None = None
        self._test_cells: dict[str, list[tuple[str, str]]] = {}  # benchmark -> its cells

    # -- what pytest collects ------------------------------------------------------------
    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        if config.args_source != pytest.Config.ArgsSource.ARGS:
            return True
        return None

    @usage_errors
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """A test marked ``@pytest.mark.srbench("<benchmark>")`` gets one item per cell."""
        benchmark = marked_benchmark(metafunc.definition)
        if benchmark is None:
            return
        settings = self.state.settings
        chosen = settings.run.benchmarks
        if chosen and benchmark not in chosen and settings.recover is None:
            metafunc.parametrize(CELL_PARAM, [])  # skipped: --srbench-benchmark names others
            return
        cells = self._cells_of_benchmark(benchmark)
        metafunc.parametrize(
            CELL_PARAM, cells, ids=[cell_id(case, target) for case, target in cells]
        )

    def _cells_of_benchmark(self, benchmark: str) -> list[tuple[str, str]]:
        if self.state.settings.recover is not None:  # a recovery child: its reviewed plan's
            self._python_targets()
            manifest = self._recovery_request().manifest
            benchmarks = {case.id: case.benchmark for case in manifest.cases}
            cells = [key for key in manifest.planned_keys() if benchmarks[key[0]] == benchmark]
            self._test_cells[benchmark] = cells
            return cells
        if benchmark not in self._test_cells:
            # the session's plan (_plan_marked_tests) refuses a target no test can use
            draft = self._marked_draft([benchmark], drop_other_kinds=True)
            self._test_cells[benchmark] = draft.cells()
        return self._test_cells[benchmark]

    def _marked_draft(self, benchmarks: list[str], *, drop_other_kinds: bool = False) -> PlanDraft:
        """The plan draft of marked tests' ``benchmarks``, with the declared fixture targets."""
        state = self.state
        options = state.settings.run.model_copy(update={"benchmarks": benchmarks})
        return build_draft(
            state.project,
            options,
            state.registry,
            state.rootdir,
            self._python_targets(),
            self._python_uses(),
            drop_other_kinds=drop_other_kinds,
        )

    def _python_targets(self) -> list[TargetConfig]:
        """The declared fixture targets (fixed at the first marked test's plan)."""
        declared = self.assignment.user_targets
        if not declared:
            declared.update((t.id, t) for t in declared_targets())
        return [TargetConfig.model_validate(target_record(t)) for t in declared.values()]

    def _python_uses(self) -> dict[str, tuple[str, ...]]:
        """The models each declared fixture target calls through ``srbench_client``."""
        self._python_targets()
        return {t.id: t.uses for t in self.assignment.user_targets.values() if t.uses}

    @pytest.hookimpl(tryfirst=True)
    @usage_errors
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        with long_lived():  # the plan's cases and the cells' items
            self._modify_items(session, items)

    def _modify_items(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        """The plan's cells as items (or a recovery child's, or the marked tests' plan)."""
        state = self.state
        if state.settings.recover is not None:
            self._collect_recovery(session, items)
            return
        if self._test_cells:
            self._plan_marked_tests(items)
            return
        try:
            draft = build_draft(state.project, state.settings.run, state.registry, state.rootdir)
        except SrbenchError as error:
            refuse(state.config, usage_line(error))
            return  # an xdist worker: it collects nothing, the controller says why
        if check_plan(state.config, draft, state.project, state.settings.run.targets):
            return  # refused in an xdist worker: it collects nothing, the controller says why
        state.draft = draft
        items[:0] = self._cell_items(session, draft.cells())

    def _plan_marked_tests(self, items: list[pytest.Item]) -> None:
        """The plan of a session of marked test functions: their benchmarks, no shipped items."""
        if {t.id for t in declared_targets()} != set(self.assignment.user_targets):
            raise pytest.UsageError(
                "pytest-srbench: a target fixture was declared after the plan was made; declare "
                "@pytest_srbench.target fixtures in a conftest.py"
            )
        try:
            draft = self._marked_draft(sorted(self._test_cells))
        except SrbenchError as error:
            refuse(self.state.config, usage_line(error))
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
        self.state.draft = draft
        self.assignment.driven = True

    def _cell_items(
        self, session: pytest.Session, cells: list[tuple[str, str]]
    ) -> list[SrbenchCell]:
        """One pytest item per (case, target) cell, in the given order."""
        state = self.state
        suite = SrbenchSuite.from_parent(session, name="srbench", nodeid="srbench")
        if state.config.pluginmanager.has_plugin("timeout"):
            # pytest-timeout: a cell keeps its own deadlines (the plan's limits); a per-test
            # timeout would fail (or, by its thread method, end) the session while the cell
            # goes on in the engine
            suite.add_marker(pytest.mark.timeout(0))
        source = Path(state.project.source) if state.project.source else state.rootdir
        mark = pytest.mark.srbench
        outcome = self.outcome  # one bound method for every item
        items: list[SrbenchCell] = []
        location_path = None  # every cell reports the same file: its path is resolved once
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

    # -- a recovery child ----------------------------------------------------------------
    def _collect_recovery(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        """Items of a recovery child: exactly the cells its reviewed plan selected (the marked
        test functions' own items when its parent ran a benchmark written as tests)."""
        recovery = self._recovery_request()
        if self._test_cells:
            self.assignment.driven = True
            return
        items[:0] = self._cell_items(session, recovery.manifest.planned_keys())

    def _recovery_request(self) -> RecoveryRequest:
        """The reviewed recovery plan and its child's manifest (prepared once)."""
        if self.recovery is not None:
            return self.recovery
        settings = self.state.settings
        assert settings.recover is not None
        if not settings.run_key:
            raise pytest.UsageError(
                "pytest-srbench: --srbench-recover needs --srbench-run-key KEY (the idempotency key)"
            )
        store = self.state.open()
        with about("--srbench-recover"):
            plan = read_plan_file(settings.recover)
            parent = str(plan.get("parent_run_id"))
            manifest, _, _ = prepare_child(
                store,
                parent,
                plan,
                idempotency_key=settings.run_key,
                acknowledge_new_attempt=settings.acknowledge_new_attempt,
            )
        self.recovery = RecoveryRequest(plan=plan, parent=parent, manifest=manifest)
        return self.recovery

    def _create_recovery_child(self, selected: list[pytest.Item]) -> None:
        state = self.state
        assert self.recovery is not None and state.store is not None
        planned = {(c.case_id, c.target_id) for c in self.recovery.manifest.planned_cells()}
        if {cell_of(item) for item in selected} != planned:
            raise pytest.UsageError(
                "pytest-srbench: a recovery run executes exactly its plan's cells; edit "
                "selected_cells in the plan instead of deselecting items"
            )
        with about("--srbench-recover"):
            run, _ = create_child(
                state.store,
                self.recovery.parent,
                self.recovery.plan,
                idempotency_key=state.settings.run_key,
                acknowledge_new_attempt=state.settings.acknowledge_new_attempt,
                child_run_id=state.run_id,
            )
        state.manifest = state.store.get_manifest(run.id)
        if run.id != state.run_id:  # a child ``srbench recover`` created: run it if nobody does
            state.run_id = run.id
            state.view_only = not claim_ownership(state.store, run.id, state.owner)

    # -- the run -------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)  # before xdist and the terminal see the items (shards)
    @usage_errors
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        with long_lived():  # the frozen manifest
            self._finish_collection(session)

    def _finish_collection(self, session: pytest.Session) -> None:
        """Freeze the plan over the selected cells, start (or adopt) the run, assign cells."""
        state = self.state
        if (state.draft is None and self.recovery is None) or state.config.getoption("collectonly"):
            return
        # a marked test that a skip mark skips plans no cells (its items are reported skipped)
        selected = [
            item
            for item in session.items
            if cell_of(item) is not None
            and (isinstance(item, SrbenchCell) or evaluate_skip_marks(item) is None)
        ]
        if not selected:  # say why, never a bare "no tests ran"
            note_deselected(state.config, state.draft)
            return
        if self.recovery is not None:
            self._create_recovery_child(selected)
            self._assign(session, selected)
            return
        assert state.draft is not None
        settings = state.settings
        request = RunRequest(
            state.run_id, settings.run_key, state.owner, settings.shard, self.gate()
        )
        try:
            start = start_run(
                state.open(),
                state.draft,
                [pair for pair in map(cell_of, selected) if pair],  # the plan's own ids
                request,
                target_urls=state.target_urls,
                make_transport=lambda: make_transport(
                    settings.transport, connections=settings.concurrency
                ),
            )
        except ShardRefused as error:
            self._refuse_shard(session, usage_line(error))
            return
        state.manifest = start.manifest
        state.run_id = start.run.id
        state.view_only = start.view_only
        self.assignment.transport = start.transport
        if start.shard is not None:
            selected = self._keep_shard(session, start, selected)
        self._assign(session, selected)

    def _refuse_shard(self, session: pytest.Session, line: str) -> None:
        """A usage error (exit 4); an xdist worker hands the line to its controller and
        keeps none of the cells' items, so nothing runs and nothing is reported as run."""
        refuse(self.state.config, line)  # raises, except in an xdist worker
        self.state.view_only = True
        cells = [item for item in session.items if cell_of(item) is not None]
        if cells:
            session.items[:] = [item for item in session.items if cell_of(item) is None]
            self.state.config.hook.pytest_deselected(items=cells)

    def _keep_shard(
        self, session: pytest.Session, start: RunStart, selected: list[pytest.Item]
    ) -> list[pytest.Item]:
        """Deselect the items of every other shard's cells (and of this shard's own cells that
        already have results, when it is claimed again after its owner died); returns the
        selected items it keeps."""
        claim = start.shard
        assert claim is not None
        keep = set(claim.to_run)
        kept: list[pytest.Item] = []
        dropped: list[pytest.Item] = []
        for item in session.items:
            cell = cell_of(item)
            (kept if cell is None or cell in keep else dropped).append(item)
        if dropped:
            session.items[:] = kept
            self.state.config.hook.pytest_deselected(items=dropped)
        others = start.manifest.planned_count() - len(claim.share)
        line = (
            f"srbench: shard {claim.spec.label} of run {start.run.id} runs {len(claim.to_run)} "
            f"of {len(claim.share) + others} cells; {others} cells of other shards deselected"
        )
        if len(claim.share) > len(claim.to_run):
            line += (
                f", {len(claim.share) - len(claim.to_run)} of its own already have results "
                "(not sent again)"
            )
        say(self.state.config, line)
        return [item for item in selected if cell_of(item) in keep]

    def _assign(self, session: pytest.Session, selected: list[pytest.Item]) -> None:
        """The cells this process dispatches (its xdist share; none for a replacement)."""
        role = self.state.role
        if role.replacement:
            self.state.view_only = True
        index = {item.nodeid: position for position, item in enumerate(session.items)}
        owned = [item for item in selected if owns(index[item.nodeid], role.workers, role.slot)]
        assignment = self.assignment
        assignment.cells = [cell for cell in map(cell_of, owned) if cell is not None]
        if assignment.driven:
            assignment.bodies = [item for item in owned if isinstance(item, pytest.Function)]
