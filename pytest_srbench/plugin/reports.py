"""How a cell's test reports read, in every process that logs them: its status letter and word
(``.`` correct, ``w`` wrong, ``r`` routed); and what the session keeps of a cell once it ran
(what pytest's terminal keeps of its reports, what its item holds)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from pytest_srbench.plugin.bench_tests import cell_of
from pytest_srbench.plugin.items import CELL_CATEGORIES, CORRECT, ROUTED, WRONG, CountedCell, let_go


class CellReports:
    """The report hooks of a session, whatever its role."""

    def __init__(self, config: pytest.Config, *, preview: bool) -> None:
        self.config = config
        self.preview = preview  # a preview run routes cells: none is correct or wrong

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        info = getattr(report, "srbench", None)
        if not info or report.when != "call" or not report.passed:
            return None
        if info.get("correct"):
            return CORRECT, ".", ("CORRECT", {"green": True})
        if info.get("routed_to") is not None or self.preview:
            return ROUTED, "r", (f"ROUTED → {info.get('routed_to')}", {"cyan": True})
        why = info.get("quality_failure") or info.get("answer_status") or "wrong answer"
        return WRONG, "w", (f"WRONG ({why})" if why != "answered" else "WRONG", {"yellow": True})

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> Generator[None, object, object]:
        """Once a cell's protocol is over (every report logged), its item lets go of what no
        one reads again."""
        result = yield
        if cell_of(item) is not None:
            let_go(item)
        return result

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """What pytest's terminal keeps of a benchmark cell's passed reports once it has logged
        them. It keeps every report of every test to the end: a cell's set-up and tear-down
        reports (under the empty category, read only for the tear-down output it prints, which
        a cell never has) are let go, and its call report (read only to be counted) becomes a
        ``CountedCell``. At 100,000 cells the 300,000 reports would hold about 350 MB."""
        if not report.passed or report.sections or "srbench" not in report.keywords:
            return
        terminal = self.config.pluginmanager.get_plugin("terminalreporter")
        stats = getattr(terminal, "stats", None)
        if not stats:
            return
        for category in ("",) if report.when != "call" else CELL_CATEGORIES:
            kept = stats.get(category)
            if kept and kept[-1] is report:
                if category:
                    kept[-1] = CountedCell(report.nodeid)
                else:
                    kept.pop()
                return
