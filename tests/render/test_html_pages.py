"""The HTML report embeds its case table in pages of cells, written while the report's cells
are read; each page carries the drill-down texts of its own cells and cases."""

import json
import random
import re

from pytest_srbench.core.report.build import build_report
from pytest_srbench.core.report.drilldown import case_details
from pytest_srbench.render.html import render_run_html, run_html_chunks
from tests.core.helpers import run
from tests.core.report.random_runs import plan, rows

PAGE = re.compile(r'<script type="application/json" class="srbench-page">(.*?)</script>')


def pages_of(page: str) -> list[dict]:
    return [json.loads(block) for block in PAGE.findall(page)]


def test_the_case_table_comes_in_pages_that_join_into_every_cell():
    rng = random.Random(5)
    frozen = plan(rng, repeats=2)
    results, calls = rows(rng, frozen)
    report = build_report(frozen, run(), results, calls)
    details = case_details(frozen, results, calls)
    whole = "".join(
        run_html_chunks(report, ((details["cases"].get(c["case_id"]),
                                  details["cells"].get(f"{c['case_id']}|{c['target_id']}"))
                                 for c in report["cells"]), page=3)
    )  # fmt: skip
    pages = pages_of(whole)
    assert len(pages) == -(-len(report["cells"]) // 3) > 1
    assert all(len(p["rows"]) == 3 for p in pages[:-1])
    joined = [row for p in pages for row in p["rows"]]
    assert [(r[0], r[1]) for r in joined] == [
        (c["case_id"], ["single", "router"].index(c["target_id"])) for c in report["cells"]
    ]
    for p in pages:  # each page's drill-down texts are its own cells' and cases'
        own = {f"{r[0]}|{['single', 'router'][r[1]]}" for r in p["rows"]}
        assert set(p["cells"]) <= own and set(p["cases"]) <= {r[0] for r in p["rows"]}
    assert {k for p in pages for k in p["cells"]} == {
        k
        for k in details["cells"]
        if k in {f"{c['case_id']}|{c['target_id']}" for c in report["cells"]}
    }
    meta = json.loads(re.search(r'id="srbench-data">(.*?)</script>', whole).group(1))
    assert meta["targets"] == ["single", "router"] and meta["benchmarks"] == sorted(
        {c["benchmark"] for c in report["cells"]}
    )


def test_one_page_by_default_for_a_small_run_and_none_without_cells():
    rng = random.Random(6)
    frozen = plan(rng)
    results, calls = rows(rng, frozen)
    report = build_report(frozen, run(), results, calls)
    assert len(pages_of(render_run_html(report))) == 1
    assert pages_of(render_run_html({**report, "cells": []})) == []
