"""Concurrency through the plugin, counted at a real simulator: ownership under xdist, the
in-flight bound, fail-closed with -x, and limit overrides from the command line."""

from __future__ import annotations

import json

import pytest

from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store
from tests.plugin.helpers import project

pytestmark = pytest.mark.slow


def report(pytester) -> dict:
    return json.loads((pytester.path / "report.json").read_text())


def test_xdist_dispatches_every_cell_exactly_once(pytester, sim):
    project(pytester, sim, "always-right", "slow")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=gpqa-diamond",
        "-n",
        "2",
        "--srbench-concurrency=3",
        "--srbench-json=report.json",
    )
    assert result.ret == 0
    data = report(pytester)
    stats = sim_client.stats(sim.admin_url)
    store = open_store(pytester.path / ".srbench")
    calls = store.calls(data["run_id"])
    assert stats["requests"] == len(calls) == data["summary"]["planned_cells"] == 36
    assert len({(c["case_id"], c["target_id"]) for c in calls}) == 36
    assert stats["max_in_flight"] <= 2 * 3
    assert data["provenance"]["runner"]["processes"] == 2
    assert data["provenance"]["runner"]["total_concurrency"] == 6
    assert data["provenance"]["runner"]["peak_rss_mb"] > 0


def test_concurrency_bound_in_one_process(pytester, sim):
    project(pytester, sim, "slow")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=gpqa-diamond",
        "--srbench-concurrency=4",
        "-p",
        "no:xdist",
    )
    assert result.ret == 0
    stats = sim_client.stats(sim.admin_url)
    assert stats["requests"] == 18 and stats["max_in_flight"] == 4


def test_exit_first_fails_closed(pytester, sim):
    project(pytester, sim, "slow", "err500")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=gpqa-diamond",
        "-x",
        "--srbench-concurrency=4",
        "--srbench-json=report.json",
        "-p",
        "no:xdist",
    )
    assert result.ret == 1
    # the failure pytest shows names the cell that stopped the run, not only a bare cancel
    result.stdout.fnmatch_lines(
        [
            "*could not be graded*the run stopped after 1 failed cell*[[]err500] failed: Target HTTP 500: simulated internal error"
        ]
    )
    data = report(pytester)
    assert data["status"] == "failed"
    metrics = {t["id"]: t for t in data["summary"]["targets"]}
    assert metrics["err500"]["failed"] >= 1
    assert sum(t["pending"] for t in metrics.values()) > 0
    assert sim_client.stats(sim.admin_url)["requests"] < 36
    statuses = {cell["status"] for cell in data["cells"]}
    assert "pending" in statuses


def test_limit_override_from_the_command_line(pytester, sim):
    project(pytester, sim, "always-right")
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=gpqa-diamond",
        "--srbench-limits=max_cost_usd=0.0000001",
        "--srbench-json=report.json",
        "-p",
        "no:xdist",
    )
    assert result.ret == 1
    data = report(pytester)
    # the first failure's own reason (its group is "Frozen request or cost budget exhausted")
    assert data["failure"]["reason"].startswith(
        "Insufficient cost budget for a bounded call reservation"
    ), data["failure"]
    assert sim_client.stats(sim.admin_url)["requests"] == 0
    assert data["status"] == "failed"


def test_invalid_limit_override_is_a_usage_error(pytester):
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=gpqa-diamond",
        "--srbench-limits=bogus=1",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*invalid limits: bogus*"])


def test_an_item_asked_for_its_outcome_again_gets_it_from_the_store(pytester, sim):
    """The engine stops holding a cell's outcome once its item took it (memory stays flat over
    a long run); an item that runs again — a rerun plugin, a hook — still gets the same
    outcome, read from the store, and no request is sent twice."""
    project(pytester, sim, "always-right")
    pytester.makepyfile(
        again_plugin="""
        import pytest

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_makereport(item, call):
            seen = item.config.stash.setdefault(SEEN, {})
            if call.when == "teardown" and item.get_closest_marker("srbench"):
                item.runtest()  # the same cell's outcome, asked for a second time
                dispatcher = item.config.pluginmanager.get_plugin("srbench-dispatcher")
                outcome = dispatcher.taken_outcomes.pop(item.nodeid)
                seen[item.nodeid] = (outcome.status, outcome.result["correct"])
            return (yield)

        SEEN = pytest.StashKey()

        def pytest_sessionfinish(session):
            seen = session.config.stash[SEEN]
            print("AGAIN", len(seen), sorted(set(seen.values())))
        """
    )
    requests = sim_client.stats(sim.admin_url)["requests"]
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "again_plugin", "-s", "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines(["*AGAIN 14 [[]('completed', True)[]]"])
    assert sim_client.stats(sim.admin_url)["requests"] == requests + 14
