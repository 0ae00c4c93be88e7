"""Running generated programming solutions in this process and judging them against their tests."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from typing import Any


def _exec(code: str, namespace: dict[str, Any]) -> None:
    """Run ``code`` in ``namespace``."""
    exec(compile(code, "<synthetic solution>", "exec"), namespace)


def run_stdin_solution(code: str, text: str) -> str:
    """The standard output of a generated stdin solution on ``text`` (run in this process)."""
    captured = io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        with contextlib.redirect_stdout(captured):
            _exec(code, {"__name__": "__main__"})
    finally:
        sys.stdin = saved
    return captured.getvalue()


def run_function_solution(code: str, func_name: str, arguments: str) -> Any:
    """The return value of a generated functional solution on JSON-lines ``arguments``."""
    namespace: dict[str, Any] = {"__name__": "synthetic"}
    _exec(code, namespace)
    target = (
        getattr(namespace["Solution"](), func_name)
        if "Solution" in namespace
        else namespace[func_name]
    )
    return target(*[json.loads(line) for line in arguments.splitlines() if line.strip()])


def passes_tests(code: str, func_name: str | None, tests: list[dict[str, str]]) -> bool:
    """Whether ``code`` (a stdin program, or a functional one when ``func_name`` is set) passes
    every test, judged the way the livecodebench grader does."""
    from pytest_srbench.core.grading.code import outputs_match

    for test in tests:
        try:
            if func_name is None:
                if not outputs_match(run_stdin_solution(code, test["input"]), test["output"]):
                    return False
            else:
                got = run_function_solution(code, func_name, test["input"])
                expected = json.loads(test["output"])
                if not (got == expected or json.loads(json.dumps(got)) == expected):
                    return False
        except Exception:  # a wrong solution may crash: that is a failed test
            return False
    return True
