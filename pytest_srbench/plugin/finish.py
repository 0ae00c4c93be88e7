"""Ending a run after every process stopped: settle what was left in flight, decide the
final status (reference/run-lifecycle.md §7.5), write the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_srbench.core.report import build_report
from pytest_srbench.render.json_report import write_report
from pytest_srbench.store.sqlite import SqliteStore

FAILED_LIKE = frozenset({"failed", "cancelled", "sent_unknown"})
WORKER_STOPPED = "Worker stopped; dispatched requests are not retried"


def settle_in_flight(store: SqliteStore, run_id: str) -> int:
    """Mark calls still ``sent`` and cells still ``running`` as ``sent_unknown``; nothing is resent."""
    changed = 0
    with store.transaction():
        for call in store.calls(run_id, active=True):
            call.pop("_seq", None)
            call["status"] = "sent_unknown"
            call["error"] = WORKER_STOPPED
            store.update_call(call["id"], call)
            changed += 1
        for row in store.results(run_id):
            if row.get("status") == "running":
                row.pop("_row", None)
                row.update(status="sent_unknown", error=WORKER_STOPPED)
                store.upsert_result(run_id, row)
                store.append_event(
                    run_id,
                    "case_sent_unknown",
                    {"case_id": row["case_id"], "target_id": row["target_id"]},
                )
                changed += 1
    return changed


def final_status(
    results: list[dict[str, Any]], total: int, stops: list[dict[str, Any]], interrupted: bool
) -> str:
    """cancelled (user) > failed (any failed-like cell) > cancelled (stopped) > completed > failed."""
    if interrupted or any(stop.get("user") for stop in stops):
        return "cancelled"
    if any(row.get("status") in FAILED_LIKE for row in results):
        return "failed"
    if stops:
        return "cancelled"
    completed = sum(1 for row in results if row.get("status") == "completed")
    return "completed" if completed == total else "failed"


def finalize_run(
    store: SqliteStore,
    run_id: str,
    *,
    runner: dict[str, Any],
    interrupted: bool = False,
    json_path: Path | None = None,
) -> dict[str, Any]:
    """Settle, set the final status and write ``report.json`` (and ``json_path``)."""
    run = store.require_run(run_id)
    manifest = store.get_manifest(run_id)
    if run.status in ("queued", "running"):
        settle_in_flight(store, run_id)
        results = store.results(run_id)
        stops = [
            event["data"]
            for event in store.events(run_id, limit=1_000_000)
            if event["kind"] == "dispatch_stopped"
        ]
        status = final_status(results, len(manifest.planned_cells()), stops, interrupted)
        failure = next(
            (
                e["data"]
                for e in store.events(run_id, limit=1_000_000)
                if e["kind"] == "failure_observed"
            ),
            None,
        )
        error = failure.get("summary") if failure else None
        processes = store.processes(run_id)
        engines = [p for p in processes if p.get("role") != "controller"]
        peaks = [p["peak_rss_mb"] for p in processes if p.get("peak_rss_mb") is not None]
        runner = {
            **runner,
            "processes": len(engines),
            "peak_rss_mb": max(peaks) if peaks else None,
            "process_details": processes,
        }
        store.set_runner(run_id, runner)
        run = store.set_run_status(run_id, status, error)
    report = build_report(
        manifest,
        run,
        store.results(run_id),
        store.calls(run_id),
        store.events(run_id, limit=1_000_000),
        runner=store.get_runner(run_id),
    )
    write_report(report, store.run_dir(run_id) / "report.json")
    if json_path is not None:
        write_report(report, json_path)
    return report
