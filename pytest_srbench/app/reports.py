"""Reading runs back for reports and comparisons: a run's report (and HTML page) from the
store, and a comparison side from a run id in the store or from a JSON report file."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import ValidationError

from pytest_srbench.app.heap import gc_paused
from pytest_srbench.app.shards import shard_provenance
from pytest_srbench.core.compare.runs import RunSide
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import Case, Manifest, ReportPlan
from pytest_srbench.core.report.build import (
    FAILURE_OBSERVED,
    TARGET_SETUP_FAILED,
    assemble_report,
    pending_reasons_of,
)
from pytest_srbench.core.report.drilldown import case_detail, cell_detail, reveals_answers
from pytest_srbench.core.report.model import ReportModel
from pytest_srbench.core.report.tasks import config_snapshot, suite_kinds
from pytest_srbench.notes.local_embedding import local_embedding
from pytest_srbench.render.cells_file import CellsFile
from pytest_srbench.render.json_report import shaped_cell
from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.store.corrections import latest_correction

if TYPE_CHECKING:
    from pytest_srbench.app.report_ahead import ReportAhead


class RunNotFound(InputError):
    """A run reference names neither a report file nor a run in the store."""


def report_from_store(
    store: Store,
    run_id: str,
    *,
    page: int | None = None,
    manifest: Manifest | None = None,
    saved: bool = True,
    ahead: ReportAhead | None = None,
) -> dict[str, Any]:
    """Recompute a run's full report from its stored manifest, rows, calls and events,
    reading the calls through the run's latest accounting correction when it has one.

    One snapshot of the store, read ``page`` cells at a time (``Store.cell_rows``; its
    default without one); the report's ``cells`` are kept in a temporary file
    (``CellsFile``), not in memory. ``manifest``: the run's frozen plan when the caller
    already holds it (the session that ran it), not read again; it must be the run's.

    ``saved``: a finished run's report saved with nothing changed since is served as saved
    (``app/saved_reports.py``), and one built now is saved for the next reader.

    ``ahead``: the report begun while the run's last cells ran (``app/report_ahead.py``);
    only the cells after the ones it was fed are read, when it still holds."""
    from pytest_srbench.app.saved_reports import load_saved_report, report_key, save_report

    use_saved = saved and page is None
    with store.snapshot(), gc_paused():
        key = report_key(store, run_id) if use_saved else None
        if key is not None and (report := load_saved_report(store, run_id, key)) is not None:
            return report
        report = _build_report(store, run_id, page, manifest, ahead)
    if key is not None:  # the key of what the report was built from, in the same snapshot
        save_report(store, run_id, report, key)
    return report


def _build_report(
    store: Store,
    run_id: str,
    page: int | None,
    manifest: Manifest | None,
    ahead: ReportAhead | None = None,
) -> dict[str, Any]:
    """The report built from the store's rows (inside the caller's snapshot)."""
    run = store.require_run(run_id)
    if manifest is None or manifest.plan_sha256 != run.plan_sha256:
        manifest = store.report_plan(run_id)  # without case content: the report reads none
    # the events the report reads (a run journals three or more per cell): the first failure,
    # and one per target whose fixture failed in set-up
    observed = store.events(run_id, limit=1, kinds=(FAILURE_OBSERVED,))
    setup_failed = store.events(run_id, limit=1000, kinds=(TARGET_SETUP_FAILED,))
    correction = latest_correction(store, run_id)
    started, fed = None, 0  # the cells the report begun early was fed, if it still holds
    if ahead is not None and (started := ahead.take(manifest, correction)) is not None:
        fed = ahead.fed
    planned = manifest.iter_planned_keys()  # read once, into the store's scratch table
    cells = (
        store.cell_rows(run_id, planned, start=fed)
        if page is None
        else store.cell_rows(run_id, planned, page=page, start=fed)
    )
    return assemble_report(
        manifest,
        run,
        cells,
        failure_event=observed[0] if observed else None,
        pending_reasons=pending_reasons_of(setup_failed),
        runner=store.get_runner(run_id),
        correction=correction,
        child_attempts=child_attempts(store, run_id),
        recipes=store.recipes(run_id),
        indexes=store.snapshots(run_id, "index"),
        local_embedding=local_baseline(manifest),
        cell_sink=None if started is not None else CellsFile(),
        shards=shard_provenance(store.shards(run_id)),
        started=started,
    )


def local_baseline(manifest: Manifest) -> dict[str, Any] | None:
    """The local embedding baseline a RAG plan's snapshot records (None without RAG cases)."""
    return local_embedding() if "rag" in suite_kinds(manifest).values() else None


def run_config_snapshot(manifest: Manifest) -> dict[str, Any] | None:
    """The config snapshot of a run's frozen plan, as its report's sections repeat it."""
    return config_snapshot(manifest, local_baseline(manifest))


def child_attempts(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The recovery children of a run (lineage), oldest first."""
    children = []
    for child in store.children(run_id):
        recovery = store.get_manifest(child.id).recovery or {}
        children.append(
            {
                "run_id": child.id,
                "status": child.status,
                "created_at": child.created_at,
                "mode": recovery.get("mode"),
                "cells": len(recovery.get("selected_cells") or []),
            }
        )
    return children


def read_report_file(path: Path) -> dict[str, Any]:
    """A JSON report written by pytest-srbench, validated; errors name the file and field.

    The report without its cells is validated as a whole, then each cell on its own (a cell
    already in its validated shape is kept as parsed), so the file's data is held once."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise RunNotFound(f"{path}: cannot read the report ({error.strerror})") from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:  # what orjson refuses and the standard library reads (NaN, huge integers)
            data = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise RunNotFound(f"{path}: not a JSON report ({error})") from None
    if not isinstance(data, dict):
        raise RunNotFound(f"{path}: not a pytest-srbench report (the file holds no JSON object)")
    cells = data.get("cells")
    try:
        if not isinstance(cells, list):
            ReportModel.model_validate(data)  # names what is wrong with "cells"
            cells = []
        report = ReportModel.model_validate({**data, "cells": []}).model_dump(mode="json")
        for index, cell in enumerate(cells):
            try:
                cells[index] = shaped_cell(cell)
            except ValidationError as error:
                raise _CellError(index, error) from None
    except ValidationError as error:
        raise RunNotFound(f"{path}: not a pytest-srbench report ({_problem(error)})") from None
    except _CellError as error:
        problem = _problem(error.error, ("cells", error.index))
        raise RunNotFound(f"{path}: not a pytest-srbench report ({problem})") from None
    report["cells"] = cells
    return report


class _CellError(Exception):
    def __init__(self, index: int, error: ValidationError) -> None:
        self.index = index
        self.error = error


def _problem(error: ValidationError, prefix: tuple[Any, ...] = ()) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in (*prefix, *first["loc"]))
    return f"{where}: {first['msg']}; {error.error_count()} problem(s)"


def load_side(reference: str, store: Store | None) -> RunSide:
    """A report file when ``reference`` is an existing path, else a run id in ``store``."""
    path = Path(reference)
    if path.is_file():
        return RunSide.from_report(read_report_file(path), source=str(path))
    if store is not None and store.get_run(reference) is not None:
        try:
            return RunSide.from_report(report_from_store(store, reference), source="store")
        except StoreError as error:
            raise RunNotFound(f"run {reference}: {error}") from None
    where = f"in the store at {store.location}" if store is not None else "(no store)"
    raise RunNotFound(f"{reference!r} is neither a report file nor a run {where}")


def stored_details(store: Store, run_id: str, manifest: Manifest) -> Iterator[tuple[Any, Any]]:
    """Each planned cell's drill-down texts read from the store a page at a time: (its case's
    details the first time the case comes, its own details when it has a result row), in
    planned order — alongside the report's cells."""
    reveal = reveals_answers(manifest)
    case_of = _case_reader(store, run_id, manifest)
    last = None
    # the planned cells only: the rows outside the plan are not read (a scan of the run's
    # rows and calls for none, in most runs)
    for cell in store.cell_rows(run_id, manifest.iter_planned_keys(), outside=False):
        case = None
        if cell.case_id != last:
            case = case_detail(case_of(cell.case_id), reveal)
            last = cell.case_id
        own = None
        if cell.result is not None:
            own = cell_detail(cell.result, [call for _, call in cell.calls])
        yield case, own


def _case_reader(store: Store, run_id: str, manifest: Manifest) -> Callable[[str], Case]:
    """A planned cell's case whole (its prompt and reference), asked in planned order: from
    the plan the caller holds, or — a ``ReportPlan`` holds no case content — read from the
    store's plan a batch at a time alongside the cells when they come case by case (no
    explicit execution cells), else from the whole plan read again."""
    if isinstance(manifest, ReportPlan):
        if not manifest.execution_cells:
            stream = store.plan_cases(run_id)

            def next_case(case_id: str) -> Case:
                for case in stream:  # (the plan's cases that have no planned cell skipped)
                    if case.id == case_id:
                        return case
                raise StoreError(f"run {run_id}: case {case_id!r} is not in its plan")

            return next_case
        manifest = store.get_manifest(run_id)
    return {case.id: case for case in manifest.cases}.__getitem__


def write_html_report(
    store: Store,
    run_id: str,
    report: dict[str, Any],
    path: Path,
    *,
    manifest: Manifest | None = None,
) -> None:
    """The self-contained HTML page of a run, with its bounded case drill-down, written while
    the store is read (a page of cells at a time). ``manifest``: the run's frozen plan when
    the caller already holds it (validating a 10^5-case plan again costs a second)."""
    from pytest_srbench.render.html import run_html_chunks, write_html  # jinja2: only here

    if manifest is None or manifest.plan_sha256 != store.require_run(run_id).plan_sha256:
        manifest = store.get_manifest(run_id)
    details = stored_details(store, run_id, manifest)
    write_html(run_html_chunks(report, details), path)
