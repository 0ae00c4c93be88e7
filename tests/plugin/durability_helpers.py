"""Shared by test_durability and the tests that build on it (a test module never imports another)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from pytest_srbench.store import open_store

BENCH = ("--srbench-benchmark=mmlu-pro", "--srbench-benchmark=gpqa-diamond")


def pytest_args(*extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
            "--srbench-profile=smoke", *BENCH, *extra]  # fmt: skip


def finish(proc: subprocess.Popen[str], timeout: float = 60.0) -> str:
    """The process's output once it ends; one that does not end in time is killed (so no
    test after this one meets its calls) and the test fails."""
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        raise AssertionError(f"the run did not end within {timeout} s:\n{out[-3000:]}") from None
    return out


def existing_store(root: Path, location: str | None) -> str | None:
    """The store to read once it exists (a database always does; a SQLite folder once the run
    made its journal: opening it earlier would create it beside the run)."""
    if location is not None and "://" in location:
        return location
    folder = Path(location) if location is not None else root / ".srbench"
    return str(folder) if (folder / "journal.sqlite3").exists() else None


def _wait_for_run_calls(
    root: Path,
    at_least: int,
    counted: Callable[[dict], bool],
    what: str,
    timeout: float,
    location: str | None,
    poll: float,
) -> str:
    """Wait until the newest run has ``at_least`` calls that ``counted`` accepts; return its
    id (in the project's store, or the one at ``location``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        where = existing_store(root, location)
        if where is not None:
            store = open_store(where)
            try:
                runs = store.list_runs(limit=1)
                found = [c for c in store.calls(runs[0].id) if counted(c)] if runs else []
                if len(found) >= at_least:
                    return runs[0].id
            finally:
                store.close()
        time.sleep(poll)
    raise AssertionError(f"fewer than {at_least} {what} after {timeout} s")


def wait_for_calls(
    root: Path, at_least: int, timeout: float = 30.0, location: str | None = None
) -> str:
    """Wait until the run has journaled ``at_least`` finished calls; return its id."""
    return _wait_for_run_calls(
        root, at_least, lambda c: c["status"] != "sent", "finished calls", timeout, location, 0.1
    )


def wait_for_in_flight(
    root: Path, at_least: int, timeout: float = 60.0, location: str | None = None
) -> str:
    """Wait until the run has ``at_least`` calls sent and unanswered; return its id."""
    return _wait_for_run_calls(
        root, at_least, lambda c: c["status"] == "sent", "calls in flight", timeout, location, 0.05
    )
