"""Finishing: the controller (or single process) settles the run, builds and writes the
report, applies the gate and prints the summary.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from pytest_srbench import __version__
from pytest_srbench.app.shards import finalized, finish_shard
from pytest_srbench.core.compare.gate import evaluate_gate
from pytest_srbench.core.compare.runs import RunSide
from pytest_srbench.plugin.state import PluginState, freeze_heap, peak_rss_mb, process_id
from pytest_srbench.render.compare import gate_markdown
from pytest_srbench.render.terminal import render_summary
from pytest_srbench.store.base import Store, StoreError


class FinishPhase(PluginState):
    """The session-finish hooks."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        try:
            self._finish(session, exitstatus)
        finally:
            freeze_heap()  # the report, the results and pytest's reports: kept to the end

    def _finish(self, session: pytest.Session, exitstatus: int) -> None:
        """Settle the run, build and write its report, apply the gate (controller / single)."""
        self._finishing = True
        if self.stop_signal is not None:
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        if not self.role.reports or not self.run_id:
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            self.interrupted = True
        store = self.open()
        spec = self.settings.shard
        if spec is not None and self.role.kind == "controller" and self.settings.run_key:
            found = store.find_run_by_key(self.settings.run_key)  # the workers joined it
            if found is not None:
                self.run_id = found.id
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
        workers_lost = list(self.workers_lost)
        if spec is not None:
            end = finish_shard(
                store,
                self.run_id,
                spec,
                self.owner,
                interrupted=self.interrupted or bool(workers_lost),
            )
            if not end.mine:
                return  # this invocation never held its shard (it was refused)
            if not end.last:
                self.shard_note = (
                    f"srbench: shard {spec.label} done ({end.ran} cells); the report is written "
                    f"by the last shard, or `srbench finalize {self.run_id}`"
                )
                return
            workers_lost += end.lost
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
        # the report's modules load when a report is made (never for --collect-only)
        from pytest_srbench.app.finalize import finalize_run, write_outputs

        try:
            self.report = finalize_run(
                store,
                self.run_id,
                runner=runner,
                interrupted=self.interrupted,
                workers_lost=workers_lost,
                held_elsewhere=self._held_elsewhere(store),
                manifest=self.manifest,  # the plan this session froze: not read again
                late_peak=(process_id(), peak_rss_mb),
                ahead=self.report_ahead,
            )
        except (StoreError, ValueError) as error:
            self.report_error = f"pytest-srbench could not build the report: {error}"
            return
        finally:
            if spec is not None:
                finalized(store, self.run_id, spec)  # the run has its final status
        if self.baseline is not None and self.report is not None:
            self._apply_gate(session, store)
        if self.report is not None:
            settings = self.settings
            self.output_problems = write_outputs(
                store, self.run_id, self.report, settings.json_path, settings.html_path
            )
            if self.output_problems and session.exitstatus == pytest.ExitCode.OK:
                session.exitstatus = pytest.ExitCode.USAGE_ERROR  # the run itself is saved

    def _held_elsewhere(self, store: Store) -> bool:
        """This process only reports a run that another live process executes (the same run
        key, started at the same time): settling it here would fail that process's calls."""
        if not self.view_only:
            return False
        owner = store.owner(self.run_id)
        return owner is not None and store.owner_alive(owner) is not False

    def _apply_gate(self, session: pytest.Session, store: Store) -> None:
        """Judge the run against the baseline; a failed gate fails the session (exit 1)."""
        assert self.baseline is not None and self.report is not None
        settings = self.settings
        self.gate = evaluate_gate(
            self.baseline,
            RunSide.from_report(self.report),
            mode=settings.gate,
            margin=settings.margin,
            interval=settings.gate_interval,
            scope=settings.gate_scope,
            allow_mixed_sources=settings.allow_mixed_sources,
        )
        self.report["gate"] = self.gate
        from pytest_srbench.app.finalize import write_run_report

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
        if self.shard_note:
            terminalreporter.write_line(self.shard_note, cyan=True)
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


def _worker_count(config: pytest.Config) -> int:
    value = getattr(config.option, "numprocesses", None)
    try:
        return max(1, int(value or 1))
    except (TypeError, ValueError):
        return 1
