"""The Benchmark Service kinds through the plugin, offline: rag-smoke over the shipped corpus
in all three retrieval modes, agent-smoke against simulated models (only with
--srbench-offline), and an incompatible index refused before any query."""

from __future__ import annotations

import json

import pytest

from pytest_srbench.store.opening import open_store
from tests.optional import part_missing

pytestmark = pytest.mark.slow

MISMATCHED = """
[tool.srbench]

[[tool.srbench.targets]]
id = "notes-vector"
kind = "retrieval"
model = "srbench-notes-v1"
simulated = true
retrieval = { mode = "vector", top_k = 5, embedding_dimensions = 768 }
"""


@pytest.fixture(autouse=True)
def fast_embedder(monkeypatch):
    monkeypatch.setenv("SRBENCH_SIM_EMBEDDER", "hashing")


def test_rag_smoke_reports_every_metric_per_mode(pytester):
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-benchmark=rag-smoke", "--srbench-json=report.json"
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*RAG retrieval (per mode*", "*sim-rag-hybrid*hybrid*28/28*"])
    report = json.loads((pytester.path / "report.json").read_text())
    rows = {row["mode"]: row for row in report["rag"]["rows"]}
    assert set(rows) == {"fts", "vector", "hybrid"}
    for row in rows.values():
        assert row["total_cases"] == 28 and row["successful_cases"] == 28
        assert row["failed_cases"] == 0 and row["failure_rate"] == 0
        for metric in ("hit_at_1", "hit_at_5", "recall_at_k", "mrr", "citation_hit_rate"):
            assert 0 <= row[metric] <= 1
        assert row["hit_at_1"] <= row["hit_at_5"] and row["citation_cases"] == 19
        assert row["p50_latency_ms"] is not None and row["p95_latency_ms"] >= row["p50_latency_ms"]
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    assert targets["sim-rag-fts"]["accuracy"] == rows["fts"]["hit_at_5"]  # a cell is hit@5
    snapshot = report["rag"]["config_snapshot"]
    assert snapshot["modes"] == ["fts", "hybrid", "vector"]
    assert (
        snapshot["datasets"][0]["dataset_id"] == "rag-smoke" and snapshot["datasets"][0]["sha256"]
    )
    assert snapshot["embedding"]["policy"] == "per_case"
    assert snapshot["index"]["sim-rag-vector"]["vector_rows"] > 0
    assert snapshot["python"] and snapshot["app_version"]
    store = open_store(pytester.path / ".srbench")
    results = store.results(report["run_id"])
    fts = [r for r in results if r["target_id"] == "sim-rag-fts"]
    assert all(r["details"]["rag"]["embedding"]["source"] == "not_used" for r in fts)
    vector = [r for r in results if r["target_id"] == "sim-rag-vector"]
    assert all(r["details"]["rag"]["embedding"]["source"] == "local" for r in vector)
    assert report["agent"] is None


def test_run_retrieval_settings_are_frozen_into_the_plan_and_searched_with(pytester):
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-benchmark=rag-smoke", "--srbench-limit=3",
        "--srbench-target=sim-rag-vector", "--srbench-retrieval", "reranker=minilm-maxsim",
        "--srbench-retrieval=mode=fts", "--srbench-json=report.json",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    settings = {"mode": "fts", "top_k": 5, "reranker": "minilm-maxsim"}
    store = open_store(pytester.path / ".srbench")
    (target,) = store.get_manifest(report["run_id"]).targets
    assert target.id == "sim-rag-vector" and target.retrieval == settings
    snapshot = report["rag"]["config_snapshot"]
    assert snapshot["retrieval"] == {"sim-rag-vector": {**settings, "rrf_k": 60}}  # + default
    assert snapshot["modes"] == ["fts"]
    assert snapshot["reranker"] == {"sim-rag-vector": "minilm-maxsim"}
    (row,) = report["rag"]["rows"]
    assert row["mode"] == "fts" and row["successful_cases"] == 3
    for cell in store.results(report["run_id"]):
        rag = cell["details"]["rag"]
        assert rag["embedding"]["source"] == "not_used"  # fts, whatever the target was
        assert rag["reranker"]["name"] == "minilm-maxsim" and rag["reranker"]["source"] == "local"
        assert rag["reranker"]["model_id"] == "srbench-hashing-384"  # this test's embedder


def test_mismatched_embedding_dimension_is_refused_before_any_query(pytester):
    (pytester.path / "pyproject.toml").write_text(MISMATCHED)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-benchmark=rag-smoke", "--srbench-target=notes-vector"
    )
    assert result.ret != 0
    result.stderr.fnmatch_lines(
        [
            "*BENCHMARK_INDEX_INCOMPATIBLE: target notes-vector: embedding dimension * differs from the expected 768*"
        ]
    )
    store = pytester.path / ".srbench"
    assert not store.exists() or open_store(store).list_runs() == []  # no run, no query


def test_agent_smoke_needs_the_offline_flag_against_the_simulator(pytester):
    refused = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-benchmark=agent-smoke"
    )
    assert refused.ret != 0
    refused.stderr.fnmatch_lines(["*runs against real providers by default*--srbench-offline*"])

    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-benchmark=agent-smoke", "--srbench-offline",
        "--srbench-json=report.json",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*Agent tasks (rule-judged*"])
    report = json.loads((pytester.path / "report.json").read_text())
    rows = {row["target_id"]: row for row in report["agent"]["rows"]}
    assert set(rows) == {"sim-large", "sim-small"}
    for row in rows.values():
        assert row["total_cases"] == 5 and row["evaluated_cases"] == 5
        assert row["success_rate"] == row["succeeded_cases"] / 5
        assert row["tool_selection_accuracy"] is not None and row["invalid_call_rate"] == 0
    store = open_store(pytester.path / ".srbench")
    by_case = {(r["case_id"], r["target_id"]): r for r in store.results(report["run_id"])}
    approved = by_case[("agent-smoke/a04-approved-task", "sim-large")]["details"]["agent"]
    assert approved["succeeded"] and approved["created_tasks"][0]["task_id"] == "T-1"
    refusal = by_case[("agent-smoke/a05-no-approval", "sim-large")]["details"]["agent"]
    assert refusal["succeeded"] and refusal["tool_calls"] == []


def test_rag_and_agent_together_pair_each_benchmark_with_its_target_kind(pytester):
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-benchmark=rag-smoke", "--srbench-benchmark=agent-smoke",
        "--srbench-offline", "--srbench-json=report.json", "--srbench-html=report.html",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    totals = {t["id"]: t["total"] for t in report["summary"]["targets"]}
    assert totals == {"sim-large": 5, "sim-small": 5, "sim-rag-fts": 28, "sim-rag-vector": 28,
                      "sim-rag-hybrid": 28}  # fmt: skip
    assert report["summary"]["planned_cells"] == 94
    assert "custom task subset" not in report["summary"]["targets"][0]["score_scope"]
    html = (pytester.path / "report.html").read_text()
    assert 'id="rag"' in html and 'id="agent"' in html
    assert 'data-rag="sim-rag-hybrid"' in html and 'data-agent="sim-small"' in html


def test_rag_smoke_with_the_real_embedding_model(pytester, monkeypatch):
    from pytest_srbench.notes.embedding import EmbedderUnavailable, minilm_model_dir

    try:
        minilm_model_dir()
    except EmbedderUnavailable as error:
        part_missing(f"all-MiniLM-L6-v2 unavailable: {error}")
    monkeypatch.delenv("SRBENCH_SIM_EMBEDDER", raising=False)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-benchmark=rag-smoke",
        "--srbench-target=sim-rag-vector", "--srbench-json=report.json",
        # MiniLM queries are CPU work in the simulator: on a loaded machine the default 30 s
        # idle timeout can expire; this test is about the embedding, not about speed
        "--srbench-limits=idle_timeout_s=600", "--srbench-limits=total_timeout_s=600",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    (row,) = report["rag"]["rows"]
    assert row["mode"] == "vector" and row["hit_at_5"] >= 0.9  # paraphrases are found
    index = report["rag"]["config_snapshot"]["index"]["sim-rag-vector"]
    assert index["embedding"]["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert index["embedding"]["dimensions"] == 384
    store = open_store(pytester.path / ".srbench")
    for result_row in store.results(report["run_id"]):
        embedding = result_row["details"]["rag"]["embedding"]
        assert embedding["source"] == "local" and embedding["fallback_reason"] is None
        assert embedding["model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
