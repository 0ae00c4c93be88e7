"""Offline regrade and training export over real stores made by real plugin runs: zero model
requests, a separate artifact, and a store folder that stays byte-identical."""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_srbench.app.offline import export_run, graders_from_registry, regrade_run
from pytest_srbench.benchmarks.mcq import MmluProAdapter
from pytest_srbench.benchmarks.registry import AdapterRegistry, default_registry
from pytest_srbench.cli.main import main as srbench_main
from pytest_srbench.cli.offline import add_offline_commands
from pytest_srbench.core.offline.ops import McqGrader, OfflineError
from pytest_srbench.core.offline.reconcile import build_artifact
from pytest_srbench.store.corrections import record_correction
from pytest_srbench.store.opening import open_store
from tests.zygote_server import new_session_command

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("offline-runs")]

CLIPPED_CONFIG = """
[tool.srbench]
default_targets = ["clipped"]

[[tool.srbench.targets]]
id = "clipped"
model = "clipper"
simulated = true
[tool.srbench.targets.prices.clipper]
input = 1.0
cached_input = 0.5
cache_write = 1.0
output = 2.0

[tool.srbench.simulator.models.clipper]
fault = "length"
fault_rate = 1.0
accuracy = 1.0
ttft_s = 0.0
styles = { bare = 1.0 }
[tool.srbench.simulator.models.clipper.prices]
input = 1.0
cached_input = 0.5
cache_write = 1.0
output = 2.0
"""


def real_run(root: Path, *args: str) -> tuple[Path, str]:
    """Run the plugin in ``root`` and return (store folder, run id)."""
    done = subprocess.run(
        [*new_session_command(), "-p", "no:cacheprovider", "-q", *args],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    store = open_store(root / ".srbench")
    try:
        (run_id,) = list(store.iter_run_ids())
    finally:
        store.close()
    return root / ".srbench", run_id


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("smoke")
    return real_run(
        root,
        "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=arc-agi-2",
    )


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("judged")
    return real_run(
        root,
        "--srbench-profile=smoke",
        "--srbench-limit=1",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=simpleqa-verified",
    )


@pytest.fixture(scope="module")
def clipped_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("clipped")
    (root / "pyproject.toml").write_text(CLIPPED_CONFIG)
    return real_run(
        root, "--srbench-profile=smoke", "--srbench-limit=3", "--srbench-benchmark=mmlu-pro"
    )


def snapshot(root: Path) -> dict[str, str]:
    """Every path under the store folder with the SHA-256 of each file's bytes."""
    return {
        str(path.relative_to(root)): (
            hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        )
        for path in sorted(root.rglob("*"))
    }


def offline_parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="srbench")
    root.add_argument("--store", default=".srbench")
    sub = root.add_subparsers(dest="command", required=True)
    add_offline_commands(sub)
    return root


def srbench(*argv: str) -> int:
    """The ``srbench`` command in this process (its one error mapping included)."""
    return srbench_main(list(argv))


def test_regrade_of_a_real_smoke_run_agrees_and_changes_nothing(smoke_run, tmp_path):
    folder, run_id = smoke_run
    before = snapshot(folder)
    store = open_store(folder)
    try:
        saved = {(r["case_id"], r["target_id"]): r for r in store.results(run_id)}
        calls_before = store.count_calls(run_id)
        artifact = regrade_run(store, run_id, tmp_path / "regrade.json")
        assert store.count_calls(run_id) == calls_before
    finally:
        store.close()
    assert snapshot(folder) == before
    assert json.loads((tmp_path / "regrade.json").read_text()) == artifact
    assert artifact["kind"] == "offline-regrade" and artifact["model_requests"] == 0
    assert artifact["source_run_id"] == run_id
    assert artifact["changed_count"] == 0
    assert artifact["grader_versions"] == {
        "arc-agi-2": "sr-bench-grid-exact-v1",
        "mmlu-pro": "sr-bench-mcq-final-v2",
    }
    assert len(artifact["results"]) == len(saved) == 32  # (14 + 2) cases x 2 targets
    for row in artifact["results"]:
        original = saved[(row["case_id"], row["target_id"])]
        assert row["correct"] == row["previous_correct"] == original["correct"]
        assert row["answer"] == original["answer"]
        assert row["answer_status"] == original["details"]["answer_status"]
    assert artifact["correct_count"] == sum(1 for r in saved.values() if r["correct"])
    assert not list(tmp_path.glob(".*.tmp"))


def test_export_of_a_real_smoke_run_has_every_case_and_target(smoke_run, tmp_path):
    folder, run_id = smoke_run
    before = snapshot(folder)
    store = open_store(folder)
    try:
        manifest = store.get_manifest(run_id)
        saved = {(r["case_id"], r["target_id"]): r for r in store.results(run_id)}
        matrix = export_run(store, run_id, tmp_path / "out" / "matrix.json")
    finally:
        store.close()
    assert snapshot(folder) == before
    assert json.loads((tmp_path / "out" / "matrix.json").read_text()) == matrix
    assert matrix["kind"] == "training-matrix" and matrix["split"] == "dev"
    assert matrix["model_requests"] == 0 and matrix["accounting_correction"] is None
    assert matrix["source_plan_sha256"] == manifest.plan_sha256
    assert [row["case_id"] for row in matrix["cases"]] == [case.id for case in manifest.cases]
    for row in matrix["cases"]:
        assert set(row["targets"]) == {"sim-large", "sim-small"}
        for target_id, cell in row["targets"].items():
            original = saved[(row["case_id"], target_id)]
            assert cell["correct"] == original["correct"] and cell["score"] == original["score"]
            assert cell["answer"] == original["answer"]
            assert cell["usage"] == original["usage"] and cell["cost_usd"] == original["cost_usd"]
            assert cell["subject_latency_s"] == original["subject_latency_s"]
            assert isinstance(cell["final"], str) and cell["final"]


def test_export_reads_usage_and_cost_through_the_latest_accounting_correction(smoke_run, tmp_path):
    source, run_id = smoke_run
    folder = tmp_path / "store"
    shutil.copytree(source, folder)
    store = open_store(folder)
    try:
        plan_sha256 = store.get_manifest(run_id).plan_sha256
        calls = store.calls(run_id)
        rows = [
            {
                "call_id": call["id"],
                "original_receipt_sha256": "0" * 64,
                "original_usage": call["usage"],
                "original_cost_usd": call["cost_usd"],
                "usage": call["usage"],
                "cost_usd": call["cost_usd"] * 2,  # as if the frozen prices were re-applied
                "verified": True,
            }
            for call in calls
        ]
        stored, _ = record_correction(store, build_artifact(run_id, plan_sha256, rows))
    finally:
        store.close()
    before = snapshot(folder)
    store = open_store(folder)
    try:
        matrix = export_run(store, run_id, tmp_path / "matrix.json")
    finally:
        store.close()
    assert snapshot(folder) == before
    summary = matrix["accounting_correction"]
    assert summary["id"] == stored["id"] and "calls" not in summary
    doubled: dict[tuple[str, str], list[float]] = {}
    for call in calls:
        if call["role"] == "subject":
            doubled.setdefault((call["case_id"], call["target_id"]), []).append(
                call["cost_usd"] * 2
            )
    for row in matrix["cases"]:
        for target_id, cell in row["targets"].items():
            assert cell["cost_usd"] == math.fsum(doubled[(row["case_id"], target_id)])
            assert cell["usage"] is not None


def test_the_cli_commands_write_artifacts_and_leave_the_store_alone(smoke_run, tmp_path, capsys):
    folder, run_id = smoke_run
    before = snapshot(folder)
    regraded, exported = tmp_path / "r.json", tmp_path / "e.json"
    assert srbench("--store", str(folder), "regrade", run_id, "--output", str(regraded)) == 0
    assert "0 changed" in capsys.readouterr().out
    assert srbench("--store", str(folder), "export", run_id, "--output", str(exported)) == 0
    assert "16 cases × 2 targets" in capsys.readouterr().out
    assert snapshot(folder) == before
    assert json.loads(regraded.read_text())["model_requests"] == 0
    assert json.loads(exported.read_text())["kind"] == "training-matrix"


def test_cli_errors_are_specific_and_exit_2(smoke_run, tmp_path, capsys):
    folder, run_id = smoke_run
    before = snapshot(folder)
    out = str(tmp_path / "x.json")
    assert srbench("--store", str(tmp_path / "none"), "regrade", run_id, "--output", out) == 2
    assert "srbench regrade: no store at" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()
    assert srbench("--store", str(folder), "export", "run-nope", "--output", out) == 2
    assert "srbench export: no run 'run-nope'" in capsys.readouterr().err
    inside = str(folder / "regrade.json")
    assert srbench("--store", str(folder), "regrade", run_id, "--output", inside) == 2
    assert "must be written outside the store folder" in capsys.readouterr().err
    assert snapshot(folder) == before and not (tmp_path / "x.json").exists()
    with pytest.raises(SystemExit):
        offline_parser().parse_args(["regrade", run_id])  # --output is required


def test_regrade_of_a_real_run_with_a_judged_benchmark_is_rejected(judged_run, tmp_path, capsys):
    folder, run_id = judged_run
    before = snapshot(folder)
    out = tmp_path / "r.json"
    assert srbench("--store", str(folder), "regrade", run_id, "--output", str(out)) == 2
    err = capsys.readouterr().err
    assert err.startswith("srbench regrade: regrade of a run containing judged benchmarks")
    assert "simpleqa-verified" in err
    assert not out.exists() and snapshot(folder) == before
    # the same dev-split run exports fine: training export takes every benchmark
    assert srbench("--store", str(folder), "export", run_id, "--output", str(out)) == 0
    cases = json.loads(out.read_text())["cases"]
    assert {row["benchmark"] for row in cases} == {"mmlu-pro", "simpleqa-verified"}


def test_truncated_answers_of_a_real_run_stay_incorrect(clipped_run, tmp_path):
    folder, run_id = clipped_run
    store = open_store(folder)
    try:
        manifest = store.get_manifest(run_id)
        calls = store.calls(run_id)
        artifact = regrade_run(store, run_id, tmp_path / "r.json")
    finally:
        store.close()
    cases = {case.id: case for case in manifest.cases}
    assert len(artifact["results"]) == 3
    for call in calls:
        assert call["finish_reason"] == "length"
        # the clipped text still names the right letter; only the truncation makes it wrong
        assert McqGrader().grade(cases[call["case_id"]], call["final"]).correct
    for row in artifact["results"]:
        assert row["correct"] is False and row["previous_correct"] is False
        assert row["quality_failure"] == "output_limit" and row["changed"] is False
    assert artifact["changed_count"] == 0 and artifact["model_requests"] == 0


def test_graders_come_from_the_registrys_mcq_and_grid_adapters():
    graders = graders_from_registry(default_registry(with_entry_points=False))
    assert set(graders) == {"mmlu-pro", "gpqa-diamond", "mmlu", "arc-agi-2"}


def test_an_adapter_that_overrides_the_mcq_protocol_is_not_regraded():
    class TwoStep(MmluProAdapter):
        benchmark = "two-step"

        async def evaluate(self, ctx):
            return await super().evaluate(ctx)

    graders = graders_from_registry(AdapterRegistry([MmluProAdapter(), TwoStep()]))
    assert set(graders) == {"mmlu-pro"}


def test_unknown_run_is_an_offline_error(smoke_run, tmp_path):
    folder, _ = smoke_run
    store = open_store(folder)
    try:
        with pytest.raises(OfflineError, match="no run 'run-nope'"):
            regrade_run(store, "run-nope", tmp_path / "r.json")
    finally:
        store.close()
