"""Collection, in each process that runs cells (a single process or an xdist worker). pytest
collects what it would without the plugin; marked test functions are parametrized by their
benchmark's cells, and the built-in suites' module (``srbench_suites.py``) joins the session
when it asks for a benchmark no collected test answers or collected no marked test. The plan
is frozen over the selected items and the run started (``app/run_start.py``) or a recovery
child adopted, and the process learns which cells it dispatches (``Assignment``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection

import pytest
from _pytest.skipping import evaluate_skip_marks

from pytest_srbench.app.config import TargetConfig
from pytest_srbench.app.heap import long_lived
from pytest_srbench.app.lifecycle import claim_ownership
from pytest_srbench.app.planning import PlanDraft, build_draft, plan_adapters
from pytest_srbench.app.recovery import RecoveryRequest, create_child, prepare_child, read_plan_file
from pytest_srbench.app.run_start import GateRequest, RunRequest, RunStart, start_run
from pytest_srbench.app.shards import ShardRefused
from pytest_srbench.core.errors import SrbenchError
from pytest_srbench.core.models import TERMINAL_RUN_STATUSES, variant_of
from pytest_srbench.core.user_targets import declared_targets, target_record
from pytest_srbench.plugin.bench_tests import (
    CELL_PARAM,
    SUITES,
    cell_id,
    cell_of,
    check_body_answer,
    item_benchmark,
    marked_benchmark,
)
from pytest_srbench.plugin.errors import about, usage_errors, usage_line
from pytest_srbench.plugin.items import CellCompactor, SuitesModule
from pytest_srbench.plugin.options import HELD_ELSEWHERE_EXIT
from pytest_srbench.plugin.roles import owns
from pytest_srbench.plugin.selection_notes import check_plan, note_deselected, refuse, say
from pytest_srbench.plugin.session import Assignment, SessionState
from pytest_srbench.plugin.variants import assign_variants
from pytest_srbench.transport.factory import transport_for_run


class Collector:
    """The collection hooks of a process that runs cells; fills ``state.draft``,
    ``state.manifest`` and the ``Assignment`` its ``Dispatcher`` reads."""

    def __init__(
        self,
        state: SessionState,
        assignment: Assignment,
        gate: Callable[[], GateRequest | None],
    ) -> None:
        """``gate``: the CI gate to check the frozen plan against (a process that also reports
        the run loads its baseline; a worker's controller checks the gate at the end)."""
        self.state = state
        self.assignment = assignment
        self.gate = gate
        self.recovery: RecoveryRequest | None = None
        self._test_cells: dict[str, list[tuple[str, str]]] = {}  # marked benchmark -> cells
        self._compact = CellCompactor()  # cells let go of what they do not need, as collected
        self._suite_benchmarks: list[str] | None = None  # the built-in module's, when it runs
        self._suite_cells: list[tuple[str, str]] = []
        self._suite_draft: PlanDraft | None = None
        # pytest-timeout: a cell keeps its own deadlines (the plan's limits); a per-test
        # timeout would fail (or, by its thread method, end) the session while the cell goes
        # on in the engine, so cells are marked timeout(0)
        timeouts = state.config.pluginmanager.has_plugin("timeout")
        self._no_timeout = pytest.mark.timeout(0) if timeouts else None  # (a known mark then)

    # -- what pytest collects ------------------------------------------------------------
    # pytest collects what it would without the plugin (arguments, testpaths, conftest files);
    # the built-in suites' module joins it (``pytest_collection_modifyitems``) when asked for.

    @usage_errors
    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """A test marked ``@pytest.mark.srbench("<benchmark>")`` gets one item per cell (the
        built-in suites' test, marked ``"*"``, one per cell of the session's suites)."""
        benchmark = marked_benchmark(metafunc.definition)
        if benchmark is None:
            return
        settings = self.state.settings
        chosen = settings.run.benchmarks
        if benchmark == SUITES:
            cells = self._suite_cells
        elif chosen and benchmark not in chosen and settings.recover is None:
            reason = f"srbench: --srbench-benchmark names {', '.join(chosen)}, not {benchmark}"
            skipped = pytest.param(None, marks=pytest.mark.skip(reason=reason), id="not-selected")
            metafunc.parametrize(CELL_PARAM, [skipped])  # one skipped item, no cell
            return
        else:
            registry = self.state.registry
            if benchmark in registry:  # (RAG and agent datasets: their kinds grade answers)
                check_body_answer(
                    metafunc.definition, registry.get(benchmark), metafunc.fixturenames
                )
            cells = self._cells_of_benchmark(benchmark)
        metafunc.parametrize(
            CELL_PARAM, cells, ids=[cell_id(case, target) for case, target in cells]
        )

    def _cells_of_benchmark(self, benchmark: str) -> list[tuple[str, str]]:
        if self.state.settings.recover is not None:  # a recovery child: its reviewed plan's
            self._python_targets()
            # (a variant's cell is parametrized by its target's: the variants are assigned as
            # in any session, then the cells the plan does not name are deselected)
            cells = list(
                dict.fromkeys(
                    (case, variant_of(target)[0])
                    for case, target in self._recovery_cells([benchmark])
                )
            )
            self._test_cells[benchmark] = cells
            return cells
        if benchmark not in self._test_cells:
            # the session's plan (_plan_session) refuses a target no test can use
            draft = self._draft([benchmark], drop_other_kinds=True)
            self._test_cells[benchmark] = draft.cells()
        return self._test_cells[benchmark]

    def _recovery_cells(self, benchmarks: Collection[str]) -> list[tuple[str, str]]:
        """The recovery plan's cells of ``benchmarks``."""
        manifest = self._recovery_request().manifest
        of = {case.id: case.benchmark for case in manifest.cases}
        return [key for key in manifest.planned_keys() if of[key[0]] in benchmarks]

    def _draft(
        self,
        benchmarks: list[str],
        *,
        suites: Collection[str] = (),
        drop_other_kinds: bool = False,
    ) -> PlanDraft:
        """The plan draft of ``benchmarks`` (an empty list: the profile's sr-bench suites)
        with the declared fixture targets, which may answer every benchmark but ``suites`` (a
        suite's own protocol cannot call your code)."""
        state = self.state
        options = state.settings.run.model_copy(update={"benchmarks": benchmarks or None})
        python = self._python_targets()
        requested = set(options.targets or ())
        if set(benchmarks) <= set(suites) and not requested & {t.id for t in python}:
            python = []  # a session of suites only: fixture targets play no part
        return build_draft(
            state.project,
            options,
            state.registry,
            state.rootdir,
            python,
            self._python_uses() if python else None,
            drop_other_kinds=drop_other_kinds,
            python_benchmarks=[b for b in benchmarks if b not in suites],
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

    @pytest.hookimpl(tryfirst=True)  # before -k / -m deselect: the built-in suites join first
    @usage_errors
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        with long_lived():  # the plan's cases and the cells' items
            answered = {b for b in map(item_benchmark, items) if b is not None}
            wanted = self._suites_wanted(answered)
            if wanted is not None and self._plan_suites(wanted, answered):
                suites = SuitesModule.for_session(session)
                if self._no_timeout is not None:
                    suites.add_marker(self._no_timeout)
                items[:0] = session.genitems(suites)
            self._plan_session(items)
            if self._no_timeout is not None:
                for item in items:
                    if item_benchmark(item) is not None:
                        item.add_marker(self._no_timeout)

    def _suites_wanted(self, answered: set[str]) -> list[str] | None:
        """The benchmarks the built-in suites' module runs (an empty list: the profile's
        sr-bench suites), or None when the session does without it: it joins when the session
        names a benchmark no collected test answers, when srbench was asked for on the command
        line and no marked test was collected, or always with ``[tool.srbench] run_suites =
        "always"`` (never with ``"never"``)."""
        settings, project = self.state.settings, self.state.project
        if settings.recover is not None:
            wanted = {case.benchmark for case in self._recovery_request().manifest.cases}
            return sorted(wanted - answered) or None
        if project.run_suites == "never":
            if not answered and settings.on_command_line:
                say(self.state.config, 'srbench: run_suites = "never" and no benchmark test was '
                    "collected: nothing to benchmark")  # fmt: skip
            return None
        chosen = settings.run.benchmarks
        if chosen:
            return [b for b in chosen if b not in answered] or None
        if project.run_suites == "always":
            return []
        if answered or not settings.on_command_line:  # (a plain pytest of the project's tests
            return None  # never runs the suites because its profile is configured)
        return []

    def _plan_suites(self, benchmarks: list[str], answered: set[str]) -> bool:
        """The cells of the built-in suites' module, none of a benchmark a collected test
        answers: False (and none) when there is none, or when the plan is refused in an xdist
        worker (its controller says why)."""
        state = self.state
        if state.settings.recover is not None:
            self._suite_cells = self._recovery_cells(benchmarks)
            self._suite_benchmarks = benchmarks
            return True
        try:
            draft = self._draft(benchmarks, suites=benchmarks)
            shared = {case.benchmark for case in draft.cases} & answered
            if shared:  # the profile's suites beside the project's own tests of some of them
                rest = sorted({case.benchmark for case in draft.cases} - answered)
                if not rest:
                    return False
                draft = self._draft(rest, suites=rest)
        except SrbenchError as error:
            refuse(state.config, usage_line(error))
            return False  # an xdist worker: it collects nothing, the controller says why
        if check_plan(state.config, draft, state.project, state.settings.run.targets):
            return False  # refused in an xdist worker: the controller says why
        self._suite_draft = draft
        self._suite_cells = draft.cells()
        self._suite_benchmarks = sorted({case.benchmark for case in draft.cases})
        return True

    def _plan_session(self, items: list[pytest.Item]) -> None:
        """The session's plan: the marked tests' benchmarks (with the fixture targets) and the
        built-in suites' benchmarks, one draft; refused when nothing can run. A recovery
        child's plan is its reviewed one: its marked tests' items beyond it are deselected."""
        if self.state.settings.recover is not None:
            assign_variants(items)
            planned = set(self._recovery_request().manifest.planned_keys())
            extra = [
                item
                for item in items
                if (cell := cell_of(item)) is not None and cell not in planned
            ]
            if extra:
                dropped = set(extra)
                items[:] = [item for item in items if item not in dropped]
                self.state.config.hook.pytest_deselected(items=extra)
            return
        if {t.id for t in declared_targets()} != set(self.assignment.user_targets):
            raise pytest.UsageError(
                "pytest-srbench: a target fixture was declared after the plan was made; declare "
                "@pytest_srbench.target fixtures in a conftest.py"
            )
        suites = self._suite_benchmarks or []
        benchmarks = sorted({*self._test_cells, *suites})
        if not benchmarks:
            return  # no marked test and no suite: an ordinary pytest session
        if not self._test_cells and self._suite_draft is not None:
            self.state.draft = self._suite_draft  # the suites alone: their plan is the session's
            return
        try:
            draft = self._draft(benchmarks, suites=suites)
        except SrbenchError as error:
            refuse(self.state.config, usage_line(error))
            return
        draft.variants = assign_variants(items)
        planned = set(draft.cells())
        stray = [
            item for item in items if (cell := cell_of(item)) is not None and cell not in planned
        ]
        if stray:
            raise pytest.UsageError(
                f"pytest-srbench: {stray[0].nodeid}'s cell is not in the session's plan; report "
                "this as a bug"
            )
        self.state.draft = draft

    # -- a recovery child ----------------------------------------------------------------
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
        # benchmarks defined in Python or datasets: their adapters, as planning registers them
        plan_adapters(state.manifest, state.project, state.registry, state.rootdir)
        if run.id != state.run_id:  # a child ``srbench recover`` created: run it if nobody does
            state.run_id = run.id
            state.view_only = not claim_ownership(state.store, run.id, state.owner)

    # -- the run -------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)  # before xdist and the terminal see the items (shards)
    @usage_errors
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        with long_lived():  # the frozen manifest
            self._finish_collection(session)

    @pytest.hookimpl(trylast=True)
    def pytest_itemcollected(self, item: pytest.Item) -> None:
        """A cell's item lets go of what it does not need as soon as it is collected (not at
        collection's end, when every cell's item exists at once: the session's peak)."""
        if cell_of(item) is not None:
            self._compact(item)

    def _finish_collection(self, session: pytest.Session) -> None:
        """Freeze the plan over the selected cells, start (or adopt) the run, assign cells."""
        state = self.state
        if (state.draft is None and self.recovery is None) or state.config.getoption("collectonly"):
            return
        # a marked test that a skip mark skips plans no cells (its items are reported skipped)
        selected = [
            item
            for item in session.items
            if cell_of(item) is not None and evaluate_skip_marks(item) is None
        ]
        if not selected:  # say why, never a bare "no tests ran"
            note_deselected(state.config, state.draft)
            return
        if self.recovery is not None:
            self._create_recovery_child(selected)
            self._assign(session, selected)
            return
        draft = state.draft
        assert draft is not None
        settings = state.settings
        request = RunRequest(
            state.run_id, settings.run_key, state.owner, settings.shard, self.gate()
        )
        try:
            start = start_run(
                state.open(),
                draft,
                [pair for pair in map(cell_of, selected) if pair],  # the plan's own ids
                request,
                target_urls=state.target_urls,
                make_transport=lambda: transport_for_run(
                    settings.transport,
                    connections=settings.concurrency,
                    cached=state.cache_may_answer(t.id for t in draft.targets),
                ),
            )
        except ShardRefused as error:
            self._refuse_shard(session, usage_line(error))
            return
        state.manifest = start.manifest
        state.run_id = start.run.id
        state.view_only = start.view_only
        state.reused_run = (
            not start.created
            and start.shard is None
            and start.run.id != request.run_id
            and start.run.status in TERMINAL_RUN_STATUSES
        )
        self.assignment.transport = start.transport
        if start.view_only and start.shard is None and not self._wait_for_owner(session):
            return
        if start.shard is not None:
            selected = self._keep_shard(session, start, selected)
        self._assign(session, selected)

    def _wait_for_owner(self, session: pytest.Session) -> bool:
        """The run of this key is being executed by another live process: wait for it to end
        (``--srbench-wait-s``) so that this process reports the run as its owner does. False
        when it did not end in time: the cells' items are deselected and the session ends
        with one line and status 75 (``held_line``)."""
        state = self.state
        settings = state.settings
        store = state.open()
        run_id = state.run_id
        deadline = time.monotonic() + settings.wait_s
        said = False
        while True:
            run = store.get_run(run_id)
            if run is None or run.status not in ("queued", "running"):
                return True
            owner = store.owner(run_id)
            if owner is None or store.owner_alive(owner) is False:
                return True
            if time.monotonic() >= deadline:
                break
            if not said:
                say(
                    state.config,
                    f"srbench: run {run_id} (run key {settings.run_key!r}) is being executed by "
                    f"another process; waiting up to {settings.wait_s:g} s for it to end "
                    "(--srbench-wait-s)",
                )
                said = True
            time.sleep(min(0.5, max(0.0, deadline - time.monotonic())))
        state.held_line = (
            f"srbench: run {run_id} (run key {settings.run_key!r}) is held by another live "
            f"process ({owner.get('host')}, pid {owner.get('pid')}) and did not end within "
            f"{settings.wait_s:g} s (--srbench-wait-s); nothing was changed (exit status "
            f"{HELD_ELSEWHERE_EXIT})"
        )
        cells = [item for item in session.items if cell_of(item) is not None]
        if cells:
            session.items[:] = [item for item in session.items if cell_of(item) is None]
            state.config.hook.pytest_deselected(items=cells)
        return False

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
        assignment.bodies = [item for item in owned if isinstance(item, pytest.Function)]
