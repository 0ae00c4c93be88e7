"""The plugin end to end on a PostgreSQL store: a run on the built-in simulator with
``--srbench-store postgresql://…`` is journaled in the database, and ``srbench report RUN
--store postgresql://…`` gives the same report as the same run on a SQLite folder, apart from
ids, times and process facts."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import pytest

from pytest_srbench.cli.main import main as srbench
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store

pytestmark = pytest.mark.slow

RUN = ("-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-limit=2",
       "--srbench-benchmark=mmlu-pro", "--srbench-json=report.json")  # fmt: skip
VOLATILE = {"run_id", "created_at", "updated_at", "pid", "process_id", "peak_rss_mb",
            "distributions"}  # fmt: skip


def steady(value: Any) -> Any:
    """The report without what differs between two runs of one plan: ids, stamps, process
    facts and measured durations (numbers under keys ending in ``_s``, their histograms)."""
    if isinstance(value, dict):
        return {
            key: steady(item)
            for key, item in value.items()
            if key not in VOLATILE
            and not (key.endswith("_s") and isinstance(item, int | float | None))
        }
    if isinstance(value, list):
        return [steady(item) for item in value]
    return value


def report_from_cli(cwd, store: str, run_id: str) -> dict:
    """``srbench --store STORE report RUN --format json``, run in this process (its own
    ``main``: parsing, opening and sweeping the store, the report)."""
    out = io.StringIO()
    with contextlib.chdir(cwd), contextlib.redirect_stdout(out):
        assert srbench(["--store", store, "report", run_id, "--format", "json"]) == 0
    return json.loads(out.getvalue())


def test_a_run_on_postgres_reports_like_the_same_run_on_sqlite(pytester, postgres_url):
    on_sqlite = pytester.runpytest_subprocess(*RUN)
    assert on_sqlite.ret == 0
    sqlite_run = json.loads((pytester.path / "report.json").read_text())["run_id"]
    on_postgres = pytester.runpytest_subprocess(*RUN, f"--srbench-store={postgres_url}")
    assert on_postgres.ret == 0
    postgres_report = json.loads((pytester.path / "report.json").read_text())
    postgres_run = postgres_report["run_id"]
    assert postgres_run != sqlite_run

    store = open_store(postgres_url)
    run = store.require_run(postgres_run)
    assert run.status == "completed" and store.count_calls(postgres_run) == 4
    assert all(store.read_evidence(c["evidence"]) for c in store.calls(postgres_run))
    assert [r.id for r in open_store(pytester.path / ".srbench").list_runs()] == [sqlite_run]

    from_sqlite = report_from_cli(pytester.path, ".srbench", sqlite_run)
    from_postgres = report_from_cli(pytester.path, postgres_url, postgres_run)
    assert from_postgres["run_id"] == postgres_run
    assert steady(from_postgres) == steady(from_sqlite)
    assert steady(postgres_report) == steady(from_postgres)  # the session wrote the same
    assert sum(c["correct"] is not None for c in from_postgres["cells"]) == 4


def test_xdist_workers_share_one_run_in_the_database(pytester, sim, postgres_url):
    """Two xdist workers claim the run for their controller in the database, dispatch every
    cell once (the simulator's request count equals the journal's) and the run completes."""
    from tests.plugin.helpers import project

    project(pytester, sim, "always-right", "slow")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
        "-n", "2", "--srbench-concurrency=3", "--srbench-json=report.json",
        f"--srbench-store={postgres_url}",
    )  # fmt: skip
    assert result.ret == 0
    data = json.loads((pytester.path / "report.json").read_text())
    store = open_store(postgres_url)
    calls = store.calls(data["run_id"])
    stats = sim_client.stats(sim.admin_url)
    assert stats["requests"] == len(calls) == data["summary"]["planned_cells"] > 0
    assert len({(c["case_id"], c["target_id"]) for c in calls}) == len(calls)
    assert store.require_run(data["run_id"]).status == "completed"
    assert [e["seq"] for e in store.events(data["run_id"], limit=10_000)] == list(
        range(1, 1 + len(store.events(data["run_id"], limit=10_000)))
    )
    roles = sorted(p["role"] for p in store.processes(data["run_id"]))
    assert roles == ["controller", "worker", "worker"]
