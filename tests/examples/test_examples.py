"""Every example under examples/ runs as its README says, offline against the simulator."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def copy_example(pytester: pytest.Pytester, name: str) -> Path:
    shutil.copytree(EXAMPLES / name, pytester.path, dirs_exist_ok=True)
    return pytester.path


def pytest_run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-profile=smoke", *args)


def test_prompt_variants_are_compared_and_gated(pytester, monkeypatch):
    root = copy_example(pytester, "prompt_variants")
    monkeypatch.setenv("SUPPORT_BOT_PROMPT", "v1")
    main = pytest_run(pytester, "--srbench-json=main.json")
    assert main.ret == 0, main.stdout.str()
    monkeypatch.setenv("SUPPORT_BOT_PROMPT", "v2")
    pr = pytest_run(pytester, "--srbench-baseline=main.json",
                    "--srbench-json=pr.json")  # fmt: skip
    assert pr.ret == 0, pr.stdout.str()
    report = json.loads((root / "pr.json").read_text())
    assert report["gate"]["passed"] is True and report["gate"]["baseline_source"] == "main.json"
    compared = pytester.run(sys.executable, "-m", "pytest_srbench", "compare", "main.json",
                            "pr.json")  # fmt: skip
    assert compared.ret == 0, compared.stderr.str()


def test_a_rule_as_a_target_beside_the_models(pytester):
    root = copy_example(pytester, "your_code_as_target")
    both = pytest_run(pytester, "--srbench-json=all.json")
    assert both.ret == 0, both.stdout.str()
    report = json.loads((root / "all.json").read_text())
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    assert set(targets) == {"sim-large", "sim-small", "longest-option"}
    assert targets["longest-option"]["total"] == 4 and targets["longest-option"]["failed"] == 0
    assert targets["longest-option"]["cost_usd"] is None
    alone = pytest_run(pytester, "--srbench-target", "longest-option")
    assert alone.ret == 0, alone.stdout.str()


def test_a_tool_using_agent_graded_by_the_agent_rules(pytester):
    root = copy_example(pytester, "tool_agent")
    result = pytest_run(pytester, "--srbench-offline",
                        "--srbench-json=agent.json")  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*Agent tasks (rule-judged*"])
    report = json.loads((root / "agent.json").read_text())
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    rows = {row["target_id"]: row for row in report["agent"]["rows"]}
    assert set(targets) == set(rows) == {"sim-large", "sim-small"}
    for target_id, row in rows.items():
        assert targets[target_id]["total"] == 5 and targets[target_id]["failed"] == 0
        assert row["evaluated_cases"] == row["total_cases"] == 5
        assert row["success_rate"] == row["succeeded_cases"] / 5
        assert row["tool_selection_accuracy"] is not None and row["invalid_call_rate"] == 0
        # each step of the loop is one journaled call: the simulator makes one tool call per
        # step, and each case ends with its answer
        assert targets[target_id]["request_count"] == row["calls_made"] + 5


def test_a_rag_app_measured_for_retrieval_and_answers(pytester):
    root = copy_example(pytester, "rag_app")
    result = pytest_run(pytester, "--srbench-json=report.json")
    assert result.ret == 0, result.stdout.str()
    report = json.loads((root / "report.json").read_text())
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    assert set(targets) == {"sim-large", "sim-small", "notes-rag", "sim-rag-fts",
                            "sim-rag-vector", "sim-rag-hybrid"}  # fmt: skip
    assert all(t["failed"] == 0 and t["pending"] == 0 for t in targets.values())
    # retrieval: the app's ranked results, in its own mode beside the three services
    rows = {row["target_id"]: row for row in report["rag"]["rows"]}
    app = rows["notes-rag"]
    assert (app["mode"], app["top_k"], app["total_cases"], app["successful_cases"]) == (
        "notes-rag", 5, 28, 28)  # fmt: skip
    assert 0.5 < app["hit_at_5"] <= 1.0 and 0.5 < app["mrr"] <= 1.0
    assert app["hit_at_1"] <= app["hit_at_5"] and app["citation_cases"] == 19
    assert {rows[t]["mode"] for t in rows if t != "notes-rag"} == {"fts", "vector", "hybrid"}
    # answers: one accuracy row per target of the Python-defined benchmark
    accuracy = {(b["benchmark"], b["target_id"]): b for b in report["benchmarks"]}
    for target_id in ("sim-large", "sim-small", "notes-rag"):
        row = accuracy[("notes-qa", target_id)]
        assert row["total"] == 8 and row["completed"] == 8 and row["failed"] == 0
    assert accuracy[("notes-qa", "notes-rag")]["correct"] >= 4  # the extractive reader
    # the simulator knows no answer to a question of the example's own benchmark
    sim_answers = {c["answer"] for c in report["cells"]
                   if c["benchmark"] == "notes-qa" and c["target_id"] == "sim-large"}  # fmt: skip
    assert sim_answers == {"I do not know the answer to this question."}


def test_an_empty_project_runs_the_shipped_suites(pytester):
    root = copy_example(pytester, "sr_bench")
    result = pytest_run(pytester, "--srbench-json=report.json")
    assert result.ret == 0, result.stdout.str()
    report = json.loads((root / "report.json").read_text())
    assert report["summary"]["planned_cells"] == 72
    assert len({cell["benchmark"] for cell in report["cells"]}) == 9
    result.stdout.fnmatch_lines(["collected 72 items", "* correct, * wrong in *"])
