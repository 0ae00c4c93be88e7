"""The process that reports the run (a single process, or the xdist controller): it sets the
session up before collection (the run's id and owner record, the gate's baseline, the
simulator and managed servers), shows the run's progress, and at the end settles the run,
builds and writes the report (``app/run_end.py``), applies the gate and prints the summary.

What differs between one process and an xdist controller is a ``Processes`` object: the
controller's is ``scheduling.XdistController``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from pytest_srbench import __version__
from pytest_srbench.app.heap import freeze_heap, peak_rss_mb
from pytest_srbench.app.run_start import GateRequest
from pytest_srbench.app.shards import finalized, finish_shard
from pytest_srbench.core.commands import srbench_command
from pytest_srbench.core.compare.gate import evaluate_gate
from pytest_srbench.core.compare.runs import RunSide
from pytest_srbench.core.errors import SrbenchError
from pytest_srbench.core.plan.choices import GATE_FAILED
from pytest_srbench.plugin.errors import about, usage_errors
from pytest_srbench.plugin.options import HELD_ELSEWHERE_EXIT
from pytest_srbench.plugin.progress import ProgressDisplay, read_status
from pytest_srbench.plugin.servers import SessionServers
from pytest_srbench.plugin.session import SessionState, new_run_id, process_id
from pytest_srbench.plugin.signals import describable
from pytest_srbench.render.compare import gate_markdown, gate_terminal_lines
from pytest_srbench.render.terminal import render_summary
from pytest_srbench.store.base import Store, StoreError, StoreUnavailable
from pytest_srbench.store.opening import store_exists
from pytest_srbench.store.writer import retrying

if TYPE_CHECKING:
    from pytest_srbench.app.report_ahead import ReportAhead


class Processes(Protocol):
    """The processes that ran the run's cells, as the reporting process sees them."""

    def count(self) -> int:
        """How many processes dispatched cells."""

    def lost(self) -> list[str]:
        """Those that died mid-run."""

    def report_run(self, store: Store, run_id: str) -> str:
        """The run to report (a sharded run's workers may have joined one found by its key)."""

    def record_reporter(self, store: Store, run_id: str) -> None:
        """Record the reporting process among the run's processes where it ran no cells."""


class OneProcess:
    """A session without xdist: this process ran every cell it reports."""

    def count(self) -> int:
        return 1

    def lost(self) -> list[str]:
        return []

    def report_run(self, store: Store, run_id: str) -> str:
        return run_id

    def record_reporter(self, store: Store, run_id: str) -> None:
        return None  # it ran the cells: its engine recorded it


class ControllerPlugin:
    """Set-up, progress, the report and the gate, in the process that reports the run."""

    def __init__(
        self, state: SessionState, processes: Processes, *, progress_in_place: bool
    ) -> None:
        """``progress_in_place``: on a terminal, draw the progress line in place while an item
        waits for its cell (this process runs cells); otherwise a plain line now and then."""
        self.state = state
        self.processes = processes
        self.progress_in_place = progress_in_place
        self.servers = SessionServers(state)
        self.progress: ProgressDisplay | None = None
        self.baseline: RunSide | None = None
        self.report: dict[str, Any] | None = None
        self.report_error: str | None = None
        self.output_problems: list[str] = []  # report files that could not be written
        self.shard_note: str | None = None  # a shard that is not the last: why no report
        self.gate: dict[str, Any] | None = None
        # the report begun while the last cells run (this process runs the whole run: no
        # shard); made on the first wait for an outcome
        self._report_ahead: ReportAhead | None = None
        self._may_report_ahead = state.settings.shard is None
        self._planned: int | None = None  # the run's planned cells, once counted

    # -- set-up --------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    @usage_errors
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        state = self.state
        state.signals.install(state.on_terminate)
        terminal = state.config.pluginmanager.getplugin("terminalreporter")
        if terminal is not None:
            interactive = bool(terminal.isatty) and self.progress_in_place
            self.progress = ProgressDisplay(terminal, interactive=interactive)
        state.run_id = new_run_id()
        store = state.open()  # a read-only, locked or uncreatable store: one line (usage_errors)
        with store.transaction():
            store.set_owner(state.run_id, state.owner)  # before the run row: never an orphan
        if state.settings.baseline:
            self.baseline = self._load_baseline(state.settings.baseline)
        self.servers.start(store)

    def _load_baseline(self, reference: str) -> RunSide:
        """Read the gate's baseline before anything runs, so a typo costs nothing."""
        from pytest_srbench.app.reports import load_side  # the report model: big

        state = self.state
        has_store = store_exists(state.settings.location)
        with about("--srbench-baseline"):
            return load_side(reference, state.open() if has_store else None)

    def gate_request(self) -> GateRequest | None:
        """The gate the session asked for, once its baseline is loaded."""
        if self.baseline is None:
            return None
        settings = self.state.settings
        return GateRequest(
            baseline=self.baseline,
            mode=settings.gate,
            margin=settings.margin,
            scope=settings.gate_scope,
            interval=settings.gate_interval,
            allow_mixed_sources=settings.allow_mixed_sources,
        )

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.state.close()
        self.servers.stop()

    # -- while the run goes on -----------------------------------------------------------
    def show_progress(self) -> None:
        """The run's progress line, when it is due (counted from the store: every process of a
        distributed run writes there)."""
        progress = self.progress
        if progress is None or not progress.due():
            return
        state = self.state
        store = state.open()
        try:
            if state.manifest is None and store.get_run(state.run_id) is None:
                return  # no worker created the run yet
            status = read_status(store, state.run_id, self._planned_count(), state.started)
        except StoreUnavailable:
            return  # the store is away for now (the engine's writer waits for it)
        progress.show(status)

    def progress_due_in(self) -> float | None:
        """Seconds until the progress line is due (at least 50 ms); None without one."""
        progress = self.progress
        return None if progress is None else max(0.05, progress.due_in())

    def clear_progress(self) -> None:
        if self.progress is not None:
            self.progress.clear()

    def _planned_count(self) -> int:
        """The run's number of planned cells, worked out once (from the plan this process
        holds, or the store's outline of it)."""
        if self._planned is None:
            state = self.state
            if state.manifest is not None:
                self._planned = state.manifest.planned_count()
            else:
                self._planned = len(state.open().plan_outline(state.run_id).cells)
        return self._planned

    def report_ahead(self, *, start: bool) -> ReportAhead | None:
        """The report begun early (``app/report_ahead.py``), made when first wanted: only in
        a process that runs the whole run and then reports it."""
        if start and self._report_ahead is None and self._may_report_ahead:
            from pytest_srbench.app.report_ahead import ReportAhead, SpareCpu  # the report's

            self._may_report_ahead = False
            state = self.state
            assert state.store is not None and state.manifest is not None
            self._report_ahead = ReportAhead(state.store, state.run_id, state.manifest, SpareCpu())
        return self._report_ahead

    # -- the end -------------------------------------------------------------------------
    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Ctrl-C: the run ends cancelled whatever another plugin's hook does next (pytest
        sets the session's exit status only after every one of them returned). ``pytest.exit``
        comes here too, and keeps its own exit status."""
        if isinstance(excinfo.value, KeyboardInterrupt):
            self.state.interrupted = True
        describable(excinfo)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        try:
            retrying(lambda: self._finish(session, exitstatus))  # a lost store: reconnect
        except StoreError as error:  # the store failed for good (lost, full): one loud line
            self.state.store_failure = self.state.store_failure or (
                f"run {self.state.run_id} could not be ended: {error}; the next command that "
                "opens the store marks it interrupted"
            )
        finally:
            freeze_heap()  # the report, the results and pytest's reports: kept to the end
        if self.state.store_failure and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.state.held_line:
            session.exitstatus = HELD_ELSEWHERE_EXIT

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        """Settle the run, build and write its report, apply the gate."""
        state = self.state
        state.finishing = True
        if state.stop_signal is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        if not state.run_id or state.held_line:
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            state.interrupted = True
        store = state.open()
        state.run_id = self.processes.report_run(store, state.run_id)
        if store.get_run(state.run_id) is None:
            return
        self.processes.record_reporter(store, state.run_id)
        workers_lost = self.processes.lost()
        spec = state.settings.shard
        if spec is not None:
            end = finish_shard(
                store,
                state.run_id,
                spec,
                state.owner,
                interrupted=state.interrupted or bool(workers_lost),
            )
            if not end.mine:
                return  # this invocation never held its shard (it was refused)
            if not end.last:
                invoked = Path(state.config.invocation_params.dir)
                named = (
                    None
                    if state.settings.store == invoked / ".srbench"
                    else state.settings.location
                )
                self.shard_note = (
                    f"srbench: shard {spec.label} done ({end.ran} cells); the report is written "
                    f"by the last shard, or `{srbench_command(named, 'finalize', state.run_id)}`"
                )
                return
            workers_lost += end.lost
        self._report(session, store, workers_lost)

    def _report(self, session: pytest.Session, store: Store, workers_lost: list[str]) -> None:
        # the report's modules load when a report is made (never for --collect-only)
        from pytest_srbench.app.run_end import finalize_run, write_outputs

        state = self.state
        settings = state.settings
        workers = self.processes.count()
        runner = {
            "pytest_srbench": __version__,
            "python": sys.version.split()[0],
            "platform": sys.platform,
            "xdist_workers": workers,
            "concurrency_per_worker": settings.concurrency,
            "total_concurrency": workers * settings.concurrency,
            "transport": settings.transport,
        }
        try:
            self.report = finalize_run(
                store,
                state.run_id,
                runner=runner,
                interrupted=state.interrupted,
                workers_lost=workers_lost,
                held_elsewhere=self._held_elsewhere(store),
                manifest=state.manifest,  # the plan this session froze: not read again
                late_peak=(process_id(), peak_rss_mb),
                ahead=self._report_ahead,
            )
        except SrbenchError as error:
            self.report_error = f"pytest-srbench could not build the report: {error}"
            return
        finally:
            if settings.shard is not None:
                finalized(store, state.run_id, settings.shard)  # the run has its final status
        if state.reused_run:  # this invocation's fact: the stored report stays the run's own
            self.report["reused_existing_run"] = True
        if self.baseline is not None:
            self._apply_gate(session, store)
        self.output_problems = write_outputs(
            store,
            state.run_id,
            self.report,
            settings.json_path,
            settings.html_path,
            manifest=state.manifest,
        )
        if self.output_problems and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR  # the run itself is saved

    def _held_elsewhere(self, store: Store) -> bool:
        """This process only reports a run that another live process executes (the same run
        key, started at the same time): settling it here would fail that process's calls."""
        if not self.state.view_only:
            return False
        run = store.get_run(self.state.run_id)
        if run is not None and run.status not in ("queued", "running"):
            return False  # its owner ended it: reported as saved, nothing changes
        owner = store.owner(self.state.run_id)
        return owner is not None and store.owner_alive(owner) is not False

    def _apply_gate(self, session: pytest.Session, store: Store) -> None:
        """Judge the run against the baseline; a failed gate fails the session (exit 1)."""
        assert self.baseline is not None and self.report is not None
        settings = self.state.settings
        self.gate = evaluate_gate(
            self.baseline,
            RunSide.from_report(self.report),
            mode=settings.gate,
            margin=settings.margin,
            interval=settings.gate_interval,
            scope=settings.gate_scope,
            allow_mixed_sources=settings.allow_mixed_sources,
            allow_cached=settings.allow_cached,
        )
        self.report["gate"] = self.gate
        from pytest_srbench.app.run_end import write_run_report

        write_run_report(store, self.state.run_id, self.report, None)  # the user's files: later
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write(gate_markdown(self.gate, self.report))
        if not self.gate["passed"]:
            session.exitstatus = pytest.ExitCode(GATE_FAILED)  # TESTS_FAILED, as compare's

    def pytest_terminal_summary(
        self, terminalreporter: Any, exitstatus: int, config: pytest.Config
    ) -> None:
        state = self.state
        for run in state.swept:
            terminalreporter.write_line(
                f"srbench: run {run.id} was left running by a stopped process; marked "
                f"interrupted ({run.error})",
                yellow=True,
            )
        if state.stop_signal is not None:
            terminalreporter.write_line(
                f"srbench: {state.stop_signal} received; the run was cancelled as on Ctrl-C",
                yellow=True,
            )
        if self.shard_note:
            terminalreporter.write_line(self.shard_note, cyan=True)
        if state.held_line:
            terminalreporter.write_line(state.held_line, yellow=True)
            return
        if state.store_failure:
            terminalreporter.write_line(f"srbench: {state.store_failure}", red=True, bold=True)
        if self.report_error:
            terminalreporter.write_sep("=", "srbench report", red=True)
            terminalreporter.write_line(self.report_error)
            return
        if self.report is None:
            return
        report = self.report
        if report.get("status") == "interrupted" and report.get("error"):
            targets = report["summary"]["targets"]
            ended = sum(t["total"] - t["pending"] for t in targets)
            terminalreporter.write_line(
                f"srbench: run {report['run_id']} was interrupted: {report['error']}; recorded: "
                f"{ended} of {sum(t['total'] for t in targets)} cells with a result, the rest "
                "pending (never sent again automatically); every request sent is journaled",
                yellow=True,
            )
        terminalreporter.write_sep("=", "srbench report")
        for line in render_summary(self.report):
            terminalreporter.write_line(line)
        unwritten = "\n".join(self.output_problems)
        for label, path in (("JSON", state.settings.json_path), ("HTML", state.settings.html_path)):
            if path is not None and f"cannot write {path}:" not in unwritten:
                terminalreporter.write_line(f"{label} report: {path}")
        for problem in self.output_problems:
            terminalreporter.write_line(problem, red=True, bold=True)
        if self.report.get("reused_existing_run"):
            terminalreporter.write_line(
                f"srbench: existing run {state.run_id} re-printed, no call made (run key "
                f"{state.settings.run_key} was already bound to it; a new key starts a new run)",
                yellow=True,
            )
        if self.gate is not None:
            passed = bool(self.gate["passed"])
            for line in gate_terminal_lines(self.gate):  # the details, then the verdict last
                terminalreporter.write_line(line, red=line.endswith(" FAIL"))
            terminalreporter.write_line(self.gate["line"], green=passed, red=not passed, bold=True)
