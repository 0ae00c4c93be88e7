"""A finished run's report, saved when it is written and served again while nothing it was
built from has changed: ``srbench report``, the service and comparisons of a 100,000-cell run
read two files instead of rebuilding the report from 10^5 rows.

The report is a pure function of what the store holds for the run and of the code that builds
it. The saved copy carries a key over both — the run row (status, times, error), its runner
record, its result rows per status, its number of calls, its latest accounting correction, its
recovery children, its router recipes and index snapshots, its shards, and the package's source files
(names, sizes, modification times) — and is used only when the key computed now is the same.
Only runs in a final status are saved: nothing writes a final run's calls or results (a
correction, a recovery child or a new owner all change the key). A saved report that cannot
be read is rebuilt; one that cannot be written costs nothing but the next rebuild.

Files in the run's folder, ``report-saved/``: ``summary.json`` (the report without its cells),
``head.json`` (its validated text up to the cells, as the report file starts), ``cells.bin`` (each cell's text as the report file holds it), ``offsets.bin`` (where each cell
starts) and ``key`` (written last: a half-written save is never valid)."""

from __future__ import annotations

import hashlib
import os
from array import array
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import orjson

import pytest_srbench
from pytest_srbench.core.canonical import SPLICED_LIST, compact_spliced_pieces
from pytest_srbench.core.report.build import PlannedCases
from pytest_srbench.render.cells_file import CellsFile
from pytest_srbench.render.json_report import SavedReport, head_pieces
from pytest_srbench.store.base import Store
from pytest_srbench.store.corrections import latest_correction

FINAL = frozenset({"completed", "failed", "cancelled", "interrupted"})
FOLDER = "report-saved"


@cache
def code_fingerprint() -> str:
    """The package's source files (relative name, size, modification time): a report built
    by other code is never served as this code's."""
    root = Path(pytest_srbench.__file__).parent
    digest = hashlib.sha256(getattr(pytest_srbench, "__version__", "").encode())
    for path in sorted(root.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def report_key(store: Store, run_id: str) -> str | None:
    """The key of everything the run's report is built from, or None while the run is not
    in a final status (its report may still change)."""
    run = store.get_run(run_id)
    if run is None or run.status not in FINAL:
        return None
    correction = latest_correction(store, run_id)
    inputs = {
        "code": code_fingerprint(),
        "run": run.model_dump(mode="json"),
        "runner": store.get_runner(run_id),
        "results": store.status_counts(run_id),
        "calls": store.count_calls(run_id),
        "correction": None if correction is None else correction.get("id"),
        "children": [child.model_dump(mode="json") for child in store.children(run_id)],
        "recipes": store.recipes(run_id),
        "indexes": store.snapshots(run_id, "index"),
        "shards": store.shards(run_id),
    }
    return hashlib.sha256(orjson.dumps(inputs, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _folder(store: Store, run_id: str) -> Path:
    return store.run_dir(run_id) / FOLDER


def _saved_key(folder: Path) -> str | None:
    try:
        return (folder / "key").read_text()
    except OSError:
        return None


def save_report(store: Store, run_id: str, report: dict[str, Any], key: str | None = None) -> bool:
    """Save a final run's report (its cells from the ``CellsFile`` it holds) under ``key``
    (default: the key of the store now, for a caller that alone writes the run); False when
    the run is not final, the store is read-only or the files cannot be written."""
    cells = report.get("cells")
    if store.read_only or not isinstance(cells, CellsFile):
        return False
    key = key or report_key(store, run_id)
    if key is None:
        return False
    folder = _folder(store, run_id)
    if _saved_key(folder) == key:  # saved already (perhaps what ``cells`` reads from)
        return True
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "key").unlink(missing_ok=True)  # invalid until the new key is written
        summary = {name: value for name, value in report.items() if name != "cells"}
        with open(folder / "summary.json", "wb") as out:
            out.writelines(summary_json_pieces(summary))
        with open(folder / "head.json", "w", encoding="utf-8") as text:
            text.writelines(head_pieces(report))
        with open(folder / "cells.bin", "wb") as out:
            offsets = cells.copy_to(out)
        (folder / "offsets.bin").write_bytes(offsets.tobytes())
        partial = folder / "key.tmp"
        partial.write_text(key)
        os.replace(partial, folder / "key")
    except OSError:
        return False
    return True


def summary_json_pieces(summary: dict[str, Any]) -> Iterable[bytes]:
    """``orjson.dumps(summary)``, the plan's case list written a batch of cases at a time
    rather than made into one list of 10^5 dicts first."""
    plan = summary.get("plan")
    cases = plan.get("cases") if isinstance(plan, dict) else None
    if not isinstance(plan, dict) or not isinstance(cases, PlannedCases):
        return (orjson.dumps(summary),)
    try:
        return compact_spliced_pieces({**summary, "plan": {**plan, "cases": SPLICED_LIST}}, cases)
    except ValueError:  # the marker spelled elsewhere in the report: the plain way
        return (orjson.dumps({**summary, "plan": {**plan, "cases": list(cases)}}),)


def saved_summary(store: Store, run_id: str) -> dict[str, Any] | None:
    """The saved report without its cells (``summary.json``) when it is current; else None."""
    folder = _folder(store, run_id)
    key = _saved_key(folder)
    if key is None or key != report_key(store, run_id):
        return None
    try:
        found = orjson.loads((folder / "summary.json").read_bytes())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def load_saved_report(store: Store, run_id: str, key: str) -> dict[str, Any] | None:
    """The saved report when it was saved under ``key`` (``report_key`` now); None otherwise
    (not saved, stale, or unreadable: the caller builds it)."""
    folder = _folder(store, run_id)
    if _saved_key(folder) != key:
        return None
    try:
        summary = orjson.loads((folder / "summary.json").read_bytes())
        head = (folder / "head.json").read_text(encoding="utf-8")
        offsets = array("q")
        offsets.frombytes((folder / "offsets.bin").read_bytes())
        cells = CellsFile.saved(folder / "cells.bin", offsets)
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or cells is None:
        return None
    summary["cells"] = cells
    return SavedReport(summary, head)
