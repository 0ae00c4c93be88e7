"""How a cell's test reports read, in every process that logs them: its status letter and word
(``.`` correct, ``w`` wrong, ``r`` routed), a wrong cell in JUnit XML
(``--srbench-junit-wrong``); and what the session keeps of a cell once it ran (what pytest's
terminal keeps of its reports, what its item holds)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
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
        # --srbench-junit-wrong=failure: a wrong cell is a failed testcase in the JUnit XML only
        self.junit_wrong = config.getoption("srbench_junit_wrong", None) == "failure"

    def category(self, report: pytest.TestReport) -> str | None:
        """A cell's passed call report's category (correct, wrong or routed); None otherwise."""
        info = getattr(report, "srbench", None)
        if not info or report.when != "call" or not report.passed:
            return None
        if info.get("correct"):
            return CORRECT
        if info.get("routed_to") is not None or self.preview:
            return ROUTED
        return WRONG

    def pytest_report_teststatus(self, report: pytest.TestReport, config: pytest.Config) -> Any:
        category = self.category(report)
        if category is None:
            return None
        info = getattr(report, "srbench", {})
        if category == CORRECT:
            return CORRECT, ".", ("CORRECT", {"green": True})
        if category == ROUTED:
            return ROUTED, "r", (f"ROUTED → {info.get('routed_to')}", {"cyan": True})
        why = _why_wrong(info)
        return WRONG, "w", (f"WRONG ({why})" if why != "answered" else "WRONG", {"yellow": True})

    @pytest.hookimpl(tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """``-rP``: the output of passed cells (pytest's own "PASSES" reads only the reports it
        counts as passed; a cell's are counted correct, wrong or routed)."""
        terminal = terminalreporter
        if terminal.config.option.tbstyle == "no" or not terminal.hasopt("P"):
            return
        reports = [
            report
            for category in CELL_CATEGORIES
            for report in terminal.getreports(category)
            if getattr(report, "sections", None)
        ]
        if not reports:
            return
        terminal.write_sep("=", "PASSES (benchmark cells)")
        for report in reports:
            terminal.write_sep("_", report.head_line or report.nodeid, green=True, bold=True)
            for title, content in report.sections:
                terminal.write_sep("-", title)
                terminal.line(content.rstrip("\n"))

    def _junit_failure(self, report: pytest.TestReport) -> None:
        """A wrong cell's testcase in the JUnit XML gets a ``<failure>`` (the terminal keeps its
        ``w`` and the exit status its meaning: a wrong answer is a measurement)."""
        from _pytest.junitxml import xml_key

        logxml = self.config.stash.get(xml_key, None)
        if logxml is None:
            return
        info = getattr(report, "srbench", {})
        answer = repr(info.get("answer"))
        if len(answer) > 200:
            answer = answer[:197] + "..."
        why = _why_wrong(info)
        plain = why in ("answered", "wrong answer")
        message = f"wrong answer: {answer}" + ("" if plain else f" ({why})")
        node = ET.Element("failure", message=message)
        node.text = (
            f"{info.get('case_id')} on {info.get('target_id')}: {message}; "
            f"answer_status: {info.get('answer_status')}"
        )
        logxml.stats["passed"] -= 1  # (its pass was counted when the call report came)
        logxml.node_reporter(report).append(node)  # counted as a failure

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
        ``CountedCell``. At 100,000 cells the 300,000 reports would hold about 350 MB.

        Under ``--srbench-junit-wrong=failure`` a wrong cell's testcase fails in the JUnit XML
        (the XML's own hook ran before: this one is ``trylast``)."""
        if self.junit_wrong and self.category(report) == WRONG:
            self._junit_failure(report)
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


def _why_wrong(info: dict[str, Any]) -> str:
    """Why a graded cell is wrong, in a word: its quality failure, else its answer's status."""
    return str(info.get("quality_failure") or info.get("answer_status") or "wrong answer")
