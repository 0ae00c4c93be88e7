"""Offline replay end to end (run-lifecycle.md §11.2): a live run of the simulator's single
models and a preview of a simulated router on the same frozen mmlu-pro cases, then
``srbench replay`` — its estimated accuracy equals the one computed here by hand from the
preview's selections and the singles' results, and no request reaches the simulator. The same
flow on a SQLite folder and on a PostgreSQL database (``--srbench-store`` / ``--store``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from pytest_srbench.store.opening import open_store
from tests.plugin.helpers import replay_pyproject, settle_simulator

pytestmark = pytest.mark.slow


def _project(pytester, sim) -> None:
    pytester.makefile(
        ".toml", pyproject=replay_pyproject(sim.admin_url, sim.base_url, router_prices=True)
    )


@pytest.fixture(params=["sqlite", "postgres"])
def replay_store(request, pytester) -> str:
    """Where the runs and the replay are kept: the project's SQLite folder, or a fresh
    PostgreSQL database."""
    if request.param == "sqlite":
        return str(pytester.path / ".srbench")
    return str(request.getfixturevalue("postgres_url"))


def _srbench(pytester, store: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "--store", store, *args],
        cwd=pytester.path, capture_output=True, text=True,
    )  # fmt: skip


def test_replay_estimates_the_router_from_its_preview_without_a_request(
    pytester, sim, replay_store
):
    _project(pytester, sim)
    common = ("-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
              f"--srbench-store={replay_store}")  # fmt: skip
    live = pytester.runpytest_subprocess(
        *common, "--srbench-target=sim-large", "--srbench-target=sim-small",
        "--srbench-json=live.json",
    )  # fmt: skip
    assert live.ret == 0, live.stdout.str()[-3000:]
    preview = pytester.runpytest_subprocess(
        *common, "--srbench-mode=preview", "--srbench-target=replay-router",
        "--srbench-json=preview.json",
    )  # fmt: skip
    assert preview.ret == 0, preview.stdout.str()[-3000:]
    live_id = json.loads((pytester.path / "live.json").read_text())["run_id"]
    preview_id = json.loads((pytester.path / "preview.json").read_text())["run_id"]

    before = settle_simulator(sim)["requests"]
    made = _srbench(pytester, replay_store, "replay", "--baseline", live_id,
                    "--preview", preview_id, "--idempotency-key", "k-1", "--json", "replay.json",
                    "--print-run-id")  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert "REPLAY (offline estimate)" in made.stdout
    again = _srbench(pytester, replay_store, "replay", "--baseline", live_id,
                     "--preview", preview_id, "--idempotency-key", "k-1", "--print-run-id")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert settle_simulator(sim)["requests"] == before  # zero model requests, twice
    first = json.loads(made.stdout.strip().splitlines()[-1])
    second = json.loads(again.stdout.strip().splitlines()[-1])
    assert first["created"] is True and second == {"run_id": first["run_id"], "created": False}

    store = open_store(replay_store)
    # by hand: each case takes the result of the single the preview selected
    selected = {r["case_id"]: r["details"]["routing"]["selected_model"]
                for r in store.results(preview_id)}  # fmt: skip
    correct = {(r["case_id"], r["target_id"]): r["correct"] for r in store.results(live_id)}
    expected = sum(correct[(case, model)] is True for case, model in selected.items()) / len(
        selected
    )
    assert set(Counter(selected.values())) == {"sim-large", "sim-small"}  # both are exercised

    report = json.loads((pytester.path / "replay.json").read_text())
    assert report["mode"] == "replay" and report["status"] == "completed"
    assert report["evidence_mode"] == "offline_estimate"
    assert report["replay_sources"] == {"baseline_run_id": live_id, "preview_run_id": preview_id}
    (target,) = report["summary"]["targets"]
    assert target["estimated_accuracy"] == pytest.approx(expected)
    assert target["estimated_macro_accuracy"] == pytest.approx(expected)
    assert target["accuracy"] is None and target["macro_accuracy"] is None
    assert target["sr_bench_score"] is None and target["cost_complete"] is False
    assert target["total_spend_usd"] == 0 and report["summary"]["total_spend_usd"] == 0
    assert store.progress_counts(first["run_id"]).spend_usd == 0  # as a run's listing says
    assert target["estimated_cost_usd"] is not None and target["cost_usd"] is None
    assert target["selected_models"] == dict(Counter(selected.values()))
    assert target["selection_statuses"] == {"selected": len(selected)}

    run_id = first["run_id"]
    assert store.get_manifest(run_id).name.startswith("Offline replay: replay-router")
    live_calls = {c["id"]: c for c in store.calls(live_id)}
    calls = store.calls(run_id)
    assert len(calls) == len(selected)
    for call in calls:
        assert call["status"] == "replayed" and call["target_id"] == "replay-router"
        source = live_calls[call["source_call_id"]]
        assert source["case_id"] == call["case_id"]
        assert source["target_id"] == selected[call["case_id"]]
    for row in store.results(run_id):
        assert row["details"]["evidence_mode"] == "offline_estimate"
    kinds = Counter(e["kind"] for e in store.events(run_id))
    assert kinds["call_replayed"] == len(selected)

    # compare refuses the replay as live evidence, on either side
    for pair in ((live_id, run_id), (run_id, live_id)):
        compared = _srbench(pytester, replay_store, "compare", *pair)
        assert compared.returncode == 2, compared.stdout
        assert f"run {run_id} is an offline replay (estimate), not live evidence" in compared.stderr

    # a swapped pair is refused by name, with nothing created
    swapped = _srbench(pytester, replay_store, "replay", "--baseline", preview_id,
                       "--preview", live_id, "--idempotency-key", "k-2")  # fmt: skip
    assert swapped.returncode == 2
    assert "replay_ineligible: baseline_not_live" in swapped.stderr
    assert "replay_ineligible: preview_not_preview" in swapped.stderr
    assert store.find_run_by_key("k-2") is None
    store.close()
