"""Render the HTML report of a synthetic 10,000-cell run: render time and file size, next to
the JSON report of the same run (the ratio is the figure to read), and — when Chromium and
Playwright are present — how long the page takes to load, sort and filter its case table.

    python bench/html_report.py [--cells 10000] [--targets 2] [--repeat 3] [--no-browser]
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_srbench.core.models import Case, DatasetInfo, Message, Prices, Run, Target
from pytest_srbench.core.plan.build import freeze_plan
from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS
from pytest_srbench.core.report.build import build_report
from pytest_srbench.core.report.drilldown import case_details
from pytest_srbench.render.html import render_run_html
from pytest_srbench.render.json_report import report_json

PRICE = Prices(input=1, cached_input=0.5, cache_write=1, output=2)
PROMPT = "Which option follows from the statement below? " * 12  # ~560 characters
ANSWER = "Working through the options one by one, the answer is C. " * 6  # ~350 characters


def synthetic_run(
    cells: int, targets: int
) -> tuple[Any, Run, list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(5)
    names = sorted(BENCHMARK_WEIGHTS)
    cases = [
        Case(
            id=f"{names[i % len(names)]}/case-{i:05d}",
            benchmark=names[i % len(names)],
            messages=[Message(role="user", content=f"{PROMPT} ({i})")],
            answer="C",
        )
        for i in range(cells // targets)
    ]
    target_list = [
        Target(id=f"t{k}", model=f"m{k}", base_url="http://127.0.0.1:9/v1", prices={f"m{k}": PRICE})
        for k in range(targets)
    ]
    manifest = freeze_plan(
        targets=target_list,
        cases=cases,
        dataset=DatasetInfo(profile="standard", seed=1),
        adapter_versions={b: "1" for b in names},
    )
    results = []
    calls = []
    for target in target_list:
        for case in cases:
            status = "failed" if rng.random() < 0.01 else "completed"
            latency = rng.lognormvariate(-1, 0.6)
            results.append(
                {"case_id": case.id, "target_id": target.id, "benchmark": case.benchmark,
                 "status": status, "correct": rng.random() < 0.7 if status == "completed" else None,
                 "answer": "C", "latency_s": latency, "ttft_s": latency / 3,
                 "cost_usd": 0.0004, "details": {"answer_status": "answered"},
                 "error": "Target HTTP 503" if status == "failed" else None}
            )  # fmt: skip
            calls.append(
                {"id": f"{case.id}-{target.id}", "case_id": case.id, "target_id": target.id,
                 "role": "subject", "status": "completed", "model": target.model,
                 "usage": {"input_tokens": 140, "cached_input_tokens": 0, "cache_write_tokens": 0,
                           "output_tokens": 90},
                 "cost_usd": 0.0004, "latency_s": latency, "ttft_s": latency / 3,
                 "final": ANSWER, "finish_reason": "stop"}
            )  # fmt: skip
    run = Run(id="run-bench", status="completed", created_at="2026-11-30T00:00:00+00:00",
              updated_at="2026-11-30T00:10:00+00:00", plan_sha256=manifest.plan_sha256)  # fmt: skip
    return manifest, run, results, calls


def median_time(repeat: int, action: Any) -> tuple[float, Any]:
    times = []
    value = None
    for _ in range(repeat):
        start = time.perf_counter()
        value = action()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def browser_figures(path: Path) -> dict[str, float] | None:
    executable = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if executable is None:
        return None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        start = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_selector("html[data-ready='1']")
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        page.click("th[data-col='5'] button")
        page.wait_for_function(
            "document.querySelector(\"th[data-col='5']\").getAttribute('aria-sort') === 'ascending'"
        )
        sort = time.perf_counter() - start
        start = time.perf_counter()
        page.fill("#f-text", "case-0099")
        page.wait_for_function(
            "document.getElementById('cases-info').textContent.indexOf(' of ') > 0"
        )
        filtered = time.perf_counter() - start
        start = time.perf_counter()
        page.click("#cases-body button.open")
        page.wait_for_selector("#drill:not([hidden])")
        drill = time.perf_counter() - start
        browser.close()
    return {"load": loaded, "sort": sort, "filter": filtered, "drill-down": drill}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cells", type=int, default=10_000)
    parser.add_argument("--targets", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    manifest, run, results, calls = synthetic_run(args.cells, args.targets)
    report_s, report = median_time(args.repeat, lambda: build_report(manifest, run, results, calls))
    json_s, json_text = median_time(args.repeat, lambda: report_json(report))
    details_s, details = median_time(args.repeat, lambda: case_details(manifest, results, calls))
    html_s, html = median_time(args.repeat, lambda: render_run_html(report, details))
    cells = len(results)
    print(
        f"synthetic run: {cells:,} cells ({cells // args.targets:,} cases x {args.targets} targets)"
    )
    print(f"  build report (shared)   {report_s * 1000:8.1f} ms")
    print(
        f"  JSON report             {json_s * 1000:8.1f} ms   {len(json_text.encode()) / 1e6:6.2f} MB"
    )
    print(f"  case details            {details_s * 1000:8.1f} ms")
    print(f"  HTML render             {html_s * 1000:8.1f} ms   {len(html.encode()) / 1e6:6.2f} MB"
          f"   ({html_s / json_s:.1f}x the JSON time, {html_s / cells * 1e6:.0f} µs per cell)")  # fmt: skip
    if args.no_browser:
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "report.html"
        path.write_text(html, encoding="utf-8")
        figures = browser_figures(path)
    if figures is None:
        print("  browser: Chromium or Playwright not available; skipped")
        return
    print(
        "  in headless Chromium: " + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in figures.items())
    )


if __name__ == "__main__":
    main()
