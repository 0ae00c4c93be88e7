"""The suite benchmarks as a test module, ``srbench`` in a session's node ids.

A session collects it beside the project's own tests when it asks for a benchmark that no
collected test answers (``--srbench-benchmark NAME``), when it collected no marked test at all
(an empty folder, a project of ordinary tests), or when ``[tool.srbench] run_suites = "always"``
says so. Its one test is marked like any benchmark written as a test, so its cells take the
same path from collection to receipt: ``"*"`` stands for the session's suite benchmarks (the
profile's sr-bench suites, or the ones named), and its body hands each cell to the
benchmark's own protocol (prompt, calls, grading), which a test in a project may do too
(``srbench_protocol``).
"""

from collections.abc import Awaitable, Callable

import pytest


@pytest.mark.srbench("*")
async def suite(srbench_protocol: Callable[[], Awaitable[object]]) -> object:
    """One cell of a suite benchmark: its own protocol answers and grades it."""
    return await srbench_protocol()
