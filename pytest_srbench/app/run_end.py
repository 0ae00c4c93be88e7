"""Ending a run after every process stopped: settle what was left in flight (``settle.py``),
decide the final status (reference/run-lifecycle.md §7.5), build and write the report — for
the session that ran it, the last shard of a sharded run, and ``srbench finalize``.

The report's modules load with this one; nothing that only opens or sweeps a store does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_srbench.app.report_ahead import ReportAhead
from pytest_srbench.app.reports import report_from_store, write_html_report
from pytest_srbench.app.saved_reports import save_report
from pytest_srbench.app.settle import WORKER_STOPPED, settle_in_flight
from pytest_srbench.app.shards import close_shards
from pytest_srbench.core.commands import srbench_command
from pytest_srbench.core.models import FAILED_CELL_STATUSES, TERMINAL_CELL_STATUSES, Manifest
from pytest_srbench.core.progress import cell_progress
from pytest_srbench.core.report.build import FAILURE_OBSERVED
from pytest_srbench.core.report.tasks import suite_kinds
from pytest_srbench.render.json_report import with_head, write_report
from pytest_srbench.render.outputs import OutputError
from pytest_srbench.store.base import Store, every_event


def final_status(
    counts: dict[str, int],
    total: int,
    stops: list[dict[str, Any]],
    interrupted: bool,
    workers_lost: bool = False,
) -> str:
    """interrupted (the store failed) > cancelled (user) > interrupted (a worker died before every cell completed) > failed (any
    failed-like cell) > cancelled (stopped) > completed > failed."""
    cells = cell_progress(counts, total)
    if any(stop.get("interrupted") for stop in stops):
        return "interrupted"  # the store failed (disk full, lost for too long)
    if interrupted or any(stop.get("user") for stop in stops):
        return "cancelled"
    if workers_lost and not cells.all_completed:
        return "interrupted"
    if cells.failed:
        return "failed"
    if stops:
        return "cancelled"
    return "completed" if cells.all_completed else "failed"


def failed_samples_only(
    statuses: dict[tuple[str, str], str], planned: int, manifest: Manifest
) -> bool:
    """Whether every planned cell ended and every one that failed is a RAG sample: a failed
    sample counts as zero in the RAG metrics' denominators (``failure_rate`` says how many),
    so the run's metrics are complete and the run ``completed``."""
    if len(statuses) < planned:
        return False
    failed = {case for (case, _), status in statuses.items() if status in FAILED_CELL_STATUSES}
    if not failed or any(s not in TERMINAL_CELL_STATUSES for s in statuses.values()):
        return False
    kinds = suite_kinds(manifest)
    benchmarks = {case.id: case.benchmark for case in manifest.cases}
    return all(kinds.get(benchmarks.get(case, "")) == "rag" for case in failed)


def finalize_run(
    store: Store,
    run_id: str,
    *,
    runner: dict[str, Any],
    interrupted: bool = False,
    workers_lost: Sequence[str] = (),
    json_path: Path | None = None,
    held_elsewhere: bool = False,
    manifest: Manifest | None = None,
    late_peak: tuple[str, Callable[[], float]] | None = None,
    ahead: ReportAhead | None = None,
) -> dict[str, Any]:
    """Settle, set the final status and write ``report.json`` (and ``json_path``).

    ``held_elsewhere``: another live process executes the run (this one only found it by its
    run key): the report is built as the store has it now, and nothing of the run changes.
    ``manifest``: the run's frozen plan as this process holds it (not read again).
    ``late_peak``: (this process's id, a sampler of its peak RSS in MB): sampled again once
    the report is built, just before it is written, so the run's ``peak_rss_mb`` includes
    building the report. ``ahead``: the report this process began while the run's last cells
    ran (``app/report_ahead.py``), given up when ending the run settles anything."""
    run = store.require_run(run_id)
    if held_elsewhere:
        report = report_from_store(store, run_id, manifest=manifest, saved=False)
        if json_path is not None:
            write_report(report, json_path)
        return report
    if run.status in ("queued", "running"):
        if settle_in_flight(store, run_id) and ahead is not None:
            ahead.give_up()  # a cell it was fed may have changed
        stops = [e["data"] for e in every_event(store, run_id, kinds=("dispatch_stopped",))]
        if manifest is not None and manifest.plan_sha256 == run.plan_sha256:
            planned = manifest.planned_count()  # the plan this process holds
        else:
            planned = len(store.plan_outline(run_id).cells)
        status = final_status(
            store.status_counts(run_id),
            planned,
            stops,
            interrupted,
            bool(workers_lost),
        )
        observed = store.events(run_id, limit=1, kinds=(FAILURE_OBSERVED,))
        failure = observed[0]["data"] if observed else None
        error = failure.get("summary") if failure else None
        faults = [stop["reason"] for stop in stops if stop.get("interrupted")]
        if faults:
            error = faults[0]
        elif (
            status == "failed"
            and not stops
            and failed_samples_only(
                store.result_statuses(run_id), planned, manifest or store.get_manifest(run_id)
            )
        ):
            status, error = "completed", None  # the RAG rows' failure_rate says how many
        elif status == "interrupted":
            error = f"{WORKER_STOPPED} (lost: {', '.join(workers_lost)})"
        processes = store.processes(run_id)
        engines = [p for p in processes if p.get("role") != "controller"]
        peaks = [p["peak_rss_mb"] for p in processes if p.get("peak_rss_mb") is not None]
        runner = {
            **(store.get_runner(run_id) or {}),
            **runner,
            "processes": len(engines),
            "peak_rss_mb": max(peaks) if peaks else None,
            "process_details": processes,
            "effective_concurrency": effective_concurrency(engines),
        }
        store.set_runner(run_id, runner)
        run = store.set_run_status(run_id, status, error)
        report = report_from_store(store, run_id, manifest=manifest, saved=False, ahead=ahead)
        if late_peak is not None:
            process, sample = late_peak
            report["provenance"]["runner"] = record_peak(store, run_id, process, sample())
    else:  # already ended: served as saved when nothing changed since
        report = report_from_store(store, run_id, manifest=manifest)
    report = with_head(report)  # validated once for every file written from it
    write_run_report(store, run_id, report, json_path)
    return report


def finalize_sharded(
    store: Store, run_id: str, *, runner: dict[str, Any], json_path: Path | None = None
) -> dict[str, Any]:
    """``srbench finalize RUN``: end a sharded run whose shards all ended or died (a shard that
    never started counts as lost) and write its report; refused, naming them, while any shard
    is held by a live process (``shards.close_shards``)."""
    lost = close_shards(store, run_id)
    return finalize_run(store, run_id, runner=runner, workers_lost=lost, json_path=json_path)


def effective_concurrency(engines: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """How many cells were in flight at once at most, against the concurrency asked for, and
    why not more: the cells whose test bodies waited for their item's turn, and the fixtures
    that made them wait (None where the processes did not record it)."""
    recorded = [p for p in engines if p.get("peak_in_flight") is not None]
    if not recorded:
        return None
    waited: dict[str, dict[str, Any]] = {}
    for process in recorded:
        for name, seen in (process.get("waited_for") or {}).items():
            entry = waited.setdefault(
                name, {"scope": seen.get("scope"), "autouse": seen.get("autouse"), "cells": 0}
            )  # (autouse: None from a process of a version that did not record it)
            entry["cells"] += int(seen.get("cells") or 0)
    return {
        "peak_in_flight": sum(int(p["peak_in_flight"]) for p in recorded),
        "configured": sum(int(p.get("concurrency") or 0) for p in recorded),
        "cells": sum(int(p.get("cells") or 0) for p in recorded),
        "cells_at_their_turn": sum(int(p.get("cells_at_their_turn") or 0) for p in recorded),
        "waited_for": dict(sorted(waited.items(), key=lambda kv: -kv[1]["cells"])),
    }


def record_peak(store: Store, run_id: str, process_id: str, peak_mb: float) -> dict[str, Any]:
    """Raise ``process_id``'s recorded peak RSS (and the run's) to ``peak_mb``; the runner
    provenance as stored afterwards."""
    runner = store.get_runner(run_id) or {}
    details = [dict(process) for process in runner.get("process_details") or []]
    for process in details:
        if process.get("process_id") == process_id:
            process["peak_rss_mb"] = max(process.get("peak_rss_mb") or 0.0, peak_mb)
    peaks = [p["peak_rss_mb"] for p in details if p.get("peak_rss_mb") is not None]
    runner.update(process_details=details, peak_rss_mb=max([*peaks, peak_mb]))
    store.set_runner(run_id, runner)
    return runner


def write_run_report(
    store: Store, run_id: str, report: dict[str, Any], json_path: Path | None
) -> None:
    """``report.json`` in the run's folder, and ``json_path`` when asked for."""
    write_report(report, store.run_dir(run_id) / "report.json")
    if json_path is not None:
        write_report(report, json_path)
    save_report(store, run_id, report)  # for the next reader; nothing if the run is not final


def write_outputs(
    store: Store,
    run_id: str,
    report: dict[str, Any],
    json_path: Path | None,
    html_path: Path | None,
    *,
    manifest: Manifest | None = None,
) -> list[str]:
    """The JSON and HTML reports the user asked for. A path that cannot be written costs
    nothing else: the run stays saved in the store (with its ``report.json``), and each
    failure is one line naming the file and saying how to write the report again.
    ``manifest``: the run's frozen plan when the caller holds it (not validated again)."""
    problems = []
    for what, path, flag in (
        ("JSON report", json_path, "--json"),
        ("HTML report", html_path, "--html"),
    ):
        if path is None:
            continue
        try:
            if flag == "--json":
                write_report(report, path)
            else:
                write_html_report(store, run_id, report, path, manifest=manifest)
        except OutputError as error:
            problems.append(
                f"pytest-srbench: the {what} was not written: {error}; the run {run_id} is "
                f"saved in the store ({srbench_command(store.location, 'report', run_id, flag, 'PATH')} "
                "writes it)"
            )
    return problems
