"""Builders for the use-case tests: call receipts, a PID no process has, and a stored run
whose report is built the way it was before reports were streamed (``from_lists``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from pytest_srbench.app.reports import local_baseline
from pytest_srbench.core.report.build import FAILURE_OBSERVED, build_report
from pytest_srbench.render.json_report import report_json
from pytest_srbench.store import open_store
from pytest_srbench.store.corrections import latest_correction


def dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    return int(done.stdout)


def call_row(case_id: str, status: str, **extra: Any) -> dict[str, Any]:
    row = {
        "id": f"call-{case_id}-{status}-{len(extra)}",
        "case_id": case_id,
        "target_id": "t",
        "role": "subject",
        "status": status,
        "usage": {
            "input_tokens": 5,
            "cached_input_tokens": 0,
            "cache_write_tokens": 0,
            "output_tokens": 1,
        },
        "cost_usd": 0.001,
        "finish_reason": "stop",
    }
    row.update(extra)
    return row


RUN = "run-stream"


def stored(tmp_path: Path, frozen: Any, results: list, calls: list, events=()) -> Any:
    """A real store holding the rows (calls journaled in list order)."""
    store = open_store(tmp_path / "store")
    store.create_run(RUN, frozen, status="running")
    with store.transaction():
        for call in calls:
            store.insert_call(RUN, call)
        for row in results:
            store.upsert_result(RUN, row)
        for kind, data in events:
            store.append_event(RUN, kind, data)
    store.set_run_status(RUN, "failed", "stopped")
    return store


def from_lists(store: Any) -> str:
    """The report as it was built before: every row and call of the run read into lists."""
    report = build_report(
        store.get_manifest(RUN),
        store.require_run(RUN),
        store.results(RUN),
        store.calls(RUN),
        store.events(RUN, limit=1, kinds=(FAILURE_OBSERVED,)),
        runner=store.get_runner(RUN),
        correction=latest_correction(store, RUN),
        recipes=store.recipes(RUN),
        indexes=store.snapshots(RUN, "index"),
        local_embedding=local_baseline(store.get_manifest(RUN)),
    )
    return report_json(report)
