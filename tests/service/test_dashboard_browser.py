"""The dashboard of ``srbench serve`` in a real headless Chromium against a real server: create
an evaluation through the form and watch it complete, open a case and its calls, compare two
runs and export CSV, see a run started by ``pytest`` appear while it runs and follow its
events, recover a cancelled run once, browse datasets and evaluate one, choose RAG and agent
benchmarks and read an agent case's trace. No console error, no request leaves the server's
origin, model output (a simulated target that answers with hostile markup) stays text.
Screenshots land in reports/ for review (reports/dashboard/, kept in the repository, with
SRBENCH_SCREENSHOTS=1)."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.service.dashboard_helpers import (  # noqa: F401
    CONFIG,
    PLAN,
    REPO,
    REPORTS,
    WAIT_MS,
    Server,
    Watched,
)
from tests.zygote_server import new_session_command

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("dashboard-browser")]

# The plan the form creates (test 1) and the API repeats (test 2): 2 benchmarks x 2 cases x 2
# targets.


LOADED_OR_END = """n => +document.getElementById('events').getAttribute('data-loaded') > n
    || document.getElementById('events-more').disabled"""


def secs(value: float | None) -> str:
    """A duration as the dashboard shows it."""
    return "—" if value is None else f"{value:.2f}s"


def ms(value: float | None) -> str:
    """Milliseconds as the dashboard shows them."""
    return "—" if value is None else f"{value:.1f}"


@pytest.fixture(scope="module")
def runs() -> dict[str, str]:
    """Run ids the tests share (the first test creates one through the form)."""
    return {}


def test_create_an_evaluation_watch_it_and_open_a_case(server, browser, runs):
    from playwright.sync_api import expect

    watched = Watched(browser, server, "/new")
    page = watched.page
    assert page.input_value("#profile") == "smoke"
    page.locator("#all-benchmarks").check()
    page.locator("#all-benchmarks").uncheck()
    for benchmark in PLAN["benchmarks"]:
        page.check(f"input[name=benchmark][value='{benchmark}']")
    for target in PLAN["targets"]:
        page.check(f"input[name=target][value='{target}']")
    page.fill("input[name=name]", PLAN["name"])
    page.fill("input[name=limit]", "2")
    page.fill("input[name=temperature]", "0")
    assert page.is_disabled("#start")
    page.check("input[name=mode][value=preview]")  # preview needs router targets
    assert page.is_visible("#preview-fields")
    page.click("#review")
    page.wait_for_selector("#error:not([hidden])")
    assert (page.text_content("#error") or "").startswith("BENCHMARK_PLAN_INVALID: preview mode")
    assert page.is_disabled("#start")
    assert [m for m in watched.errors() if "status of 422" not in m] == []
    watched.console.clear()
    page.check("input[name=mode][value=live]")
    page.click("#review")
    page.wait_for_selector("#plan:not([hidden])")
    assert page.text_content("#plan-cells") == "8"
    assert (
        page.text_content("#plan-benchmarks tr[data-benchmark='mmlu-pro'] td[data-col=cases]")
        == "2"
    )
    assert page.locator("#plan-targets tbody tr").count() == 2
    assert server.api("/api/runs")["total"] == len(runs)  # reviewing started nothing
    watched.shot("service-new.png", full_page=True)

    page.click("#start")
    page.wait_for_url("**/runs/run-*")
    page.wait_for_selector("html[data-ready='1']")
    run_id = page.text_content("#run-id") or ""
    runs["first"] = run_id
    page.wait_for_selector("#run-status [data-status=completed]", timeout=3 * WAIT_MS)
    assert page.text_content("#run-planned") == "8"
    page.wait_for_function("() => document.getElementById('run-spend').textContent.startsWith('$')")
    assert page.text_content("#run-progress-text") == "8 of 8 cells (100%)"
    page.wait_for_selector("#results tbody tr[data-case]")
    assert page.locator("#results tbody tr").count() == 8
    report = server.api(f"/api/runs/{run_id}/report")
    # the Results tab shows a cell's latency as the report does (the answer, not the cell's
    # wall time), and the report's percentiles per target (p90 "—" while the report has none)
    row = page.locator("#results tbody tr[data-case]").first
    cell = next(c for c in report["cells"] if c["case_id"] == row.get_attribute("data-case")
                and c["target_id"] == row.get_attribute("data-target"))  # fmt: skip
    latency = row.locator("td[data-col=latency]")
    assert float(latency.get_attribute("data-value") or "nan") == cell["latency_s"]
    assert latency.text_content() == secs(cell["latency_s"])
    for target in report["summary"]["targets"]:
        shown = page.locator(f"#latency tr[data-target='{target['id']}'] td.num")
        percentiles = [secs(target.get(f"latency_{p}_s")) for p in ("p50", "p90", "p95")]
        expect(shown).to_have_text(percentiles, timeout=WAIT_MS)
    # where each benchmark's cases came from, as the report says (the shipped originals)
    for benchmark in PLAN["benchmarks"]:
        shown = page.locator(f"#data-sources tr[data-benchmark='{benchmark}'] td[data-col=data]")
        expect(shown).to_have_text("original", timeout=WAIT_MS)
    assert page.text_content("#data-label") == report["data_sources"]["label"]
    with page.expect_download() as download:
        page.click("#report-json")
    assert download.value.suggested_filename == f"srbench-{run_id}.json"
    assert json.loads(Path(download.value.path()).read_text())["run_id"] == run_id

    page.click("#tab-questions")
    hostile = page.locator("#questions tbody tr[data-target=hostile]").first
    hostile.wait_for()
    hostile.locator("button.open-case").click()
    box = page.locator("#case-calls .call-box").first
    box.wait_for()
    assert page.locator("#case-calls .call-box").count() == 2  # both targets' calls
    assert len(box.locator("pre.prompt").text_content() or "") > 20
    hostile_answer = page.locator("#case-calls .call-box", has_text="hostile").locator("pre.answer")
    assert "<script>" in (hostile_answer.text_content() or "")  # shown as text, not run
    page.locator("#case-calls .call-box").first.get_by_text("Show evidence").click()
    page.wait_for_selector("#evidence-text:not([hidden])")
    assert "data:" in (page.text_content("#evidence-text") or "")

    page.click("#tab-calls")
    page.wait_for_selector("#calls tbody tr[data-call]")
    assert page.locator("#calls tbody tr").count() == 8
    assert "completed: no call in flight" in (page.text_content("#active-info") or "")

    page.click("#tab-events")
    page.wait_for_selector("#events tbody tr")
    assert page.locator("#events tbody tr").count() == 25
    first_seqs = [int(s) for s in page.locator("#events td[data-col=seq]").all_text_contents()]
    assert first_seqs == sorted(first_seqs)
    page.click("#events-next")  # 25 a page of what was read on open
    page.wait_for_function(
        "() => document.getElementById('events-page').textContent.startsWith('page 2')"
    )
    assert page.locator("#events tbody tr").first.locator("td[data-col=kind]").text_content()

    page.click("#tab-recipe")
    page.wait_for_selector("#recipes .unavailable")
    page.click("#tab-recovery")
    page.wait_for_selector("#recovery-counts dd")
    assert page.is_hidden("#recovery-start")  # a completed run has no cell to recover
    page.click("#tab-report")
    frame = page.frame_locator("#report-frame")
    frame.locator("html[data-ready='1']").wait_for()
    assert frame.locator("#run-id").text_content() == run_id

    page.click("#tab-results")
    watched.shot("service-run.png")
    watched.check()
    watched.close()


def _second_run(server: Server, runs: dict[str, str]) -> tuple[str, str]:
    for name in ("first", "second"):
        if name not in runs:
            run = server.api("/api/runs", {**PLAN, "idempotency_key": f"dashboard-{name}"})["run"]
            runs[name] = run["id"]
    for name in ("first", "second"):
        assert server.wait_run(runs[name])["status"] == "completed"
    return runs["first"], runs["second"]


def test_compare_iterations_step_by_step_as_the_guide_says(server, browser):
    """The results guide's Compare iterations, sentence by sentence."""
    # three runs of one plan of their own (the module's other tests make runs of PLAN, some
    # through the form, which would be candidates too)
    own = {**PLAN, "limit": 3, "name": "compare-iterations"}
    baseline, second, third = (
        server.api("/api/runs", {**own, "idempotency_key": f"dashboard-compare-{n}"})["run"]["id"]
        for n in range(3)
    )
    for run_id in (baseline, second):
        assert server.wait_run(run_id)["status"] == "completed"
    other = server.api("/api/runs", {**PLAN, "limit": 1, "targets": ["sim-small"],
                                     "benchmarks": ["mmlu-pro"], "name": "other-plan"})["run"]  # fmt: skip
    server.wait_run(third)
    server.wait_run(other["id"])
    watched = Watched(browser, server, "/compare")
    page = watched.page
    # "First choose a live single-model baseline that has compatible results": a run with no
    # compatible candidate is not offered
    wanted = [baseline, second, third]
    page.wait_for_function(  # the options are read from the service after the page loads
        "ids => ids.every(id => [...document.querySelectorAll('#baseline option')]"
        ".some(o => o.value === id))",
        arg=wanted,
        timeout=30_000,
    )
    offered = page.locator("#baseline option").evaluate_all("os => os.map(o => o.value)")
    assert set(wanted) <= set(offered) and other["id"] not in offered
    page.select_option("#baseline", baseline)
    # "then tick any number of comparable candidates", in creation order
    listed = page.locator("input[name=candidate]").evaluate_all("xs => xs.map(x => x.value)")
    assert listed == [second, third]
    assert page.is_disabled("#compare-runs")
    # "search narrows them; Select all selects across pages of the current search"
    page.fill("#candidate-search", third)
    assert page.locator("input[name=candidate]").count() == 1
    page.click("#select-all")
    page.fill("#candidate-search", "")
    assert page.is_checked(f"input[name=candidate][value='{third}']")
    assert not page.is_checked(f"input[name=candidate][value='{second}']")
    # nothing compares until "Compare runs" is clicked; the selection lives in the URL
    assert page.is_hidden("#result")
    assert page.url.endswith(f"/compare?baseline={baseline}&candidate={third}")
    page.click("#compare-runs")
    page.locator(f"#comparison tr[data-candidate='{third}']").first.wait_for()
    # the same interval as the comparison report for the same row (the gate's Wald interval)
    result = server.api(f"/api/compare?baseline={baseline}&candidate={third}&format=json")
    row = result["candidates"][0]["comparisons"][0]
    low, high = row["paired_statistics"]["stratified_wald_ci95"]
    shown = page.locator(
        f"#comparison tr[data-candidate='{third}'][data-target='{row['candidate_target_id']}'] "
        "td[data-col=wald]"
    )
    assert shown.text_content() == f"[{low:.3f}, {high:.3f}]"
    frame = page.frame_locator("#report-frame")
    assert frame.locator("#baseline-id").text_content() == baseline
    report_row = frame.locator(f"table.comparison tr[data-target='{row['candidate_target_id']}']")
    assert report_row.first.locator("td").nth(2).text_content() == shown.text_content()
    # the guide's caveats beside the result
    caveats = page.locator("#caveat-list li").all_text_contents()
    assert "A positive estimate with an interval spanning zero is not proof of a gain." in caveats
    assert any("not GPU-bill savings" in text for text in caveats)
    # "old results hide after any change until Compare runs is clicked"
    page.check(f"input[name=candidate][value='{second}']")
    assert page.is_hidden("#result") and page.is_visible("#stale")
    page.click("#compare-runs")
    page.locator(f"#comparison tr[data-candidate='{second}']").first.wait_for()
    order = page.locator("#comparison tbody tr").evaluate_all(
        "rs => rs.map(r => r.getAttribute('data-candidate'))"
    )
    assert order.index(second) < order.index(third)  # candidates in creation order
    assert page.url.endswith(f"/compare?baseline={baseline}&candidate={second}&candidate={third}")
    # CSV and JSON export of the whole selection
    with page.expect_download() as download:
        page.click("#export-json")
    exported = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert [c["candidate_run_id"] for c in exported["candidates"]] == [second, third]
    with page.expect_download() as download:
        page.click("#export-csv")
    assert download.value.suggested_filename == f"compare-{baseline}.csv"
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith("baseline_run_id,candidate_run_id,")
    assert {line.split(",")[1] for line in text.splitlines()[1:]} == {second, third}
    page.reload()  # the selection survives in the address and shows its result
    page.wait_for_selector("html[data-ready='1']")
    page.locator(f"#comparison tr[data-candidate='{third}']").first.wait_for()
    assert page.is_checked(f"input[name=candidate][value='{second}']")
    watched.shot("service-compare.png")
    watched.shot("dashboard/compare-iterations.png", full_page=True, commit=True)
    # "changing the baseline clears the candidates"
    page.select_option("#baseline", second)
    assert page.locator("input[name=candidate]:checked").count() == 0
    assert page.is_hidden("#result") and page.is_disabled("#compare-runs")
    assert page.url.endswith(f"/compare?baseline={second}")
    watched.check()
    watched.close()


def test_a_run_started_by_pytest_appears_while_it_runs(server, browser, runs):
    watched = Watched(browser, server, "/")
    page = watched.page
    command = [*new_session_command(), "-p", "no:cacheprovider", "-q",
               "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro", "--srbench-repeats=3",
               "--srbench-concurrency=1", "--srbench-name=from-pytest",
               f"--srbench-store={server.store}"]  # fmt: skip
    process = subprocess.Popen(command, cwd=server.project, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        row = page.locator("#runs-body tr[data-status=running]", has_text="from-pytest")
        row.wait_for(timeout=3 * WAIT_MS)  # the page polls: nothing is reloaded here
        assert row.locator("td[data-col=source]").text_content() == "pytest"
        assert row.locator("td[data-col=planned]").text_content() == "84"
        watched.shot("service-runs.png")

        # A failed poll shows "reconnecting…", and the page recovers by itself.
        page.route("**/api/runs?*", lambda route: route.abort())
        page.wait_for_selector("#conn.bad")
        assert page.text_content("#conn") == "reconnecting…"
        page.unroute("**/api/runs?*")
        page.wait_for_selector("#conn:not(.bad)")
        watched.console = [m for m in watched.console if "ERR_FAILED" not in m]

        row.locator("td[data-col=id] a").click()
        page.wait_for_selector("html[data-ready='1']")
        page.wait_for_selector("#run-status [data-status=running]")
        page.wait_for_function(  # a running run's wall time counts up (not the report's 0)
            "() => parseFloat(document.getElementById('run-wall').textContent) > 0"
        )
        # Events: page to the newest, then they arrive by themselves, filtered by name.
        page.click("#tab-events")
        page.wait_for_selector("#events tbody tr")
        while not page.is_disabled("#events-more"):
            shown = int(page.get_attribute("#events", "data-loaded") or "0")
            page.click("#events-more")
            page.wait_for_function(LOADED_OR_END, arg=shown)
        assert "following the run live" in (page.text_content("#events-info") or "")
        page.select_option("#events-kind", "case_completed")
        visible = "#events tbody tr:not([hidden])"
        shown = int(page.get_attribute("#events", "data-matching") or "0")
        page.wait_for_function(  # no click: the stream brings them
            "n => +document.getElementById('events').getAttribute('data-matching') > n", arg=shown
        )
        assert set(page.locator(f"{visible} td[data-col=kind]").all_text_contents()) == {
            "case_completed"
        }
        seqs = [int(s) for s in page.locator("#events td[data-col=seq]").all_text_contents()]
        assert seqs == sorted(set(seqs))  # appended in order, none twice
        watched.shot("dashboard/events-filter.png", full_page=True, commit=True)

        page.click("#tab-calls")
        page.wait_for_function(
            "() => /in flight|No call in flight/.test(document.getElementById('active-info').textContent)"
        )
        run_id = page.text_content("#run-id") or ""
        second = Watched(browser, server, f"/runs/{run_id}")  # closing a page never cancels
        second.page.wait_for_selector("#run-status [data-status=running]")
        second.close()
        # Not a pause: the run must go on finishing cells after the page (and its event
        # stream) closed, and still be running when it does.
        assert "/cancel" not in " ".join(second.requests)
        ended = server.api(f"/api/runs/{run_id}")["run"]["progress"]
        ended = ended["completed"] + ended["failed"]
        deadline = time.monotonic() + WAIT_MS / 1000
        while True:
            run = server.api(f"/api/runs/{run_id}")["run"]
            assert run["status"] == "running", run
            if run["progress"]["completed"] + run["progress"]["failed"] > ended:
                break
            assert time.monotonic() < deadline, f"no cell ended after the page closed: {run}"
            time.sleep(0.1)
        page.click("#cancel")
        page.click("#cancel-confirm")
        page.wait_for_selector("#run-status [data-status=cancelled]")
        runs["cancelled"] = run_id
        assert process.wait(WAIT_MS / 1000) != 0
        ended = server.api(f"/api/runs/{run_id}")["run"]["progress"]
        bar = page.locator("#run-progress")
        assert int(bar.get_attribute("value") or "-1") <= ended["completed"] < 84  # not full
        assert "failed or cancelled" in (page.text_content("#run-progress-text") or "")
        page.click("#tab-events")  # the run's end came in too, and the following stopped
        page.select_option("#events-kind", "cancelled")
        page.wait_for_selector("#events tbody tr[data-kind=cancelled]:not([hidden])")
        assert page.locator("#events tbody tr:not([hidden])").count() == 1
        page.wait_for_function(
            "() => document.getElementById('events-info').textContent.endsWith('all (the run is cancelled)')"
        )
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    watched.check()
    watched.close()


def _cancelled_run(server: Server, runs: dict[str, str]) -> str:
    """A cancelled live run with cells never dispatched (the one test 3 cancels, else one
    cancelled before its worker starts)."""
    if "cancelled" not in runs:
        run = server.api("/api/runs", {**PLAN, "name": "to-recover", "limit": 1,
                                       "benchmarks": ["mmlu-pro"], "targets": ["sim-small"]})["run"]  # fmt: skip
        server.api(f"/api/runs/{run['id']}/cancel", {})
        assert server.wait_run(run["id"])["status"] == "cancelled"
        runs["cancelled"] = run["id"]
    return runs["cancelled"]


def post(server: Server, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    """POST JSON; the status and the parsed answer."""
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, json.loads(response.read())


def test_recovery_is_reviewed_confirmed_and_started_once(server, browser, runs):
    parent = _cancelled_run(server, runs)
    plan = server.api(f"/api/runs/{parent}/recovery-plan?mode=undispatched")
    assert plan["counts"]["eligible"] > 0
    watched = Watched(browser, server, f"/runs/{parent}")
    page = watched.page
    stale = Watched(browser, server, f"/runs/{parent}")  # another tab reviews the same plan
    for tab in (page, stale.page):
        tab.click("#tab-recovery")
        tab.wait_for_selector("#recovery-start:not([hidden])")
    eligible = plan["counts"]["eligible"]
    assert page.text_content("#recovery-start") == (
        f"Start recovery ({eligible} cell{'' if eligible == 1 else 's'})"
    )
    page.click("#recovery-start")
    page.wait_for_selector("#recovery-confirm:not([hidden])")
    assert f"attempts {eligible} cell(s)" in (page.text_content("#recovery-summary") or "")
    assert page.is_hidden("#recovery-ack-label")  # undispatched cells: nothing is paid twice
    watched.shot("dashboard/recovery-confirm.png", commit=True)
    posted: list[Any] = []
    page.on("request", lambda r: posted.append(r) if r.url.endswith("/recover") else None)
    page.dblclick("#recovery-confirm-yes")  # a second click sends nothing
    page.wait_for_function("id => !location.pathname.endsWith(id)", arg=parent)
    page.wait_for_selector("html[data-ready='1']")
    child = page.text_content("#run-id") or ""
    assert child.startswith("run-") and child != parent
    assert page.text_content("#run-parent") == parent
    assert len(posted) == 1
    body = posted[0].post_data_json
    assert body["plan"] == plan  # exactly the reviewed plan
    assert set(body) == {"plan", "idempotency_key"}
    assert server.api(f"/api/runs/{child}")["run"]["parent_run_id"] == parent
    # the same key again (a lost answer) is the same child, answered 200
    status, again = post(server, f"/api/runs/{parent}/recover", body)
    assert (status, again["run"]["id"]) == (200, child)

    # back on the parent (a reload): the child it made, and nothing left to start
    watched.goto(f"/runs/{parent}")
    page.click("#tab-recovery")
    page.wait_for_selector("#recovery-reasons tr[data-reason=already_claimed_by_child_attempt]")
    assert page.text_content("#recovery-children a") == child
    assert page.is_hidden("#recovery-start")

    # the other tab's review is stale now: refused with the rule's reason
    other = stale.page
    other.click("#recovery-start")
    other.click("#recovery-back")
    assert other.is_hidden("#recovery-confirm")
    other.click("#recovery-start")
    other.click("#recovery-confirm-yes")
    other.wait_for_selector("#recovery-error:not([hidden])")
    assert (other.text_content("#recovery-error") or "").startswith(
        "BENCHMARK_RECOVERY_REJECTED: Recovery eligibility changed"
    )
    # a full service (429) says so too; faked here: filling 100 slots with active runs is slow
    refusal = {"error": {"code": "BENCHMARK_CAPACITY_EXCEEDED",
                         "message": "all 100 run slots hold active runs"}}  # fmt: skip
    other.route("**/recover", lambda route: route.fulfill(status=429, json=refusal))
    other.click("#recovery-confirm-yes")
    other.wait_for_function(
        "() => document.getElementById('recovery-error').textContent.startsWith('BENCHMARK_CAPACITY')"
    )
    assert other.text_content("#recovery-error") == (
        "BENCHMARK_CAPACITY_EXCEEDED: all 100 run slots hold active runs"
    )
    server.api(f"/api/runs/{child}/cancel", {})  # the child's cells are not needed here
    watched.check()
    assert [m for m in stale.errors() if not ("status of 409" in m or "status of 429" in m)] == []
    assert stale.remote_requests() == []
    stale.close()
    watched.close()


def test_datasets_search_and_a_case_prompt(server, browser):
    watched = Watched(browser, server, "/datasets")
    page = watched.page
    page.wait_for_selector("#datasets-body tr[data-dataset]")
    page.fill("#filters input[name=q]", "mmlu")
    page.press("#filters input[name=q]", "Enter")
    page.wait_for_function(
        "() => [...document.querySelectorAll('#datasets-body tr')].every(r => /mmlu/i.test(r.textContent))"
    )
    mmlu = page.locator("#datasets-body tr[data-dataset='mmlu-pro'] td[data-col=data]")
    assert mmlu.text_content() == "original"  # the shipped smoke items
    page.fill("#filters input[name=q]", "")
    page.select_option("#filters select[name=profile]", "smoke")
    page.wait_for_function("() => document.querySelectorAll('#datasets-body tr').length > 5")
    assert "profile=smoke" in page.url
    watched.shot("service-datasets.png")
    # the row by its id (not the first whose text mentions it), and the page it opens
    page.locator("#datasets-body tr[data-dataset='mmlu-pro'] a").click()
    page.wait_for_url("**/datasets/mmlu-pro")
    page.wait_for_selector("html[data-ready='1']")
    try:  # (once seen to time out in a loaded suite run: say what the page showed)
        page.wait_for_selector("#cases tbody tr[data-case]")
    except Exception as error:
        shown = {name: page.text_content(name) for name in ("#error", "#cases-info")}
        pytest.fail(f"no case rows at {page.url}: {shown}; {type(error).__name__}")
    assert page.locator("#cases tbody tr").count() <= 25
    assert page.locator("#coverage tbody tr[data-profile=smoke]").count() == 1
    page.locator("#cases tbody tr[data-case] button").first.click()
    page.wait_for_selector("#case:not([hidden])")
    assert len(page.text_content("#case-prompt") or "") > 20
    page.click("#evaluate")  # Create evaluation with this dataset chosen
    page.wait_for_url("**/new?profile=smoke&benchmark=mmlu-pro")
    page.wait_for_selector("html[data-ready='1']")
    assert page.input_value("#profile") == "smoke"
    chosen = page.locator("input[name=benchmark]:checked").evaluate_all("i => i.map(b => b.value)")
    assert chosen == ["mmlu-pro"]
    watched.goto("/datasets/rag-smoke")  # a RAG dataset: its retrieval controls come with it
    page.click("#evaluate")
    page.wait_for_url("**/new?profile=smoke&benchmark=rag-smoke")
    page.wait_for_selector("html[data-ready='1']")
    page.wait_for_selector("#rag-set:not([hidden])")
    assert page.is_checked("input[name=benchmark][value='rag-smoke']")
    watched.check()
    watched.close()


def test_a_token_is_asked_once_and_kept_in_the_tab(server, browser, runs):
    baseline, _ = _second_run(server, runs)
    guarded = Server(server.project, token="s3cret")  # the same store behind a token
    try:
        watched = Watched(browser, guarded, "/", ready=False)
        page = watched.page
        page.wait_for_selector("#token-box:not([hidden])")
        page.fill("#token-input", "s3cret")
        page.click("#token-form button[type=submit]")
        page.wait_for_selector("html[data-ready='1']")
        page.wait_for_selector(f"#runs-body tr[data-run-id='{baseline}']")
        assert page.is_hidden("#token-box")
        page.locator(f"#runs-body tr[data-run-id='{baseline}'] a").click()
        page.wait_for_selector("html[data-ready='1']")
        page.wait_for_selector("#run-status [data-status=completed]")
        page.click("#tab-report")  # fetched with the token into the frame
        frame = page.frame_locator("#report-frame")
        assert frame.locator("#run-id").text_content() == baseline
        with page.expect_download() as download:  # a plain link cannot carry the token
            page.click("#report-json")
        assert download.value.suggested_filename == f"srbench-{baseline}.json"
        assert json.loads(Path(download.value.path()).read_text())["run_id"] == baseline
        assert page.is_hidden("#token-box")  # asked once: the tab kept the token
        assert [m for m in watched.errors() if "status of 401" not in m] == []
        assert watched.remote_requests() == []
        watched.close()
    finally:
        guarded.stop()


def test_agent_and_rag_benchmarks_in_the_create_form(server, browser):
    from playwright.sync_api import expect

    watched = Watched(browser, server, "/new?profile=standard&benchmark=rag-smoke")
    page = watched.page
    # standard: no RAG or agent dataset is offered (the plan would refuse them)
    assert page.input_value("#profile") == "standard"
    assert page.text_content("#error") == (
        "NOT_OFFERED: rag-smoke: no case under the standard profile"
    )
    assert "loading" not in (page.text_content("#benchmarks") or "")  # ready: the list came
    offered = page.locator("input[name=benchmark]").evaluate_all("i => i.map(b => b.dataset.kind)")
    assert "rag" not in offered and "agent" not in offered
    page.select_option("#profile", "smoke")
    page.wait_for_selector("input[name=benchmark][value='agent-smoke']")
    expect(page.locator("#error")).to_be_hidden()  # the standard list's message went with it
    assert page.is_hidden("#agent-hint") and page.is_hidden("#rag-set")
    page.check("input[name=benchmark][value='agent-smoke']")
    assert page.is_visible("#agent-hint")  # says what the offline box is for
    page.check("input[name=target][value='sim-small']")
    page.click("#review")
    expect(page.locator("#error")).to_contain_text("runs against real providers by default")
    assert "offline" in (page.text_content("#error") or "")
    assert [m for m in watched.errors() if "status of 422" not in m] == []
    watched.console.clear()
    page.check("#offline")
    page.click("#review")
    page.wait_for_selector("#plan:not([hidden])")
    assert page.text_content("#plan-cells") == "5"  # agent-smoke's five cases on sim-small

    # RAG: the retrieval controls appear, and only the keys set are sent
    page.check("input[name=benchmark][value='rag-smoke']")
    assert page.is_visible("#rag-set")
    page.select_option("#retrieval-mode", "hybrid")
    page.fill("#top-k", "51")
    sent: list[Any] = []
    page.on("request", lambda r: sent.append(r) if r.url.endswith("/api/plans") else None)
    page.click("#review")
    page.wait_for_function("() => document.getElementById('error').textContent.includes('top_k')")
    assert page.text_content("#error") == "INVALID_FIELD: top_k must be a whole number from 1 to 50"
    assert sent == []  # refused in the page
    page.fill("#top-k", "7")
    page.select_option("#reranker", "minilm-maxsim")
    with page.expect_response("**/api/plans") as answer:
        page.click("#review")
    assert answer.value.request.post_data_json["retrieval"] == {
        "mode": "hybrid",
        "top_k": 7,
        "reranker": "minilm-maxsim",
    }
    assert answer.value.status == 200, answer.value.text()
    page.wait_for_selector("#review:not([disabled])")
    watched.shot("dashboard/create-rag-controls.png", full_page=True, commit=True)
    page.select_option("#retrieval-mode", "")
    page.fill("#top-k", "")
    page.select_option("#reranker", "")
    page.check("input[name=target][value='sim-rag-fts']")
    page.fill("input[name=limit]", "2")
    with page.expect_response("**/api/plans") as answer:
        page.click("#review")
    assert "retrieval" not in answer.value.request.post_data_json
    page.wait_for_function("() => document.getElementById('plan-cells').textContent === '4'")
    assert [m for m in watched.errors() if "status of 422" not in m] == []
    watched.console.clear()

    # the run: an agent case's trace, step by step; the RAG rows' latency percentiles
    page.click("#start")
    page.wait_for_url("**/runs/run-*")
    page.wait_for_selector("html[data-ready='1']")
    run_id = page.text_content("#run-id") or ""
    page.wait_for_selector("#run-status [data-status=completed]", timeout=3 * WAIT_MS)
    report = server.api(f"/api/runs/{run_id}/report")
    for row in report["rag"]["rows"]:
        shown = page.locator(f"#rag-latency tr[data-target='{row['target_id']}'] td.num")
        percentiles = [ms(row.get(f"{p}_latency_ms")) for p in ("p50", "p90", "p95")]
        expect(shown).to_have_text(percentiles, timeout=WAIT_MS)
    results = server.api(f"/api/runs/{run_id}/results")["results"]
    agent = next(r for r in results if r["details"].get("agent", {}).get("tool_calls"))
    page.click("#tab-questions")
    page.locator(f"#questions tr[data-case='{agent['case_id']}'] button.open-case").click()
    trace = page.locator("#case-traces .agent-trace[data-target='sim-small'] ol.trace > li")
    trace.first.wait_for()
    steps = trace.evaluate_all("li => li.map(s => s.dataset.step)")
    assert steps[:2] == ["message", "message"]  # system, user
    tools = [t["name"] for t in agent["details"]["agent"]["tool_calls"]]
    assert (
        trace.evaluate_all("li => li.filter(s => s.dataset.tool).map(s => s.dataset.tool)") == tools
    )
    assert steps[2:] == ["tool-call", "tool-result"] * len(tools) + ["answer"]
    first_call = agent["details"]["agent"]["tool_calls"][0]
    assert json.loads(trace.nth(2).locator("pre").text_content() or "") == first_call["arguments"]
    assert trace.last.locator("pre").text_content() == agent["answer"]
    page.locator("#case-traces").scroll_into_view_if_needed()
    watched.shot("dashboard/agent-trace.png", commit=True)
    watched.check()
    watched.close()
