"""A router next to single models through the plugin: the smoke profile with the built-in
sim-router, the router view in the terminal and the report, and preview mode."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pytest_srbench.store.opening import open_store

pytestmark = pytest.mark.slow

TARGETS = (
    "--srbench-target=sim-large",
    "--srbench-target=sim-small",
    "--srbench-target=sim-router",
)


def test_smoke_run_with_the_simulated_router(pytester):
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-json=report.json",
        "--srbench-limits", "max_cost_usd=200", *TARGETS,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(
        ["*router sim-router (sim):*selected models*", "*decision*cases*accuracy*",
         "*continuity (session_aware):*", "*recipe: captured*"]
    )  # fmt: skip
    report = json.loads((pytester.path / "report.json").read_text())
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    router = targets["sim-router"]
    assert router["kind"] == "mom" and router["total"] == 36 and router["complete"] is True
    assert set(router["selected_models"]) == {"sim-large", "sim-small"}
    assert {"general", "coding"} <= set(router["decisions"]) <= {"reasoning", "general", "coding"}
    assert router["call_count"] >= router["request_count"]
    assert router["cost_usd"] is not None and router["tokens"] is not None
    assert sum(d["cases"] for d in router["decision_breakdown"]) == 36
    continuity = router["continuity"]
    assert continuity["session_mode"] == "session_aware"
    assert continuity["multi_request_tasks"] > 0  # the agent benchmarks talk several turns
    assert targets["sim-large"]["decision_breakdown"] == []
    assert targets["sim-large"]["continuity"]["session_mode"] == "stateless"
    (recipe,) = report["provenance"]["recipes"]
    assert recipe["target_id"] == "sim-router" and recipe["status"] == "captured"

    store = open_store(pytester.path / ".srbench")
    calls = store.calls(report["run_id"])
    router_calls = [c for c in calls if c["target_id"] == "sim-router"]
    sessions: dict[str, set] = {}
    for call in router_calls:
        if call["role"] == "subject":
            sessions.setdefault(call["case_id"], set()).add(call["session_id"])
        else:
            assert call.get("session_id") is None  # never on judge or user-simulator calls
    assert all(len(ids) == 1 and None not in ids for ids in sessions.values())
    assert len({next(iter(ids)) for ids in sessions.values()}) == len(sessions)
    assert all(c.get("session_id") is None for c in calls if c["target_id"] != "sim-router")
    assert store.recipes(report["run_id"])["sim-router"]["recipe"]["decisions"]
    shown = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "--store", str(pytester.path / ".srbench"),
         "show", report["run_id"], "--recipes"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    (printed,) = json.loads(shown.stdout)["recipes"]
    assert printed["status"] == "captured" and "sk-sim-router" not in shown.stdout


def test_preview_mode_through_the_plugin(pytester):
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-json=report.json",
        "--srbench-mode=preview", "--srbench-target=sim-router", "--srbench-benchmark=mmlu-pro",
        "--srbench-preview-context", "session_id=s-1",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*PREVIEW: routing decisions only*"])
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["mode"] == "preview" and report["status"] == "completed"
    (target,) = report["summary"]["targets"]
    assert target["accuracy"] is None and target["correct"] is None
    assert sum(target["selected_models"].values()) == target["total"] == 14
    assert target["selection_statuses"] == {"selected": 14}
    result.stdout.fnmatch_lines(["*14 routed in*"])
    live = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-json=live.json",
        "--srbench-benchmark=mmlu-pro",
    )  # fmt: skip
    assert live.ret == 0
    for pair in (("live.json", "report.json"), ("report.json", "live.json")):
        compared = subprocess.run([sys.executable, "-m", "pytest_srbench", "compare", *pair],
                                  cwd=pytester.path, capture_output=True, text=True)  # fmt: skip
        assert compared.returncode != 0 and "Traceback" not in compared.stderr
        assert f"{report['run_id']} is a preview run" in compared.stderr
        assert "only live runs are compared" in compared.stderr


def test_srbench_preview_command_runs_pytest_in_preview_mode(pytester):
    done = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "preview", "-p", "no:cacheprovider",
         "--srbench-profile=smoke", "--srbench-target=sim-router", "--srbench-benchmark=gpqa-diamond",
         "--srbench-json=preview.json"],
        cwd=pytester.path, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads((pytester.path / "preview.json").read_text())
    assert report["mode"] == "preview" and report["summary"]["targets"][0]["accuracy"] is None


def test_preview_mode_refuses_single_model_targets(pytester):
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-mode=preview",
        "--srbench-target=sim-large", "--srbench-benchmark=mmlu-pro",
    )  # fmt: skip
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*preview mode routes without answering*sim-large*"])
