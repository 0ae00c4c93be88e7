"""The gate in the HTML report, in a real headless Chromium: a four-benchmark session whose
mmlu-pro collapsed shows FAILED with mmlu-pro's Δ row (baseline, candidate, Δ, interval,
FAIL) beside it (issue 44)."""

from __future__ import annotations

import pytest

from tests.browser import CHROMIUM_ARGS, chromium_path
from tests.plugin.gate_helpers import BROKEN, FOUR, GOOD, run_pytest

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("gate-html-browser")]


def test_the_collapsed_benchmark_row_is_beside_the_failed_verdict(tmp_path):
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    (tmp_path / "pyproject.toml").write_text(GOOD)
    assert run_pytest(tmp_path, FOUR, "--srbench-json=base.json").returncode == 0
    (tmp_path / "pyproject.toml").write_text(BROKEN)
    done = run_pytest(tmp_path, FOUR, "--srbench-baseline=base.json", "--srbench-html=cand.html")
    assert done.returncode == 1, done.stdout + done.stderr
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto((tmp_path / "cand.html").as_uri())
            page.wait_for_selector("html[data-ready='1']")
            verdict = page.locator("#gate-line")
            assert verdict.inner_text().startswith("FAILED — srbench gate FAILED")
            assert "bad" in (verdict.get_attribute("class") or "")
            assert page.locator("#gate-scope").inner_text() == (
                "Scope: per benchmark: this session is not the full sr-bench set"
            )
            row = page.locator("#gate-benchmarks tr[data-benchmark='mmlu-pro']")
            assert row.is_visible()
            cells = row.locator("td").all_inner_texts()
            assert cells == ["app", "mmlu-pro", "14", "0.929", "0.000", "-0.929",
                             "[-1.000, -0.284]", "FAIL"]  # fmt: skip
            assert "bad" in (row.get_attribute("class") or "")
            # the row sits in the gate's section, right under the verdict
            section = page.locator("section[aria-labelledby='gate-h']")
            assert section.locator("#gate-benchmarks tbody tr").count() == 4
            assert errors == []
        finally:
            browser.close()
