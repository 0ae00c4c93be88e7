"""A run's report from the store is built in one pass, a page of cells at a time: it is the
report of the same rows read into lists (byte for byte), whatever the page size, and the
process never holds more than about a page of result rows and calls at once."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import weakref
from types import SimpleNamespace
from typing import Any

import orjson
import pytest

from pytest_srbench.app.reports import (
    read_report_file,
    report_from_store,
    write_html_report,
)
from pytest_srbench.core.compare.runs import RunSide
from pytest_srbench.core.offline.reconcile import build_artifact
from pytest_srbench.core.report.build import FAILURE_OBSERVED
from pytest_srbench.render.cells_file import CellsFile
from pytest_srbench.render.json_report import report_json, write_report
from pytest_srbench.store import cell_reader
from pytest_srbench.store.corrections import record_correction
from tests.app.helpers import RUN, from_lists, stored
from tests.core.report.helpers import ROUTED, rag_plan
from tests.core.report.random_runs import plan, rows


@pytest.mark.parametrize(
    ("seed", "repeats", "preview"),
    [(0, 1, False), (1, 3, False), (2, 1, True), (3, 2, False), (4, 1, False)],
)
def test_the_report_from_the_store_is_the_report_of_its_rows_at_any_page_size(
    tmp_path, seed, repeats, preview
):
    rng = random.Random(seed)
    frozen = plan(rng, repeats=repeats, preview=preview)
    results, calls = rows(rng, frozen)
    events = [(FAILURE_OBSERVED, {"summary": "boom"})] if seed == 4 else []
    store = stored(tmp_path, frozen, results, calls, events)
    expected = from_lists(store)
    for page in (1, 3, 500):
        report = report_from_store(store, RUN, page=page)
        assert isinstance(report["cells"], CellsFile)
        assert report_json(report) == expected


def test_rag_sections_and_an_accounting_correction_come_out_the_same(tmp_path):
    frozen = rag_plan()
    rag_id = next(c.id for c in frozen.cases if c.benchmark == "rag-x")
    found = {"ranked_note_ids": ["n01"], "ranked_block_ids": ["n01-b3"],
             "cited_block_ids": ["n01-b3"], "latency_ms": 12.5, "embedding": ROUTED}  # fmt: skip
    results = [
        {"case_id": rag_id, "target_id": "fts", "status": "completed", "correct": None,
         "details": {"rag": found}},
        {"case_id": rag_id, "target_id": "hybrid", "status": "failed", "error": "HTTP 500"},
        {"case_id": "mmlu-pro/0", "target_id": "chat", "status": "completed", "correct": True},
    ]  # fmt: skip
    calls = [{"id": "call-1", "case_id": "mmlu-pro/0", "target_id": "chat", "role": "subject",
              "status": "completed", "usage": None, "cost_usd": 0.5}]  # fmt: skip
    store = stored(tmp_path, frozen, results, calls)
    row = {"call_id": "call-1", "original_receipt_sha256": "0" * 64, "original_usage": None,
           "original_cost_usd": 0.5, "verified": True, "cost_usd": 0.25,
           "usage": {"input_tokens": 3, "cached_input_tokens": 0, "cache_write_tokens": 0,
                     "output_tokens": 1}}  # fmt: skip
    record_correction(store, build_artifact(RUN, frozen.plan_sha256, [row]))
    report = report_from_store(store, RUN, page=1)
    assert report["rag"] is not None and report["provenance"]["accounting_correction"]
    assert report_json(report) == from_lists(store)


def test_the_report_never_holds_more_than_a_page_of_rows(tmp_path, monkeypatch):
    """Every result row and receipt the store hands out is tracked until it is freed: with 40
    cells a page, at most about two pages' rows are alive at once, of ~1,300 in the run."""
    rng = random.Random(7)
    frozen = plan(rng)
    while len(frozen.planned_keys()) < 600:
        frozen = plan(rng, repeats=25)
    results, calls = rows(rng, frozen)
    store = stored(tmp_path, frozen, results, calls)
    alive = {"now": 0, "most": 0, "made": 0}

    class Row(dict):  # a dict that can be watched
        pass

    def freed() -> None:
        alive["now"] -= 1

    def loads(data: bytes) -> Any:
        row = Row(orjson.loads(data))
        alive["now"] += 1
        alive["made"] += 1
        alive["most"] = max(alive["most"], alive["now"])
        weakref.finalize(row, freed)
        return row

    monkeypatch.setattr(cell_reader, "orjson", SimpleNamespace(loads=loads))
    report = report_from_store(store, RUN, page=40)
    write_report(report, tmp_path / "report.json")
    assert alive["made"] == len(results) + len(calls) > 1000
    assert alive["most"] <= 2 * 40 * 4  # a page of cells with their calls, and the next
    monkeypatch.undo()
    assert (tmp_path / "report.json").read_text() == from_lists(store)


def test_a_report_from_the_store_compares_and_renders_from_its_cells_file(tmp_path):
    rng = random.Random(3)
    frozen = plan(rng, repeats=2)
    results, calls = rows(rng, frozen)
    store = stored(tmp_path, frozen, results, calls)
    report = report_from_store(store, RUN, page=2)
    side = RunSide.from_report(report)
    assert side.cells is report["cells"]  # read again from its file, not copied
    assert list(side.cells) == json.loads(from_lists(store))["cells"]
    write_report(report, tmp_path / "report.json")
    assert read_report_file(tmp_path / "report.json") == json.loads(from_lists(store))
    write_html_report(store, RUN, report, tmp_path / "report.html")
    page = (tmp_path / "report.html").read_text()
    assert page.count('class="srbench-page"') == 1 and "question q0" in page


@pytest.mark.parametrize("explicit_cells", [False, True])
def test_the_html_drill_down_reads_the_same_cases_with_a_plan_without_content(
    tmp_path, explicit_cells
):
    from pytest_srbench.app.reports import stored_details
    from pytest_srbench.core.models import Cell

    rng = random.Random(5)
    frozen = plan(rng, repeats=2)
    if explicit_cells:  # not case by case: the whole plan is read again for its cases
        keys = frozen.planned_keys()
        cells = [Cell(case_id=c, target_id=t) for c, t in keys[1::2] + keys[::2]]
        frozen = frozen.model_copy(update={"execution_cells": cells})
    results, calls = rows(rng, frozen)
    store = stored(tmp_path, frozen, results, calls)
    outline = store.report_plan(RUN)
    expected = list(stored_details(store, RUN, store.get_manifest(RUN)))
    assert list(stored_details(store, RUN, outline)) == expected
    assert any(case is not None and "question" in case["prompt"] for case, _ in expected)
    report = report_from_store(store, RUN, manifest=outline)
    write_html_report(store, RUN, report, tmp_path / "outline.html", manifest=outline)
    write_html_report(store, RUN, report, tmp_path / "whole.html")
    assert (tmp_path / "outline.html").read_text() == (tmp_path / "whole.html").read_text()


def test_srbench_report_pages_through_a_store_larger_than_a_page(tmp_path):
    rng = random.Random(11)
    frozen = plan(rng, repeats=60)
    assert len(frozen.planned_keys()) > cell_reader.PAGE
    results, calls = rows(rng, frozen)
    store = stored(tmp_path, frozen, results, calls)
    out = tmp_path / "typed.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "--store", str(store.root), "report", RUN,
         "--json", str(out)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_text() == from_lists(store)
    assert f"run {RUN}" in done.stdout
