"""The offline replay action of a preview run's page (iterate-preview-replay-live.md), in a real
headless Chromium against a real server and the shared simulator: on a completed preview of a
simulated router the page lists the completed live runs, reviews a pair cell by cell, creates
the replay once (a double click and a reload ask for the same run) and links to it; the
replay's page says it is an estimate; not one request reaches the simulator. An ineligible
pair shows its named reasons and creates nothing; a refusal of the service is shown by name.
Run names are hostile markup and stay text; live and replay runs have no replay section."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser import HOSTILE, chromium_path
from tests.plugin.helpers import replay_pyproject, settle_simulator
from tests.service.dashboard_helpers import Server, Watched

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("dashboard-browser")]

COMMON: dict[str, Any] = {
    "profile": "smoke", "benchmarks": ["mmlu-pro"], "limit": 4, "sampling": {"temperature": 0.0},
}  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, simulator) -> Iterator[dict[str, Any]]:
    """A server over a project of the simulator's two single models and a router, with a
    completed live run of the singles (named with hostile markup), a completed preview of the
    router on the same cases (twice) and a live run with other sampling (ineligible)."""
    chromium_path()
    project = tmp_path_factory.mktemp("replay-dashboard")
    body = replay_pyproject(simulator.admin_url, simulator.base_url)
    (project / "pyproject.toml").write_text(body)
    server = Server(project)
    singles = ["sim-large", "sim-small"]
    made = {
        "live": server.api("/api/runs", {**COMMON, "name": "singles " + HOSTILE,
                                         "targets": singles, "idempotency_key": "live"}),
        "preview": server.api("/api/runs", {**COMMON, "name": "router preview", "mode": "preview",
                                            "targets": ["replay-router"],
                                            "idempotency_key": "preview"}),
        "again": server.api("/api/runs", {**COMMON, "name": "router preview again",
                                          "mode": "preview", "targets": ["replay-router"],
                                          "idempotency_key": "again"}),
        "other": server.api("/api/runs", {**COMMON, "name": "other sampling", "targets": singles,
                                          "sampling": {"temperature": 0.5},
                                          "idempotency_key": "other"}),
    }  # fmt: skip
    ids = {name: doc["run"]["id"] for name, doc in made.items()}
    for run_id in ids.values():
        assert server.wait_run(run_id)["status"] == "completed"
    yield {"server": server, **ids}
    server.stop()


def replay_runs(server: Server) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = server.api("/api/runs?mode=replay")["runs"]
    return found


def test_replay_a_preview_from_its_page_once_without_a_request(runs, browser, simulator):
    from playwright.sync_api import expect

    server: Server = runs["server"]
    preview, live, other = runs["preview"], runs["live"], runs["other"]
    before = settle_simulator(simulator)["requests"]
    watched = Watched(browser, server, f"/runs/{preview}")
    page = watched.page
    section = page.locator("#replay")
    expect(section).to_be_visible()
    option = page.locator(f"#replay-baseline option[value='{live}']")
    expect(option).to_have_attribute("data-eligible", "true")
    assert "<script>" in (option.text_content() or "")  # the hostile name, as text
    expect(page.locator(f"#replay-baseline option[value='{other}']")).to_have_attribute(
        "data-eligible", "false"
    )
    assert page.input_value("#replay-baseline") == live  # the replayable one is picked

    page.click("#replay-review")
    expect(page.locator("#replay-counts")).to_have_attribute("data-eligible", "true")
    review = server.api(f"/api/replays/review?baseline_run_id={live}&preview_run_id={preview}")
    assert review["eligible"] and review["eligible_cells"] == 4
    rows = page.locator("#replay-cells tbody tr")
    expect(rows).to_have_count(4)
    for cell in review["cells"]:
        row = page.locator(
            f"#replay-cells tr[data-case='{cell['case_id']}'][data-target='{cell['target_id']}']"
        )
        expect(row.locator("td[data-col=model]")).to_have_text(cell["selected_model"])
        expect(row.locator("td[data-col=baseline-target]")).to_have_text(cell["baseline_target_id"])
        expect(row.locator("td[data-col=call]")).to_have_text(cell["source_call_id"])
        expect(row).to_have_attribute("data-state", "eligible")
    page.select_option("#replay-show", "ineligible")  # the filter: none is ineligible here
    expect(rows).to_have_count(0)
    page.select_option("#replay-show", "eligible")
    expect(rows).to_have_count(4)
    page.select_option("#replay-show", "")
    assert page.is_hidden("#replay-problems")
    assert replay_runs(server) == []  # reviewing created nothing
    expect(page.locator("#replay-create")).to_have_text("Create the offline replay (4 cells)")

    page.click("#replay-create")
    expect(page.locator("#replay-confirm")).to_be_visible()
    page.dblclick("#replay-confirm-yes")  # a double click asks once (and the same key twice)
    link = page.locator("#replay-run-link")
    link.wait_for()
    expect(page.locator("#replay-run")).to_contain_text("Replay run created")
    (made,) = replay_runs(server)
    assert link.text_content() == made["id"]
    assert made["mode"] == "replay" and made["status"] == "completed"
    watched.shot("dashboard/run-replay.png", full_page=True, commit=True)

    # a reload keeps the key: reviewing and creating again finds the same run
    watched.goto(f"/runs/{preview}")
    expect(page.locator(f"#replay-baseline option[value='{live}']")).to_be_attached()
    page.click("#replay-review")
    expect(page.locator("#replay-run-link")).to_have_text(made["id"])
    page.click("#replay-create")
    page.click("#replay-confirm-yes")
    expect(page.locator("#replay-run")).to_contain_text("The replay run of this review")
    expect(page.locator("#replay-run-link")).to_have_text(made["id"])
    assert [r["id"] for r in replay_runs(server)] == [made["id"]]

    # the link opens the replay run, which says it is an estimate and has no replay section
    page.click("#replay-run-link")
    page.wait_for_url(f"**/runs/{made['id']}")
    page.wait_for_selector("html[data-ready='1']")
    expect(page.locator("#run-mode")).to_have_text("replay · smoke")
    expect(page.locator("#run-evidence")).to_contain_text("Offline replay: an estimate")
    expect(page.locator("#run-evidence a")).to_have_text([live, preview])
    accuracy = page.locator("#scores tr[data-target='replay-router'] td[data-col=accuracy]")
    expect(accuracy).to_contain_text("(estimate)")
    expect(page.locator("#run-spend")).to_have_text("$0.000000")  # nothing was spent
    cost = page.locator("#results tbody tr[data-case] td[data-col=cost]").first
    expect(cost).to_contain_text("(estimate)")  # a row's cost is its source's, not spent
    assert page.is_hidden("#replay")
    watched.goto(f"/runs/{live}")  # a live run has none either
    page.wait_for_selector("#run-status [data-status=completed]")
    assert page.is_hidden("#replay") and page.is_hidden("#run-evidence")

    assert settle_simulator(simulator)["requests"] == before  # zero model requests
    watched.check()
    watched.close()


def test_an_ineligible_pair_shows_its_reasons_and_creates_nothing(runs, browser):
    from playwright.sync_api import expect

    server: Server = runs["server"]
    preview, live, other = runs["preview"], runs["live"], runs["other"]
    replays = [r["id"] for r in replay_runs(server)]
    watched = Watched(browser, server, f"/runs/{preview}")
    page = watched.page
    option = page.locator(f"#replay-baseline option[value='{other}']")
    expect(option).to_contain_text("cannot be replayed: replay_ineligible: sampling_differs")
    page.select_option("#replay-baseline", other)
    page.click("#replay-review")
    expect(page.locator("#replay-counts")).to_have_attribute("data-eligible", "false")
    expect(page.locator("#replay-problems")).to_contain_text("replay_ineligible: sampling_differs")
    assert page.is_hidden("#replay-create")
    assert [r["id"] for r in replay_runs(server)] == replays

    # the service's own refusal is shown by name: this tab's key for the pair is bound to
    # another pair (the same baseline with a second preview)
    bound = server.api("/api/replays", {"baseline_run_id": live, "preview_run_id": runs["again"],
                                        "idempotency_key": "bound-key"})["run"]["id"]  # fmt: skip
    replays.append(bound)
    page.evaluate(
        "([preview, baseline]) => sessionStorage.setItem('srbench-replay:' + preview,"
        " JSON.stringify({[baseline]: {key: 'bound-key'}}))",
        [preview, live],
    )
    watched.goto(f"/runs/{preview}")
    expect(page.locator(f"#replay-baseline option[value='{live}']")).to_be_attached()
    page.select_option("#replay-baseline", live)
    page.click("#replay-review")
    expect(page.locator("#replay-counts")).to_have_attribute("data-eligible", "true")
    page.click("#replay-create")
    page.click("#replay-confirm-yes")
    failure = page.locator("#replay-error")
    expect(failure).to_be_visible()
    expect(failure).to_contain_text("BENCHMARK_REPLAY_REJECTED: idempotency key 'bound-key'")
    assert page.is_hidden("#replay-run")
    assert sorted(r["id"] for r in replay_runs(server)) == sorted(replays)
    assert [m for m in watched.errors() if "status of 409" not in m] == []
    assert watched.remote_requests() == [] and page.evaluate("window.__pwned") is None
    watched.close()
