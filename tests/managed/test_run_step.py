"""``run_step``: a build step's output in its log file, and a failure that quotes the log's
end (real subprocesses)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_srbench.managed.common import LOG_TAIL_LINES, RealPartError, run_step


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_step_with_a_log_writes_its_output_there_and_not_to_the_terminal(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "deep" / "build.log"
    run_step(_python("print('compiled a.o'); import sys; print('warn', file=sys.stderr)"),
             "compiling", log_path=log)  # fmt: skip
    run_step(_python("print('linked')"), "linking", log_path=log)
    assert log.read_text().splitlines() == ["compiled a.o", "warn", "linked"]
    out, err = capfd.readouterr()
    assert "compiled" not in out + err and "linked" not in out + err


def test_a_failed_step_names_its_log_and_quotes_its_last_lines(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    code = "for i in range(100): print(f'line {i}')\nraise SystemExit(3)"
    with pytest.raises(RealPartError) as failed:
        run_step(_python(code), "building llama-server", hint="install cmake", log_path=log)
    said = str(failed.value)
    head, *quoted = said.splitlines()
    assert head == (
        f"building llama-server failed (exit 3; its output: {log}). "
        "If a tool is missing: install cmake"
    )
    assert quoted == [f"    line {i}" for i in range(100 - LOG_TAIL_LINES, 100)]


def test_without_a_log_a_failure_points_above(capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(
        RealPartError, match=r"^configuring failed \(exit 2; its output is above\)$"
    ):
        run_step(_python("print('cmake says no'); raise SystemExit(2)"), "configuring")
    assert "cmake says no" in capfd.readouterr().out


def test_a_missing_program_is_named(tmp_path: Path) -> None:
    with pytest.raises(RealPartError, match="compiling: no-such-compiler-x not found: apt"):
        run_step(["no-such-compiler-x"], "compiling", hint="apt", log_path=tmp_path / "b.log")
