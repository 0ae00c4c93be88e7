"""A judge or user simulator bound for a real target reaches the server it names: the built-in
``sim-judge`` / ``sim-user`` are answered by the simulator the session starts, never by the
subject's server, and a receipt says ``simulated`` only when the simulator answered it."""

from __future__ import annotations

import json
import textwrap

import pytest

from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import open_store

pytestmark = pytest.mark.slow


def test_a_builtin_judge_and_user_for_an_outside_server_are_served_by_the_simulator(pytester, sim):
    # the subject's server is "outside": the plugin neither starts nor declares it simulated
    pytester.makefile(
        ".toml",
        pyproject=textwrap.dedent(f"""
        [tool.srbench]
        default_targets = ["outside"]
        [[tool.srbench.targets]]
        id = "outside"
        model = "always-right"
        base_url = "{sim.base_url}"
        [tool.srbench.targets.prices.always-right]
        input = 1.0
        cached_input = 0.5
        cache_write = 2.0
        output = 2.0
        [tool.srbench.benchmarks.hle]
        judge = "sim-judge"
        [tool.srbench.benchmarks.tau3]
        simulator = "sim-user"
        """),
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-json=report.json", "--srbench-benchmark=hle",
        "--srbench-benchmark=tau3", "--srbench-limit=1",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    report = json.loads((pytester.path / "report.json").read_text())
    store = open_store(pytester.path / ".srbench")
    calls = store.calls(report["run_id"])
    subject = [c for c in calls if c["role"] == "subject"]
    judge = [c for c in calls if c["role"] == "judge"]
    user = [c for c in calls if c["role"] == "simulator"]
    assert len(judge) == 1 and user
    # only the subject's calls reached the outside server
    assert sim_client.stats(sim.admin_url)["requests"] == len(subject)
    for call in judge + user:
        assert call["status"] == "completed" and call["simulated"] is True
        assert call["model"] == call["requested_model"] in ("sim-judge", "sim-user")
        assert call["cost_usd"] is not None  # priced as the simulated model it is
    # the user simulator plays the case's script (the session registered it there)
    (tau,) = [c for c in store.get_manifest(report["run_id"]).cases if c.benchmark == "tau3"]
    assert user[0]["final"] == tau.metadata["reference_dialogue"]["user"][0]
    assert {cell["status"] for cell in report["cells"]} == {"completed"}
