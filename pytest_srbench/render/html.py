"""The HTML report: one self-contained file (inline CSS, SVG and script; no network) rendered
with jinja2 and autoescaping from the report dict — and, for the case drill-down, the bounded
case details of ``core.drilldown``. Model output is data: the page's script only ever sets it
with ``textContent``, and the embedded JSON is escaped so it cannot close its script tag.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jinja2 import Environment

from pytest_srbench.core.compare.caveats import CAVEATS
from pytest_srbench.core.origins import describe_origin, origin_kind
from pytest_srbench.render import charts
from pytest_srbench.render.compare import (
    against_others,
    benchmark_level,
    benchmark_verdict,
    membership_lines,
    scope_text,
)
from pytest_srbench.render.json_report import shaped_cell, validated_head
from pytest_srbench.render.lineage import lineage_lines
from pytest_srbench.render.outputs import write_output_chunks
from pytest_srbench.render.templating import make_environment
from pytest_srbench.render.terminal import (
    NULL,
    coverage,
    interval,
    num,
    seconds,
    signed,
    signed_percent,
    usd,
)

CASE_STATUSES = ("correct", "wrong", "failed", "cancelled", "sent_unknown", "pending", "running")


@cache
def environment() -> Environment:
    env = make_environment("pytest_srbench.render")
    env.filters["usd"] = usd
    env.filters["num"] = num
    env.filters["secs"] = seconds
    env.filters["ms"] = lambda value: NULL if value is None else f"{value:.1f} ms"
    env.filters["pct"] = signed_percent
    env.filters["signed"] = signed
    env.filters["against_others"] = against_others
    env.filters["interval"] = interval
    env.filters["coverage"] = coverage
    env.filters["origin_kind"] = origin_kind
    env.filters["origin"] = describe_origin
    env.globals["asset"] = template_asset
    env.globals["gate_scope_text"] = scope_text
    env.globals["gate_membership"] = membership_lines
    env.globals["gate_benchmark_level"] = benchmark_level
    env.globals["gate_benchmark_verdict"] = benchmark_verdict
    env.globals["script_hash"] = report_script_hash()
    return env


@cache
def template_asset(name: str) -> str:
    """An inline asset (CSS or script) from the templates folder."""
    return (files("pytest_srbench.render") / "templates" / name).read_text(encoding="utf-8")


def script_hash(text: str) -> str:
    """The CSP source (``sha256-…``) that lets exactly this inline script run."""
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def report_script_hash() -> str:
    """The report page's only executable script, pinned by hash in its Content-Security-Policy:
    a script that got into the page any other way would not run."""
    return script_hash(template_asset("report.js"))


def cell_outcome(cell: Mapping[str, Any]) -> str:
    """One word for a cell: correct, wrong, or its status when it has no grade."""
    if cell["status"] == "completed":
        return "correct" if cell["correct"] is True else "wrong"
    return str(cell["status"])


CASE_COLUMNS = ["case", "target", "benchmark", "outcome", "answer status", "latency", "cost",
                "error"]  # fmt: skip
PAGE_CELLS = 1000  # case-table rows per embedded page of data

Details = Iterable[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]


def case_table_meta(report: Mapping[str, Any]) -> dict[str, Any]:
    """The case table's targets, benchmarks and columns (the rows come in pages)."""
    return {
        "targets": [t["id"] for t in report["summary"]["targets"]],
        "benchmarks": sorted({c["benchmark"] for c in report["cells"]}),
        "columns": CASE_COLUMNS,
    }


def details_from_dicts(cells: Iterable[Mapping[str, Any]], details: Mapping[str, Any]) -> Details:
    """Each cell's (case details, cell details) from ``core.report.drilldown.case_details``."""
    cases, by_cell = details.get("cases", {}), details.get("cells", {})
    for cell in cells:
        yield cases.get(cell["case_id"]), by_cell.get(f"{cell['case_id']}|{cell['target_id']}")


def case_table_pages(
    report: Mapping[str, Any],
    meta: Mapping[str, Any],
    details: Details | None,
    page: int = PAGE_CELLS,
) -> Iterator[dict[str, Any]]:
    """The case table's rows (compact lists) and drill-down texts, ``page`` cells at a time,
    in the report's cell order; each page carries the details of its own cells and cases.
    ``details`` runs alongside the report's cells, one (case, cell) pair per cell."""
    t_index = {t: i for i, t in enumerate(meta["targets"])}
    b_index = {b: i for i, b in enumerate(meta["benchmarks"])}
    paired = iter(details) if details is not None else None
    rows: list[list[Any]] = []
    cases: dict[str, Any] = {}
    cells: dict[str, Any] = {}
    for raw in report["cells"]:
        c = shaped_cell(raw)
        rows.append(
            [c["case_id"], t_index[c["target_id"]], b_index[c["benchmark"]], cell_outcome(c),
             c["answer_status"], c["latency_s"], c["cost_usd"], c["error"]]
        )  # fmt: skip
        if paired is not None:
            case_info, cell_info = next(paired)
            if case_info is not None:
                cases[c["case_id"]] = case_info
            if cell_info is not None:
                cells[f"{c['case_id']}|{c['target_id']}"] = cell_info
        if len(rows) == page:
            yield {"rows": rows, "cases": cases, "cells": cells}
            rows, cases, cells = [], {}, {}
    if rows:
        yield {"rows": rows, "cases": cases, "cells": cells}


def run_view(
    report: Mapping[str, Any], details: Details | None, *, page: int = PAGE_CELLS
) -> dict[str, Any]:
    """Everything the run template needs, derived only by layout from the report; the case
    table's pages are made while the page is written."""
    meta = case_table_meta(report)
    pages = case_table_pages(report, meta, details, page)
    has_details = details is not None
    summary = report["summary"]
    targets = summary["targets"]
    frontier = report["frontier"]
    histograms = {
        measure: {
            t["id"]: charts.histogram_bars(
                report["distributions"][measure]["edges"],
                report["distributions"][measure]["counts"].get(t["id"], []),
            )
            for t in targets
        }
        for measure in ("ttft_s", "latency_s")
    }
    return {
        "report": report,
        "targets": targets,
        "target_bars": {t["id"]: charts.interval_bar(t["accuracy"], t["accuracy_ci95"]) for t in targets},
        "benchmark_bars": [
            (row, charts.interval_bar(row["accuracy"], row["accuracy_ci95"]))
            for row in report["benchmarks"]
        ],
        "chart": charts.quality_cost_chart([*frontier["points"], *frontier["unplaced"]]),
        "unplaced": frontier["unplaced"],
        "tokens": charts.token_bars(targets),
        "histograms": histograms,
        "routers": [t for t in targets if t["decisions"] or t["kind"] == "mom"],
        "decision_bars": {
            t["id"]: [charts.interval_bar(d["accuracy"], d["accuracy_ci95"]) for d in t["decision_breakdown"]]
            for t in targets
        },
        "recipes": {r["target_id"]: r for r in report["provenance"].get("recipes") or []},
        "origins": {row["benchmark"]: row["data_source"] for row in report["benchmarks"]},
        "data": meta,
        "pages": pages,
        "has_details": has_details,
        "statuses": CASE_STATUSES,
        "lineage": lineage_lines(report),
    }  # fmt: skip


def run_html_chunks(
    report: Mapping[str, Any], details: Details | None = None, *, page: int = PAGE_CELLS
) -> Iterator[str]:
    """The report page for one run, a piece at a time: the report as validated for the JSON
    file, its case table embedded as pages of ``page`` cells (``details``: each cell's
    drill-down texts, alongside the report's cells)."""
    shaped = validated_head(report)  # (the plan's case list, as the JSON file has it)
    shaped["cells"] = report["cells"]
    view = run_view(shaped, details, page=page)
    return environment().get_template("run.html.j2").generate(**view)


def render_run_html(report: Mapping[str, Any], details: Mapping[str, Any] | None = None) -> str:
    """The whole report page for one run, with ``details`` from ``case_details``."""
    paired = details_from_dicts(report["cells"], details) if details is not None else None
    return "".join(run_html_chunks(report, paired))


def compare_view(result: Mapping[str, Any]) -> dict[str, Any]:
    """The comparison page: per candidate target, intervals, W/L/T, costs; iterations."""
    rows = []
    for candidate in result["candidates"]:
        for row in candidate["comparisons"]:
            stats = row["paired_statistics"]
            rows.append(
                {
                    "run_id": candidate["candidate_run_id"],
                    "created_at": candidate["candidate_created_at"],
                    "row": row,
                    "label": f"{row['candidate_target_id']} ({candidate['candidate_run_id'][-6:]})",
                    "delta": row["quality_delta"],
                    "intervals": {
                        "gate (Wald)": stats["stratified_wald_ci95"],
                        "Hoeffding": row["quality_delta_ci95"],
                        "bootstrap": row["quality_delta_bootstrap_ci95"],
                    },
                }
            )
    by_target: dict[str, list[dict[str, Any]]] = {}
    for entry in rows:
        by_target.setdefault(entry["row"]["candidate_target_id"], []).append(
            {**entry, "intervals": {"gate (Wald)": entry["intervals"]["gate (Wald)"]},
             "label": entry["run_id"][-8:]}
        )  # fmt: skip
    frontier = result["frontier"]
    return {
        "result": result,
        "rows": rows,
        "forest_chart": charts.delta_forest(rows),
        "iterations": {t: charts.delta_forest(entries) for t, entries in by_target.items()},
        "chart": charts.quality_cost_chart([*frontier["points"], *frontier["unplaced"]]),
        "frontier": frontier,
        "caveats": result.get("caveats") or list(CAVEATS),
    }


def render_compare_html(result: Mapping[str, Any]) -> str:
    return environment().get_template("compare.html.j2").render(**compare_view(result))


def write_html(text: str | Iterable[str], path: Path) -> None:
    """Write atomically (a reader never sees half a page), from one text or its pieces; an
    unwritable path raises ``OutputError`` (one line)."""
    write_output_chunks(path, [text] if isinstance(text, str) else text)
