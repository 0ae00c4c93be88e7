"""The HTML report in a real headless Chromium: a quick-profile run (synthetic suites) with a
target whose answers carry hostile markup. No console error, no network request, the page's
numbers equal the JSON report's, model output stays text, keyboard drill-down works, narrow
windows do not overflow; screenshots land in reports/ for review."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.browser import HOSTILE, launched_browser
from tests.zygote_server import new_session_command

# one worker makes the quick-profile run and the browser once for all tests here
pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("html-report")]

REPO = Path(__file__).resolve().parents[2]
CONFIG = f"""
[tool.srbench]
default_targets = ["steady", "hostile"]

[[tool.srbench.targets]]
id = "steady"
model = "steady-model"
simulated = true
prices = {{ steady-model = {{ input = 1.0, cached_input = 0.5, cache_write = 1.0, output = 2.0 }} }}

[[tool.srbench.targets]]
id = "hostile"
model = "hostile-model"
simulated = true
prices = {{ hostile-model = {{ input = 0.2, cached_input = 0.1, cache_write = 0.2, output = 0.4 }} }}

[tool.srbench.simulator.models.steady-model]
accuracy = 0.85
latency_s = 0.0
prices = {{ input = 1.0, cached_input = 0.5, cache_write = 1.0, output = 2.0 }}

[tool.srbench.simulator.models.hostile-model]
accuracy = 0.6
latency_s = 0.0
inject_markup = {json.dumps(HOSTILE)}
prices = {{ input = 0.2, cached_input = 0.1, cache_write = 0.2, output = 0.4 }}
"""


# The quick profile's benchmarks but livecodebench: its 30 cases are sandboxed program runs
# (half this run's CPU) and its cells look like any other in the page; the router view's
# smoke run below renders livecodebench cells in the browser.
QUICK_BENCHMARKS = [
    "mmlu-pro", "gpqa-diamond", "hle", "scicode", "terminal-bench-2.1", "simpleqa-verified",
    "arc-agi-2", "tau3",
]  # fmt: skip


@pytest.fixture(scope="module")
def quick_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("html")
    (root / "pyproject.toml").write_text(CONFIG)
    selected = [arg for name in QUICK_BENCHMARKS for arg in ("--benchmark", name)]
    for command in (
        [sys.executable, "-m", "pytest_srbench", "datasets", "synth", "--profile", "quick",
         *selected],
        [*new_session_command(), "-p", "no:cacheprovider", "-q", "--srbench-profile=quick",
         *[f"--srbench-benchmark={name}" for name in QUICK_BENCHMARKS],
         "--srbench-concurrency=64", "--srbench-json=report.json", "--srbench-html=report.html"],
    ):  # fmt: skip
        done = subprocess.run(command, cwd=root, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return root / "report.html", json.loads((root / "report.json").read_text())


@pytest.fixture(scope="module")
def browser():
    yield from launched_browser()


class Watched:
    """A page with every console message, page error and request recorded."""

    def __init__(self, browser, path: Path, width: int = 1280) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.console: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.console.append(f"{m.type}: {m.text}"))
        self.page.on("pageerror", lambda e: self.console.append(f"pageerror: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("html[data-ready='1']")

    def remote_requests(self) -> list[str]:
        return [url for url in self.requests if not url.startswith("file://")]


def test_page_matches_the_json_and_loads_nothing(quick_report, browser):
    path, report = quick_report
    assert path.stat().st_size < 5 * 1024 * 1024  # a quick-profile run stays small
    watched = Watched(browser, path)
    page = watched.page
    assert watched.console == []
    assert watched.remote_requests() == []
    assert page.text_content("#run-id") == report["run_id"]
    assert page.text_content("#planned-cells") == str(report["summary"]["planned_cells"])
    for target in report["summary"]["targets"]:
        row = page.locator(f"#targets tr[data-target='{target['id']}']")
        assert row.locator("[data-metric=accuracy]").text_content() == f"{target['accuracy']:.3f}"
        assert row.locator("[data-metric=macro]").text_content() == (
            f"{target['macro_accuracy']:.3f}"
        )
        assert row.locator("[data-metric=cost]").text_content() == f"${target['cost_usd']:.4f}"
    cells = report["summary"]["planned_cells"]
    assert (
        page.text_content("#cases-info")
        == f"{cells} of {cells} cells · page 1 of {-(-cells // 100)}"
    )
    reports = REPO / "reports"
    reports.mkdir(exist_ok=True)
    page.screenshot(path=str(reports / "html-summary.png"), full_page=False)
    page.close()


def test_router_view_matches_the_json(tmp_path, browser):
    (tmp_path / "pyproject.toml").write_text("[tool.srbench]\n")
    done = subprocess.run(
        [*new_session_command(), "-p", "no:cacheprovider", "-q", "--srbench-profile=smoke",
         "--srbench-target=sim-small", "--srbench-target=sim-router",
         "--srbench-limits", "max_cost_usd=200", "--srbench-json=report.json",
         "--srbench-html=report.html"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    path, report = tmp_path / "report.html", json.loads((tmp_path / "report.json").read_text())
    router = next(t for t in report["summary"]["targets"] if t["id"] == "sim-router")
    assert router["decision_breakdown"], "the simulated router reported no decisions"
    watched = Watched(browser, path)
    page = watched.page
    for decision in router["decision_breakdown"]:
        row = page.locator(f"tr[data-router='sim-router'][data-decision='{decision['label']}']")
        assert row.locator("[data-metric=cases]").text_content() == str(decision["cases"])
        assert row.locator("[data-metric=accuracy]").text_content() == f"{decision['accuracy']:.3f}"
    continuity = page.locator("dl.continuity").first.text_content() or ""
    assert f"{router['continuity']['multi_request_tasks']}" in continuity
    assert "session_aware" in continuity
    assert "Frozen recipe: captured" in (page.text_content("body") or "")
    assert watched.console == []
    page.close()


def test_model_output_is_text_and_the_drilldown_works_by_keyboard(quick_report, browser):
    path, report = quick_report
    watched = Watched(browser, path)
    page = watched.page
    page.select_option("#f-target", label="hostile")
    page.select_option("#f-benchmark", label="mmlu-pro")
    first = page.locator("#cases-body button.open").first
    first.focus()
    page.keyboard.press("Enter")
    assert page.locator("#drill").is_visible()
    assert page.evaluate("document.activeElement.id") == "drill-title"
    shown = page.locator("#drill pre", has_text="<script>window.__pwned")
    assert shown.count() >= 1  # the markup is displayed as text ...
    assert page.evaluate("typeof window.__pwned") == "undefined"  # ... and never ran
    assert page.title() != "pwned"
    assert page.locator("#drill img").count() == 0
    assert watched.remote_requests() == []
    receipts = page.locator("#drill table")
    assert receipts.count() >= 1 and "completed" in receipts.first.text_content()
    reports = REPO / "reports"
    reports.mkdir(exist_ok=True)
    page.screenshot(path=str(reports / "html-drilldown.png"), full_page=False)
    page.keyboard.press("Escape")
    assert page.locator("#drill").is_hidden()
    assert page.evaluate("document.activeElement.className") == "open"
    assert watched.console == []
    page.close()


def test_filters_sort_and_pages(quick_report, browser):
    path, report = quick_report
    page = Watched(browser, path).page
    wrong = sum(1 for c in report["cells"] if c["status"] == "completed" and c["correct"] is False)
    page.select_option("#f-outcome", "wrong")
    assert page.text_content("#cases-info").startswith(f"{wrong} of ")
    outcomes = page.locator("#cases-body td:nth-child(4)").all_text_contents()
    assert outcomes and set(outcomes) == {"wrong"}
    page.select_option("#f-outcome", "")
    page.fill("#f-text", "tau3/")
    tau = sum(1 for c in report["cells"] if c["case_id"].startswith("tau3/"))
    assert page.text_content("#cases-info").startswith(f"{tau} of ")
    page.fill("#f-text", "")
    page.click("th[data-col='5'] button")  # latency ascending
    latencies = page.locator("#cases-body td:nth-child(6)").all_text_contents()
    values = [float(v.rstrip("s")) for v in latencies if v != "—"]
    assert values == sorted(values)
    assert page.get_attribute("th[data-col='5']", "aria-sort") == "ascending"
    page.click("#next")
    assert "page 2 of" in page.text_content("#cases-info")
    page.close()


def test_narrow_window_does_not_overflow(quick_report, browser):
    path, _ = quick_report
    page = Watched(browser, path, width=390).page
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 1
    page.close()


def test_compare_page_in_the_browser(tmp_path, browser):
    # two small runs of one plan: the compare page's rows are per target, not per cell
    (tmp_path / "pyproject.toml").write_text(CONFIG)
    for name in ("first", "second"):
        done = subprocess.run(
            [*new_session_command(), "-p", "no:cacheprovider", "-q",
             "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
             "--srbench-benchmark=gpqa-diamond", f"--srbench-json={name}.json"],
            cwd=tmp_path, capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:]
    out = tmp_path / "compare.html"
    compared = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "compare", "first.json", "second.json",
         "--html", str(out), "--format", "json"],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    result = json.loads(compared.stdout)
    page = browser.new_page()
    errors: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: errors.append(m.text))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(out.as_uri())
    assert errors == []
    assert [url for url in requests if not url.startswith("file://")] == []
    assert page.text_content("#baseline-id") == result["baseline_run_id"]
    for row in result["candidates"][0]["comparisons"]:
        cell = page.locator(f"tr[data-target='{row['candidate_target_id']}'] [data-metric=delta]")
        assert cell.text_content() == f"{row['quality_delta']:+.3f}"
    page.close()


def test_rag_and_agent_sections_in_the_browser(tmp_path, browser):
    (tmp_path / "pyproject.toml").write_text("[tool.srbench]\n")
    done = subprocess.run(
        [*new_session_command(), "-p", "no:cacheprovider", "-q",
         "--srbench-benchmark=rag-smoke", "--srbench-benchmark=agent-smoke", "--srbench-offline",
         "--srbench-json=report.json", "--srbench-html=report.html"],
        cwd=tmp_path, capture_output=True, text=True,
        env={**os.environ, "SRBENCH_SIM_EMBEDDER": "hashing"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((tmp_path / "report.json").read_text())
    watched = Watched(browser, tmp_path / "report.html")
    page = watched.page
    for row in report["rag"]["rows"]:
        cells = page.locator(f"#rag tr[data-rag='{row['target_id']}']")
        assert cells.locator("[data-metric=hit_at_5]").text_content() == f"{row['hit_at_5']:.3f}"
        assert cells.locator("[data-metric=mrr]").text_content() == f"{row['mrr']:.3f}"
    for row in report["agent"]["rows"]:
        cells = page.locator(f"#agent tr[data-agent='{row['target_id']}']")
        assert cells.locator("[data-metric=succeeded]").text_content() == (
            f"{row['succeeded_cases']} / {row['total_cases']}"
        )
    assert watched.console == [] and watched.remote_requests() == []
    page.close()
