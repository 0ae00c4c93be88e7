"""Ctrl-C ends a run ``cancelled`` even when pytest cannot describe the interrupt: on Python
3.11 a ``KeyboardInterrupt`` can land on an instruction without a line number, pytest's
terminal reporter then fails in ``pytest_keyboard_interrupt`` (a ``TypeError``), and the
session's exit status never becomes "interrupted" (seen: a run with a failed cell ended
``failed``; 1 in 33 SIGINTs under load)."""

from __future__ import annotations

import json
import sys
import types

import pytest
from _pytest._code.code import ExceptionInfo, Traceback, TracebackEntry

from pytest_srbench.plugin.signals import describable, has_line_number
from tests.plugin.helpers import failing_target


def interrupt_with_a_lineless_entry() -> ExceptionInfo[BaseException]:
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:
        excinfo = ExceptionInfo.from_current()
    real = excinfo.tb
    lineless = types.SimpleNamespace(tb_frame=real.tb_frame, tb_lineno=None, tb_next=None)
    excinfo.traceback = Traceback([TracebackEntry(real), TracebackEntry(lineless)])  # type: ignore[arg-type]
    return excinfo


def test_an_entry_without_a_line_breaks_pytests_description_until_it_is_dropped():
    excinfo = interrupt_with_a_lineless_entry()
    with pytest.raises(TypeError, match="NoneType"):  # what pytest's reporter meets
        excinfo.getrepr(funcargs=True)
    assert [has_line_number(entry) for entry in excinfo.traceback] == [True, False]
    describable(excinfo)
    assert len(excinfo.traceback) == 1
    assert "KeyboardInterrupt" in str(excinfo.getrepr(funcargs=True))


CONFIG = '[tool.srbench]\ndefault_targets = ["err500"]\n' + failing_target("err500")

# Ctrl-C once the first cell has failed (outside the wait for a cell), and another plugin's
# ``pytest_keyboard_interrupt`` failing as pytest's reporter does on a line-less entry
CONFTEST = """
import pytest

stopped = []

def pytest_runtest_logreport(report):
    if report.when == "call" and "err500" in report.nodeid and not stopped:
        stopped.append(report.nodeid)
        raise KeyboardInterrupt

@pytest.hookimpl(trylast=True)
def pytest_keyboard_interrupt(excinfo):
    raise TypeError("unsupported operand type(s) for -: 'NoneType' and 'int'")
"""


@pytest.mark.skipif(sys.version_info < (3, 11), reason="the reporter's failure is 3.11's")
def test_ctrl_c_cancels_the_run_when_another_hook_fails_to_describe_it(pytester):
    pytester.makefile(".toml", pyproject=CONFIG)
    pytester.makeconftest(CONFTEST)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:randomly", "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro", "--srbench-limit=3", "--srbench-json=report.json",
    )  # fmt: skip
    assert "TypeError: unsupported operand" in result.stderr.str() + result.stdout.str()
    report = json.loads((pytester.path / "report.json").read_text())
    (target,) = report["summary"]["targets"]
    assert target["failed"] >= 1  # a failed cell: without the flag the run ended "failed"
    assert report["status"] == "cancelled", (report["status"], report.get("error"))
