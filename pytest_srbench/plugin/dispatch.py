"""Dispatching, in each process that runs cells (a single process or an xdist worker): the
engine dispatches this process's cells on its own loop while pytest walks the items; a shipped
cell's item waits for its cell's outcome, a marked test's body runs as its cell on the engine
(``bench_tests``), ahead of its item when nothing it uses needs the item's own set-up.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Callable, Generator
from contextlib import nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, cast

import pytest

from pytest_srbench.app.heap import fewer_collections, freeze_heap, peak_rss_mb
from pytest_srbench.benchmarks.base import CellContext
from pytest_srbench.core.calls.failures import failure_reason
from pytest_srbench.core.models import TERMINAL_CELL_STATUSES, Case, Target, variant_of
from pytest_srbench.core.report.build import TARGET_SETUP_FAILED
from pytest_srbench.engine.engine import CellOutcome, Engine
from pytest_srbench.engine.slots import OutcomeSlot
from pytest_srbench.plugin.bench_tests import (
    AppHandle,
    BodyEnd,
    BridgedBody,
    CaseView,
    TargetHandle,
    TestBodyAdapter,
    async_fixtures,
    bind_handles,
    body_function,
    cell_of,
    early_arguments,
    run_by_anyio,
    run_by_pytest_asyncio,
    session_value,
    turn_reasons,
)
from pytest_srbench.plugin.cell_output import OutputRouting
from pytest_srbench.plugin.client import CURRENT, BodyCalls, BodyScope, SrbenchClient
from pytest_srbench.plugin.engine_setup import make_engine
from pytest_srbench.plugin.errors import usage_errors
from pytest_srbench.plugin.items import (
    CellNotGraded,
    junit_properties,
    outcome_summary,
    plugins_in_skipped_phases,
    require_graded,
    run_cell_protocol,
)
from pytest_srbench.plugin.session import Assignment, SessionState
from pytest_srbench.store.base import StoreError
from pytest_srbench.store.writer import retrying

if TYPE_CHECKING:
    from pytest_srbench.app.report_ahead import ReportAhead

AHEAD = 4  # queued bodies per worker slot (a few: memory stays bounded on a long run)
WAIT_TICK_S = 0.25  # how often a body waiting for its engine slot looks up (the engine's stop)
# The engine's entry for a cell whose outcome its item took: still "dispatched by this
# process", no longer holding the outcome (asked again, e.g. by a rerun, the store answers).
TAKEN: OutcomeSlot[CellOutcome] = OutcomeSlot.filled(
    CellOutcome("pending", None, "taken by its item")
)


class WaitingWork(Protocol):
    """What a process that also reports the run does while an item waits for its cell."""

    def report_ahead(self, *, start: bool) -> ReportAhead | None:
        """The report begun while the last cells run (``start``: begin it now if it may)."""

    def show_progress(self) -> None:
        """Draw the run's progress line when it is due."""

    def progress_due_in(self) -> float | None:
        """Seconds until the progress line is next due (None: no progress line is drawn)."""

    def clear_progress(self) -> None:
        """Erase a progress line drawn in place before pytest writes again."""


class Dispatcher:
    """The engine and the run-loop hooks of a process that runs cells."""

    def __init__(
        self, state: SessionState, assignment: Assignment, waiting: WaitingWork | None = None
    ) -> None:
        self.state = state
        self.assignment = assignment
        self.waiting = waiting
        self.engine: Engine | None = None
        self.client = SrbenchClient()  # srbench_client: calls of the running body's cell
        self.process_info: dict[str, Any] = {}
        config = state.config
        self.lean = not (
            config.getoption("usepdb", False)
            or config.getoption("trace", False)
            or config.getoption("srbench_full_protocol", False)
        )
        self._lean_parent: Any = None  # the parent whose set-up stays for the next item
        self._body_position: dict[str, int] = {}  # marked test items' node ids -> position
        self._ahead = 0  # the first of them not yet considered for an early start
        self._cases_by_id: dict[str, Case] = {}
        self._targets_by_id: dict[str, Target] = {}
        self._case_views: dict[str, CaseView] = {}
        # bodies that waited for their item's turn, and the fixtures that made them wait
        self._at_turn = 0
        self._waited_for: dict[str, dict[str, Any]] = {}
        # outcomes items took, by node id, until their call report carries them (kept here,
        # not on the item: one more attribute grows every item's dict by ~0.7 kB)
        self.taken_outcomes: dict[str, CellOutcome] = {}
        self._setup_failed: set[str] = set()  # targets whose fixture failed in set-up
        self.output = OutputRouting(config)  # each body's output to its own cell's item
        self.junit = bool(getattr(config.option, "xmlpath", None))  # --junitxml: properties

    # -- the engine ----------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    @usage_errors
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, Any, None]:
        if self.lean and plugins_in_skipped_phases(self.state.config.pluginmanager):
            self.lean = False  # another plugin hooks into the phases the lean protocol skips
        dispatching = self.state.manifest is not None and not self.state.view_only
        if dispatching:
            self._start_engine()
            self.output.install()
        freeze_heap()  # the plan and the items live to the end: no collection walks them again
        with fewer_collections() if dispatching else nullcontext():
            try:
                yield
            finally:
                try:
                    self._stop_engine(session)
                finally:
                    self.output.uninstall()

    def _start_engine(self) -> None:
        engine, self.process_info = make_engine(self.state, self.assignment)
        self.engine = engine
        self.state.stoppers.append(lambda reason: engine.cancel(reason, user=True))
        # each marked test's item submits its own cell (ahead of it when it can)
        self._body_position = {
            item.nodeid: position for position, item in enumerate(self.assignment.bodies)
        }
        engine.start([], keep_open=True)

    def _stop_engine(self, session: pytest.Session) -> None:
        engine = self.engine
        if engine is None:
            return
        engine.close()
        if session.shouldstop or session.shouldfail:
            engine.cancel(f"pytest stopped: {session.shouldstop or session.shouldfail}", user=False)
        elif not all(slot.done() for slot in engine.slots.values()):
            engine.cancel("pytest session ended before every cell finished", user=False)
        engine.join(timeout=60)
        runtime = engine.runtime
        writer = runtime.writer
        if writer.unwritten:
            self.state.store_failure = (
                f"{len(writer.unwritten)} journal write(s) of run {self.state.run_id} were never "
                f"stored ({writer.gave_up}); the responses they held are lost to the report"
            )
        try:
            retrying(lambda: self._record_end(engine))
        except StoreError as error:
            self.state.store_failure = self.state.store_failure or (
                f"the end of run {self.state.run_id} could not be recorded: {error}"
            )
        engine.slots.clear()  # no item runs after the loop: its entries (11 MB at 100,000
        # cells) are not kept through the report

    def _record_end(self, engine: Engine) -> None:
        """Record why dispatch stopped, and this process's figures."""
        runtime = engine.runtime
        store = self.state.open()
        run_id = self.state.run_id
        with store.transaction():
            if runtime.stop_reason:
                store.append_event(
                    run_id,
                    "dispatch_stopped",
                    {
                        "reason": runtime.stop_reason,
                        "user": runtime.user_cancelled,
                        "interrupted": runtime.interrupted,
                    },
                )
            store.register_process(
                run_id,
                {
                    **self.process_info,
                    "peak_rss_mb": peak_rss_mb(),
                    "finished": True,
                    "peak_in_flight": engine.peak_in_flight,
                    "cells_at_their_turn": self._at_turn,
                    "waited_for": self._waited_for,
                },
            )

    # -- the item protocol ---------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> bool | None:
        """A lean protocol for a marked test's item whose body already started ahead: capture,
        log capture and fixture set-up are skipped; every reporting hook still runs. Everything
        that body depends on is session-wide and set up, so the item's own set-up and tear-down
        would do nothing (the item before and the one after share its parent, so pytest's set-up
        stack is the same on both sides; the session's fixtures are torn down by a later
        item, and skip / xfail marks keep the ordinary protocol)."""
        if not self.lean:
            return None
        if self._runs_lean(item, nextitem):
            assert isinstance(item, pytest.Function)
            run_cell_protocol(item, lambda: self._call_marked(item))
            return True
        return None

    def _runs_lean(self, item: pytest.Item, nextitem: pytest.Item | None) -> bool:
        engine = self.engine
        cell = cell_of(item)
        return (
            engine is not None
            and cell is not None
            and cell in engine.slots  # started ahead: its fixtures are session-wide, set up
            and nextitem is not None
            and nextitem.parent is item.parent
            and self._lean_parent is item.parent
            and not any(item.iter_markers("skip"))
            and not any(item.iter_markers("skipif"))
            and not any(item.iter_markers("xfail"))
        )

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """Remember whose set-up stack stays in place for the next item (see above)."""
        self._lean_parent = nextitem.parent if nextitem is not None else None

    def _call_marked(self, item: pytest.Function) -> None:
        """The call phase of a marked test without pytest's set-up: its cell's outcome."""
        __tracebackhide__ = True
        cell = cell_of(item)
        assert cell is not None and self.engine is not None
        self._start_ahead(item)
        self._check_outcome(item, self.outcome(*cell))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """A body pytest-asyncio runs on the loop of its async fixtures is bridged before
        pytest-asyncio takes its function (at the start of ``runtest``)."""
        if (
            isinstance(item, pytest.Function)
            and run_by_pytest_asyncio(item)
            and self._runs_on_its_loop(item)
        ):
            self._install_bridge(item)

    def _runs_on_its_loop(self, item: pytest.Function) -> bool:
        """A marked async body whose fixtures include async ones runs on their loop, the one
        its test framework gives it; any other body runs on the engine's."""
        return (
            self.engine is not None
            and cell_of(item) is not None
            and inspect.iscoroutinefunction(body_function(item))
            and bool(async_fixtures(item))
        )

    def _install_bridge(self, item: pytest.Function) -> None:
        """The item's function becomes one that runs the body as its cell (``_run_bridged``),
        for its test framework to run on its loop."""
        function = body_function(item)
        dispatcher = self

        @functools.wraps(function)
        async def bridged(**arguments: Any) -> None:
            __tracebackhide__ = True
            await dispatcher._run_bridged(item, function, arguments)

        item.obj = bridged
        item.srbench_bridged = True  # type: ignore[attr-defined]

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem: pytest.Function) -> bool | None:
        """A marked test's body runs as its cell, on the engine (see ``bench_tests``); or on
        its test framework's loop, bridged, when its async fixtures live there."""
        __tracebackhide__ = True
        cell = cell_of(pyfuncitem)
        if cell is None or self.state.manifest is None:
            return None
        if getattr(pyfuncitem, "srbench_bridged", False):
            return None  # pytest-asyncio runs the bridged body
        if run_by_anyio(pyfuncitem) and (
            self._runs_on_its_loop(pyfuncitem)
            or pyfuncitem.funcargs.get("anyio_backend") not in ("asyncio", None)
        ):
            self._install_bridge(pyfuncitem)
            return None  # anyio runs the bridged body on its backend's loop
        engine = self.engine
        if engine is not None and not self.state.view_only:
            if cell not in engine.slots:  # not started ahead: it runs now, with its fixtures
                names = pyfuncitem._fixtureinfo.argnames
                self._note_turn(pyfuncitem)
                self._submit_body(pyfuncitem, cell, {n: pyfuncitem.funcargs[n] for n in names})
            self._start_ahead(pyfuncitem)
        # (without an engine, another process ran the cell or the run is only reported)
        self._check_outcome(pyfuncitem, self.outcome(*cell))
        return True

    def _check_outcome(self, item: pytest.Function, outcome: CellOutcome) -> None:
        """Keep the outcome for the report, with what its body wrote and, under --junitxml,
        the cell's properties; a cell that reached no grade fails the item: with the body's own
        exception when the body raised it (its traceback as pytest shows a test's), else with
        the cell's one-line reason."""
        __tracebackhide__ = True
        self.taken_outcomes[item.nodeid] = outcome
        if self.junit:
            cell = cell_of(item)
            assert cell is not None
            item.user_properties.extend(junit_properties(*cell, outcome))
        trace = outcome.trace
        if trace is not None:
            for key, text in trace.sections:
                item.add_report_section("call", key, text)
            if trace.exception is not None and outcome.status == "failed":
                raise trace.exception
        require_graded(outcome)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        failure = call.excinfo.value if call.excinfo is not None else None
        if call.when == "call" and isinstance(failure, CellNotGraded):  # one line: its reason
            report.longrepr = f"{item.nodeid} could not be graded — {failure}"

        if (
            call.when == "call"
            and (taken := self.taken_outcomes.pop(item.nodeid, None)) is not None
        ):
            cell = cell_of(item)
            assert cell is not None
            report.srbench = outcome_summary(*cell, taken)  # type: ignore[attr-defined]
            latency = (taken.result or {}).get("latency_s")
            if isinstance(latency, int | float):  # the cell's own time, not the item's wait
                report.duration = float(latency)
        return report

    # -- test bodies ---------------------------------------------------------------------
    def _submit_body(
        self, item: pytest.Function, cell: tuple[str, str], arguments: dict[str, Any]
    ) -> None:
        assert self.engine is not None
        self.engine.submit(*self._body(item, cell, arguments))

    def _body(
        self, item: pytest.Function, cell: tuple[str, str], arguments: dict[str, Any]
    ) -> tuple[Case, Target, TestBodyAdapter]:
        """A body as a cell of the engine: its case, its target and the adapter that runs it."""
        case = self._case(cell[0])
        grader = self.state.registry.get(case.benchmark)
        return case, self._target(cell[1]), TestBodyAdapter(body_function(item), arguments, grader)

    async def _run_bridged(
        self, item: pytest.Function, function: Callable[..., Any], arguments: dict[str, Any]
    ) -> None:
        """The body of a bridged item, on its test framework's loop: the engine starts its
        cell (its deadline, its calls, its grade), the body runs here with its calls sent to
        the engine's loop, then the item takes the cell's outcome."""
        __tracebackhide__ = True
        cell = cell_of(item)
        engine = self.engine
        assert cell is not None
        if engine is not None and not self.state.view_only and cell not in engine.slots:
            case, target = self._case(cell[0]), self._target(cell[1])
            self._note_turn(item)
            adapter = BridgedBody(self.state.registry.get(case.benchmark))
            slot = engine.submit(case, target, adapter)
            started = asyncio.wrap_future(adapter.started)
            while not started.done() and not slot.done():  # the engine's queue, or its stop
                await asyncio.wait({started}, timeout=WAIT_TICK_S)
            if started.done():
                await self._body_on_this_loop(adapter, started.result(), function, arguments)
            else:
                started.cancel()
            self._start_ahead(item)
        self._check_outcome(item, self.outcome(*cell))

    @staticmethod
    async def _body_on_this_loop(
        adapter: BridgedBody,
        started: tuple[CellContext, asyncio.AbstractEventLoop],
        function: Callable[..., Any],
        arguments: dict[str, Any],
    ) -> None:
        """Run the body with its cell bound; hand the engine how it ended. At the cell's
        deadline the engine cancels it here, and it ends without an answer."""
        ctx, engine_loop = started
        bind_handles(arguments, ctx, engine_loop)
        scope = BodyScope(cast(BodyCalls, ctx), engine_loop, protocol=adapter.grader)
        body_loop, task = asyncio.get_running_loop(), asyncio.current_task()
        assert task is not None

        def cancel_body() -> None:  # from the engine's thread
            body_loop.call_soon_threadsafe(task.cancel)

        adapter.cancel_body = cancel_body
        token = CURRENT.set(scope)
        try:
            returned = await function(**arguments)
        except asyncio.CancelledError as cancelled:
            if not adapter.abandoned:
                adapter.ended.set_result(BodyEnd(scope, error=cancelled))
                raise
            task.uncancel()  # the engine gave up on it: the cell's outcome says why
        except BaseException as error:
            adapter.ended.set_result(BodyEnd(scope, error=error))
        else:
            adapter.ended.set_result(BodyEnd(scope, returned=returned))
        finally:
            CURRENT.reset(token)

    def _note_turn(self, item: pytest.Function) -> None:
        """A body runs at its item's turn: when fixtures made it wait (not merely the first body
        of its test, which starts the others ahead), count it and them — the report states the
        effective concurrency and what limited it."""
        reasons = turn_reasons(item)
        if not reasons:
            return
        self._at_turn += 1
        for name, reason in reasons.items():
            seen = self._waited_for.setdefault(
                name, {"scope": reason.scope, "autouse": reason.autouse, "cells": 0}
            )
            seen["cells"] += 1

    def _case(self, case_id: str) -> Case:
        manifest = self.state.manifest
        assert manifest is not None
        if not self._cases_by_id:
            self._cases_by_id = {case.id: case for case in manifest.cases}
        return self._cases_by_id[case_id]

    def _target(self, target_id: str) -> Target:
        manifest = self.state.manifest
        assert manifest is not None
        if not self._targets_by_id:
            self._targets_by_id = manifest.target_inventory()
        return self._targets_by_id[target_id]

    def case_view(self, case_id: str) -> CaseView:
        """What a test body sees of a case (one object per case, shared by its cells)."""
        view = self._case_views.get(case_id)
        if view is None:
            case = self._case(case_id)
            hidden = self.state.registry.get(case.benchmark).reference_metadata
            view = self._case_views[case_id] = CaseView.of(case, hidden)
        return view

    def target_handle(self, target_id: str, app: Any = None) -> TargetHandle:
        """A fresh handle on a target for one cell's body (it is bound to that cell); ``app``
        is a ``python`` target's fixture value."""
        target = self._target(target_id)
        if target.kind == "python":
            return AppHandle(id=target.id, model=target.model, kind="python", app=app)
        return TargetHandle.of(target)

    def target_setup_failed(self, target_id: str, error: Exception) -> None:
        """Journal, once per target, why its cells are never dispatched: its fixture failed in
        set-up (the report's pending cells and its notes say so)."""
        if target_id in self._setup_failed or self.state.manifest is None or self.state.view_only:
            return
        self._setup_failed.add(target_id)
        said = next((line for line in str(error).splitlines() if line.strip()), "")
        reason = f"target fixture set-up failed: {type(error).__name__}" + (
            f": {said}" if said else ""
        )
        store = self.state.open()
        with store.transaction():
            store.append_event(
                self.state.run_id,
                TARGET_SETUP_FAILED,
                {"target_id": target_id, "reason": failure_reason(reason)},
            )

    def app_fixture(self, target_id: str) -> str | None:
        """The fixture whose value is ``python`` target ``target_id`` (None for a target that
        is a server: a model, a router, a retrieval service)."""
        if self._target(target_id).kind != "python":
            return None
        declared = self.assignment.user_targets.get(variant_of(target_id)[0])
        if declared is None:
            raise pytest.UsageError(
                f"pytest-srbench: target {target_id!r} is a python target of this run's plan, "
                "but no fixture declares it (@pytest_srbench.target in a conftest.py)"
            )
        return declared.fixture

    def _early_handle(self, item: pytest.Function, target_id: str) -> TargetHandle | None:
        """The target handle of an item's body before its set-up, or None when a ``python``
        target's fixture is not a session-wide value that is already set up."""
        fixture = self.app_fixture(target_id)
        if fixture is None:
            return self.target_handle(target_id)
        manager = item.session._fixturemanager
        ready, app = session_value(manager.getfixturedefs(fixture, item))
        return self.target_handle(target_id, app) if ready else None

    def _start_ahead(self, current: pytest.Function) -> None:
        """Queue the bodies of the items after ``current`` that need no per-item set-up (see
        ``early_arguments``), up to ``AHEAD`` × ``--srbench-concurrency`` unfinished: the
        engine's workers run ``--srbench-concurrency`` of them at once and take the next as
        soon as one ends, so a slow cell never leaves a worker idle until pytest reaches it.
        The window is refilled a concurrency's worth at a time, in one hand-over to the
        engine's loop (one wake-up, not one per cell)."""
        engine = self.engine
        assert engine is not None
        concurrency = self.state.settings.concurrency
        room = AHEAD * concurrency - engine.unfinished_submissions
        items = self.assignment.bodies
        position = max(self._ahead, self._body_position.get(current.nodeid, -1) + 1)
        if room < min(concurrency, len(items) - position):
            return  # (the window is full enough: pytest is still far behind its front)
        batch: list[tuple[Case, Target, TestBodyAdapter]] = []
        while room > 0 and position < len(items):
            item = items[position]
            position += 1
            cell = cell_of(item)
            if cell is None or cell in engine.slots:
                continue
            case_id, target_id = cell
            arguments = early_arguments(
                item,
                cell,
                functools.partial(self.case_view, case_id),  # made only when taken
                functools.partial(self._early_handle, item, target_id),
                self.client,
            )
            if arguments is not None:
                batch.append(self._body(item, cell, arguments))
                room -= 1
        self._ahead = position
        if batch:
            engine.submit_many(batch)

    # -- outcomes ------------------------------------------------------------------------
    def outcome(self, case_id: str, target_id: str) -> CellOutcome:
        """The cell's terminal outcome: from this process's engine, or from the store."""
        engine = self.engine
        key = (case_id, target_id)
        slot = engine.slots.get(key) if engine is not None else None
        if engine is not None and slot is not None and slot is not TAKEN:
            waiting = self.waiting
            ahead = waiting.report_ahead(start=not slot.done()) if waiting is not None else None
            try:
                while True:
                    if ahead is not None:  # the report's work, while this cell runs
                        while not slot.done() and ahead.step():
                            pass
                    # asleep until the outcome or the progress line is due: no polling (a
                    # wait stays interruptible by Ctrl-C and signals on POSIX)
                    due_in = waiting.progress_due_in() if waiting is not None else None
                    try:
                        outcome = slot.result(timeout=due_in)
                    except TimeoutError:
                        if waiting is not None:
                            waiting.show_progress()
                        continue
                    # the item keeps what it needs; the engine's entry stays (the cell was
                    # dispatched here) without holding the outcome for the rest of the run
                    engine.slots[key] = TAKEN
                    if ahead is not None and outcome.stored:
                        ahead.ended(key)
                    return _with_stop_reason(outcome, engine.runtime.stop_reason)
            except KeyboardInterrupt:
                self.state.interrupted = True
                reason = f"interrupted ({self.state.stop_signal or 'Ctrl-C'})"
                engine.cancel(reason, user=True)
                raise
            finally:
                if waiting is not None:
                    waiting.clear_progress()
        return self._stored_outcome(case_id, target_id)

    def _stored_outcome(self, case_id: str, target_id: str) -> CellOutcome:
        """A cell this process did not dispatch: what the store says of it."""
        store = self.state.open()
        for row in store.results(self.state.run_id):
            if (
                row["case_id"] == case_id
                and row["target_id"] == target_id
                and row["status"] in TERMINAL_CELL_STATUSES
            ):
                return CellOutcome(row["status"], row)
        return CellOutcome(
            "pending",
            None,
            "not dispatched by this process (its owner stopped or the run key reused another run)",
        )


def _with_stop_reason(outcome: CellOutcome, stop_reason: str | None) -> CellOutcome:
    """A cell cancelled because the run stopped says why the run stopped (under ``-x`` the
    first failure pytest shows is then the one that stopped the run, not a bare cancel)."""
    if outcome.status != "cancelled" or not stop_reason or outcome.reason:
        return outcome
    error = (outcome.result or {}).get("error") or "cancelled"
    return replace(outcome, reason=f"{error} — the run {stop_reason}")
