"""The run page as the results guide says it (issue 46, point 12), in a real headless Chromium
against a real server: Results shows accuracy, interval and cost from the report; results and
calls read at most 100 and show 25 a page; Events read up to 1,000 on open, then "Load more
events", say "loaded N" after a full read, filter the loaded events by type and keep the
cursor and the loaded events when a read fails; recovery candidates are listed with their
exclusion reasons and the run's child runs; a captured recipe downloads. Model output and
event data stay text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser import HOSTILE, chromium_path
from tests.service.dashboard_helpers import CONFIG, PLAN, Server, Watched

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("dashboard-browser")]

BIG = {**PLAN, "name": "run-page", "benchmarks": ["gpqa-diamond", "mmlu-pro", "hle"], "limit": 8}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    chromium_path()
    project = tmp_path_factory.mktemp("run-page")
    (project / "pyproject.toml").write_text(CONFIG)
    running = Server(project)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def big_run(server: Server) -> str:
    run_id: str = server.api("/api/runs", {**BIG, "idempotency_key": "run-page-big"})["run"]["id"]
    assert server.wait_run(run_id)["status"] == "completed"
    return run_id


def queries(requests: list[str], part: str) -> list[dict[str, list[str]]]:
    return [parse_qs(urlparse(u).query) for u in requests if urlparse(u).path.endswith(part)]


def test_results_show_scores_and_25_of_at_most_100_rows(server, browser, big_run):
    report = server.api(f"/api/runs/{big_run}/report")
    planned = report["summary"]["planned_cells"]
    assert planned > 25
    watched = Watched(browser, server, f"/runs/{big_run}")
    page = watched.page
    for target in report["summary"]["targets"]:
        row = page.locator(f"#scores tr[data-target='{target['id']}']")
        row.wait_for()
        shown = float(row.locator("td[data-col=accuracy]").text_content() or "nan")
        assert abs(shown - target["accuracy"]) <= 0.00051  # three decimals
        low, high = (float(x) for x in (row.locator("td[data-col=interval]").text_content() or "")
                     .strip("[]").split(", "))  # fmt: skip
        assert abs(low - target["accuracy_ci95"][0]) <= 0.00051
        assert abs(high - target["accuracy_ci95"][1]) <= 0.00051
        assert row.locator("td[data-col=cost]").text_content() != "—"
    page.wait_for_selector("#results tbody tr[data-case]")
    assert page.locator("#results tbody tr").count() == 25
    assert all(q["limit"] == ["100"] for q in queries(watched.requests, "/results"))
    pages = -(-min(planned, 100) // 25)
    assert page.text_content("#results-page") == f"page 1 of {pages}"
    page.click("#results-more")
    page.wait_for_function(
        f"() => document.getElementById('results-page').textContent === 'page 2 of {pages}'"
    )
    watched.shot("dashboard/run-results.png", full_page=True, commit=True)

    page.click("#tab-calls")
    page.wait_for_selector("#calls tbody tr[data-call]")
    assert page.locator("#calls tbody tr").count() == 25
    assert all(q["limit"] == ["100"] for q in queries(watched.requests, "/calls")
               if "active" not in q)  # fmt: skip
    page.click("#calls-more")
    page.wait_for_function(
        "() => document.getElementById('calls-page').textContent.startsWith('page 2')"
    )
    watched.check()
    watched.close()


def fake_events(total: int) -> list[dict[str, Any]]:
    kinds = ("case_started", "case_completed", "call_sent")
    return [{"seq": n, "at": "2026-01-01T00:00:00Z", "kind": kinds[n % 3],
             "data": {"note": HOSTILE, "n": n}} for n in range(1, total + 1)]  # fmt: skip


def test_events_read_1000_then_load_more_and_a_failed_read_keeps_them(server, browser, big_run):
    events = fake_events(1200)
    asked: list[dict[str, list[str]]] = []
    failures = {"left": 0}

    def answer(route: Any) -> None:
        q = parse_qs(urlparse(route.request.url).query)
        asked.append(q)
        if failures["left"]:
            failures["left"] -= 1
            route.fulfill(status=503, json={"error": {"code": "STORE_BUSY", "message": "busy"}})
            return
        after = int(q.get("after", ["0"])[0])
        limit = int(q["limit"][0])
        rows = [e for e in events if e["seq"] > after][: limit + 1]
        more = len(rows) > limit
        rows = rows[:limit]
        route.fulfill(json={"events": rows, "next_cursor": rows[-1]["seq"] if more else None})

    watched = Watched(browser, server, f"/runs/{big_run}")
    page = watched.page
    page.route("**/events/page?*", answer)
    page.click("#tab-events")
    page.wait_for_function(
        "() => document.getElementById('events').getAttribute('data-loaded') === '1000'"
    )
    assert page.locator("#events tbody tr").count() == 25
    assert sum(int(q["limit"][0]) for q in asked) <= 1000
    assert (page.text_content("#events-info") or "").startswith(
        "loaded 1000 · more: Load more events"
    )
    assert page.text_content("#events-page") == "page 1 of 40"
    assert "<script>" in (page.locator("#events td[data-col=data]").first.text_content() or "")
    # the type filter covers what is loaded
    page.select_option("#events-kind", "case_completed")
    assert page.get_attribute("#events", "data-matching") == str(
        sum(1 for e in events[:1000] if e["kind"] == "case_completed")
    )
    assert set(page.locator("#events td[data-col=kind]").all_text_contents()) == {"case_completed"}
    assert (page.text_content("#events-info") or "").startswith(
        f"{int(page.get_attribute('#events', 'data-matching') or '0')} case_completed of loaded 1000"
    )
    page.select_option("#events-kind", "")
    page.click("#events-next")
    assert page.locator("#events td[data-col=seq]").first.text_content() == "26"
    # a failed read keeps the cursor and the loaded events
    failures["left"] = 1
    before = len(asked)
    page.click("#events-more")
    page.wait_for_function(
        "() => document.getElementById('events-info').textContent.indexOf('the read failed') >= 0"
    )
    assert page.get_attribute("#events", "data-loaded") == "1000"
    assert page.text_content("#events-page") == "page 2 of 40"
    assert asked[before]["after"] == ["1000"]
    assert not page.is_disabled("#events-more")
    page.click("#events-more")
    page.wait_for_function(
        "() => document.getElementById('events').getAttribute('data-loaded') === '1200'"
    )
    assert asked[before + 1]["after"] == ["1000"]  # the same cursor again
    assert page.text_content("#events-info") == "1200 events · all (the run is completed)"
    assert page.is_disabled("#events-more")
    seqs = [e["seq"] for e in events]
    assert page.locator("#events td[data-col=seq]").first.text_content() == str(seqs[25])
    watched.shot("dashboard/run-events.png", full_page=True, commit=True)
    assert [m for m in watched.errors() if "status of 503" not in m] == []
    assert watched.remote_requests() == []
    assert page.evaluate("window.__pwned") is None
    watched.close()


def test_recovery_lists_candidates_reasons_and_child_runs(server, browser):
    run = server.api("/api/runs", {**PLAN, "name": "to-recover", "limit": 1})["run"]
    server.api(f"/api/runs/{run['id']}/cancel", {})
    assert server.wait_run(run["id"])["status"] == "cancelled"
    parent = run["id"]
    plan = server.api(f"/api/runs/{parent}/recovery-plan?mode=undispatched")
    watched = Watched(browser, server, f"/runs/{parent}")
    page = watched.page
    page.click("#tab-recovery")
    page.wait_for_selector("#recovery-cells tbody tr[data-case]")
    listed = page.locator("#recovery-cells tbody tr")
    assert listed.count() == min(25, len(plan["eligible_cells"]) + len(plan["excluded"]))
    for cell in plan["eligible_cells"][:1]:
        row = page.locator(
            f"#recovery-cells tr[data-case='{cell['case_id']}'][data-target='{cell['target_id']}']"
        )
        assert row.get_attribute("data-state") == "eligible"
    # the lineage comes from the report, fetched on its own: wait for it to be drawn
    page.wait_for_selector("#recovery-lineage tbody tr")
    assert "No recovery run" in (page.text_content("#recovery-lineage tbody") or "")
    # a child started (over the API): listed on the parent, with its cells
    child = server.api(
        f"/api/runs/{parent}/recover", {"plan": plan, "idempotency_key": "run-page-recover"}
    )["run"]["id"]
    server.wait_run(child)
    watched.goto(f"/runs/{parent}")
    page.click("#tab-recovery")
    page.wait_for_selector(f"#recovery-lineage tr[data-run='{child}']")
    assert page.text_content(f"#recovery-lineage tr[data-run='{child}'] td[data-col=cells]") == str(
        plan["counts"]["eligible"]
    )
    page.wait_for_selector("#recovery-cells tr[data-state=excluded]")
    page.select_option("#recovery-show", "excluded")
    reasons = set(page.locator("#recovery-cells td[data-col=reason]").all_text_contents())
    assert "already_claimed_by_child_attempt" in reasons
    watched.shot("dashboard/run-recovery.png", full_page=True, commit=True)
    watched.check()
    watched.close()


def failed_plan(parent: str) -> dict[str, Any]:
    """A failed-mode plan (served in place of the real one): 30 candidates over two pages and
    two excluded cells, one id hostile markup."""
    eligible = [{"case_id": f"hle/case-{i:02d}", "target_id": "hostile"} for i in range(30)]
    excluded = [
        {"case_id": HOSTILE, "target_id": "hostile", "reason": "never_dispatched_use_undispatched_mode"},
        {"case_id": "hle/done", "target_id": "hostile", "reason": "completed_evidence_is_preserved"},
    ]  # fmt: skip
    return {"parent_run_id": parent, "mode": "failed", "eligible_cells": eligible,
            "excluded": excluded, "counts": {"eligible": 30, "excluded": 2},
            "requires_new_attempt_acknowledgment": True, "new_attempt_budget_usd": 0.25,
            "plan_sha256": "a" * 64}  # fmt: skip


def test_failed_mode_recovery_posts_exactly_the_ticked_cells(server, browser, big_run):
    plan = failed_plan(big_run)
    posted: list[Any] = []

    def recover(route: Any) -> None:
        posted.append(json.loads(route.request.post_data or "null"))
        route.fulfill(status=409, json={"error": {"code": "BENCHMARK_RECOVERY_REJECTED",
                                                  "message": "stopped by the test"}})  # fmt: skip

    watched = Watched(browser, server, f"/runs/{big_run}")
    page = watched.page
    page.route(lambda url: url.endswith("/recovery-plan?mode=failed"),
               lambda route: route.fulfill(json=plan))  # fmt: skip
    page.route(lambda url: urlparse(url).path.endswith("/recover"), recover)
    page.click("#tab-recovery")
    page.wait_for_selector("#recovery-counts dd")
    assert page.locator("#recovery-cells input[type=checkbox]").count() == 0  # undispatched
    page.select_option("#recovery-mode", "failed")
    page.wait_for_selector("#recovery-pick:not([hidden])")
    boxes = page.locator("#recovery-cells tr[data-state=eligible] input.recovery-pick")
    assert boxes.count() == 25  # 25 a page
    assert page.text_content("#recovery-start") == "Start recovery (0 cells)"
    assert page.is_disabled("#recovery-start")  # nothing ticked: nothing to start
    page.check("#recovery-cells tr[data-case='hle/case-03'] input")
    page.check("#recovery-cells tr[data-case='hle/case-07'] input")
    page.click("#recovery-next")
    page.check("#recovery-cells tr[data-case='hle/case-28'] input")
    page.click("#recovery-prev")
    assert page.is_checked("#recovery-cells tr[data-case='hle/case-03'] input")  # kept
    assert page.locator("#recovery-cells tr[data-state=excluded] input").count() == 0
    page.select_option("#recovery-show", "excluded")
    assert HOSTILE in (page.text_content("#recovery-cells tbody") or "")  # text, not markup
    page.select_option("#recovery-show", "")
    assert page.text_content("#recovery-start") == "Start recovery (3 cells)"
    assert page.text_content("#recovery-picked") == "3 of 30 candidates ticked"
    watched.shot("dashboard/run-recovery-failed-pick.png", full_page=True, commit=True)
    page.click("#recovery-start")
    assert "attempts 3 cell(s)" in (page.text_content("#recovery-summary") or "")
    assert page.is_disabled("#recovery-confirm-yes")  # failed cells are paid again: ack first
    page.check("#recovery-ack")
    page.click("#recovery-confirm-yes")
    page.wait_for_selector("#recovery-error:not([hidden])")
    assert len(posted) == 1
    body = posted[0]
    assert body["plan"]["selected_cells"] == [
        {"case_id": f"hle/case-{i:02d}", "target_id": "hostile"} for i in (3, 7, 28)
    ]
    assert {k: v for k, v in body["plan"].items() if k != "selected_cells"} == plan  # unchanged
    assert body["acknowledge_new_attempt"] is True and body["idempotency_key"].startswith(
        "recover-"
    )
    # another selection is another attempt: its own idempotency key
    page.click("#recovery-pick-all")
    assert page.text_content("#recovery-start") == "Start recovery (30 cells)"
    page.click("#recovery-start")
    page.check("#recovery-ack")
    page.click("#recovery-confirm-yes")
    page.wait_for_function(
        "() => document.getElementById('recovery-confirm-yes').disabled === false"
    )
    assert len(posted) == 2 and len(posted[1]["plan"]["selected_cells"]) == 30
    assert posted[1]["idempotency_key"] != body["idempotency_key"]
    page.click("#recovery-pick-none")
    assert page.is_disabled("#recovery-start") and page.is_hidden("#recovery-confirm")
    assert [m for m in watched.errors() if "status of 409" not in m] == []
    assert watched.remote_requests() == []
    assert page.evaluate("window.__pwned") is None
    watched.close()


def test_dataset_questions_filter_by_benchmark_and_subject(server, browser):
    detail = server.api("/api/datasets/hle")
    hostile = {**detail, "groups": [*detail["groups"], {"group": HOSTILE, "cases": 0}]}
    watched = Watched(browser, server, "/datasets/hle", ready=False)
    page = watched.page
    page.route("**/api/datasets/hle", lambda route: route.fulfill(json=hostile))
    watched.goto("/datasets/hle")
    page.wait_for_selector("#cases tbody tr[data-case]")
    assert page.locator("#cases tbody tr[data-case]").count() == 4
    options = page.locator("#case-group option").all_text_contents()
    assert options[:3] == ["all subjects", "Biology/Medicine (1)", "Math (3)"]
    assert options[3] == f"{HOSTILE} (0)"  # text, not markup
    assert page.locator("#case-benchmark option").all_text_contents() == [
        "all benchmarks", "hle (4)"]  # fmt: skip
    page.select_option("#case-group", "Math")
    page.wait_for_function(
        "() => document.querySelectorAll('#cases tbody tr[data-case]').length === 3"
    )
    groups = page.locator("#cases td[data-col=group]").all_text_contents()
    assert groups == ["Math"] * 3
    assert "3 cases · page 1 of 1" in (page.text_content("#cases-info") or "")
    page.select_option("#case-benchmark", "hle")
    page.select_option("#case-group", HOSTILE)
    page.wait_for_function(
        "() => document.querySelectorAll('#cases tbody tr[data-case]').length === 0"
    )
    sent = queries(watched.requests, "/api/datasets/hle/cases")
    assert {"page": ["1"], "group": ["Math"]} in sent
    assert {"page": ["1"], "benchmark": ["hle"], "group": [HOSTILE]} in sent
    page.select_option("#case-group", "Math")
    page.wait_for_function(
        "() => document.querySelectorAll('#cases tbody tr[data-case]').length === 3"
    )
    watched.shot("dashboard/dataset-filters.png", full_page=True, commit=True)
    watched.check()
    watched.close()


def test_a_captured_recipe_downloads(server, browser, big_run):
    recipe = {"target_id": "router", "status": "captured", "captured_at": "2026-01-02T03:04:05Z",
              "config_hash": "sha256:abc", "etag": "e1", "projection_sha256": "f" * 64,
              "recipe": {"decisions": [{"name": HOSTILE}]}}  # fmt: skip
    missing = {
        "target_id": "other",
        "status": "unavailable",
        "reason": "capture_recipe is off for this target",
    }
    watched = Watched(browser, server, f"/runs/{big_run}")
    page = watched.page
    page.route("**/recipes", lambda route: route.fulfill(json={"recipes": [recipe, missing]}))
    page.click("#tab-recipe")
    page.wait_for_selector("#recipes a.download-recipe")
    assert page.locator("#recipes a.download-recipe").count() == 1  # not for an unavailable one
    assert "capture_recipe is off" in (
        page.text_content("#recipes section[data-target=other]") or ""
    )
    with page.expect_download() as download:
        page.click("#recipes a.download-recipe")
    assert download.value.suggested_filename == f"srbench-{big_run}-router-recipe.json"
    assert json.loads(Path(download.value.path()).read_text()) == recipe
    assert "<script>" in (page.text_content("#recipes pre") or "")  # text, not markup
    watched.check()
    watched.close()
