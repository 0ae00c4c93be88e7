"""A pytest plugin for the benchmarks (``-p _phase_marks``, with ``bench/`` on PYTHONPATH): it
notes the wall-clock time at each phase of a session and writes them, as JSON, to the file
named by ``SRBENCH_BENCH_MARKS`` when pytest unconfigures. The benchmark that spawned the
command adds its own spawn and exit times, so every phase of the whole command is accounted
for: start-up and plugin import, session start (the store, the simulator), collection (the
plan frozen, the run created), the run, the report, the terminal summary and the exit."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from typing import Any

import pytest

MARKS: dict[str, float] = {}


def _mark(name: str) -> None:
    MARKS.setdefault(name, time.time())


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    _mark("configured")


@pytest.hookimpl(tryfirst=True)
def pytest_collection(session: pytest.Session) -> None:
    _mark("collection")


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _mark("collected")


@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session: pytest.Session) -> Generator[None, Any, Any]:
    _mark("run")
    try:
        return (yield)
    finally:
        _mark("ran")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _mark("reported")


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary() -> None:
    _mark("summarised")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    _mark("unconfigured")
    path = os.environ.get("SRBENCH_BENCH_MARKS")
    if path and not hasattr(config, "workerinput"):  # the controller's marks, not a worker's
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(MARKS, handle)
