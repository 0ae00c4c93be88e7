"""Honest labels through real runs on the built-in simulator: each report says where its cases
came from (released, original, synthetic, user, mixed), only released data at the sr-bench
counts is labelled sr-bench 1.0, and the CI gate refuses a baseline whose same benchmark came
from other data before anything runs (or runs and says so when allowed)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from pytest_srbench.cli.main import main
from pytest_srbench.core.plan.srbench import PROFILE_COUNTS
from pytest_srbench.datasets.suites import shipped_suites_dir
from pytest_srbench.store.opening import open_store

pytestmark = pytest.mark.slow

ONE_TARGET = ("-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-target=sim-large")


def project_suite(root: Path, benchmark: str, origin: dict | None = None) -> dict:
    """A copy of the shipped suite in the project's ``suites/`` (it replaces the shipped one),
    its ``suite.json`` saying ``origin`` (none: the suite does not say, so it is the user's)."""
    folder = root / "suites" / benchmark
    shutil.copytree(shipped_suites_dir() / benchmark, folder)
    meta = json.loads((folder / "suite.json").read_text())
    meta.pop("origin")
    meta.update(source=f"our copy of the {benchmark} smoke items", revision="ours-1")
    if origin is not None:
        meta["origin"] = origin
    (folder / "suite.json").write_text(json.dumps(meta, indent=2))
    return meta


def released(folder: Path) -> dict:
    """The origin ``srbench datasets fetch`` records (here for a copy of the smoke items)."""
    cases = hashlib.sha256((folder / "cases.jsonl").read_bytes()).hexdigest()
    return {
        "kind": "released",
        "source": f"https://huggingface.co/datasets/example/{folder.name}",
        "revision": "0123456789abcdef0123456789abcdef01234567",
        "files": {"data/test.parquet": cases},
        "license": "MIT",
        "via": "huggingface_hub",
    }


def run(pytester: pytest.Pytester, *args: str, json_name: str = "report.json"):
    result = pytester.runpytest_subprocess(*ONE_TARGET, f"--srbench-json={json_name}", *args)
    report_path = pytester.path / json_name
    report = json.loads(report_path.read_text()) if report_path.exists() else None
    return result, report


def test_released_data_at_the_profile_counts_is_labelled_sr_bench(pytester):
    for benchmark in PROFILE_COUNTS:
        project_suite(pytester.path, benchmark, released(shipped_suites_dir() / benchmark))
    result, report = run(pytester)
    assert result.ret == 0, result.stdout.str()[-2000:]
    (summary,) = report["summary"]["targets"]
    assert summary["complete"] and summary["sr_bench_score"] == summary["macro_accuracy"]
    assert summary["score_comparable"] is True
    assert summary["score_scope"] == "sr-bench 1.0; profile=smoke"
    assert report["data_sources"]["kind"] == "released" and report["data_sources"]["comparable"]
    assert report["plan"]["data_sources"]["hle"] == released(shipped_suites_dir() / "hle")
    assert {row["data_source"]["kind"] for row in report["benchmarks"]} == {"released"}
    result.stdout.fnmatch_lines(
        ["data: sr-bench 1.0 data: all nine benchmarks from their released data at the smoke "
         "profile's counts",
         "  released: https://huggingface.co/datasets/example/tau3 @ 0123456789ab* — tau3",
         "sim-large (sim): macro accuracy * · sr_bench_score 0.* · sr-bench 1.0; profile=smoke"]
    )  # fmt: skip


def test_synthetic_data_is_labelled_synthetic(pytester):
    out = str(pytester.path / "suites")
    assert main(["datasets", "synth", "--profile", "quick", "--seed", "5", "--out", out,
                 "--benchmark", "gpqa-diamond"]) == 0  # fmt: skip
    result, report = run(pytester, "--srbench-benchmark=gpqa-diamond")
    assert result.ret == 0, result.stdout.str()[-2000:]
    (row,) = report["benchmarks"]
    assert row["data_source"]["kind"] == "synthetic" and row["data_source"]["seed"] == 5
    assert row["data_source"]["generator"].startswith("pytest-srbench ")
    assert report["data_sources"]["label"] == (
        "synthetic data — scores are not comparable with sr-bench 1.0"
    )
    (summary,) = report["summary"]["targets"]
    assert summary["score_scope"] == (
        "selected benchmark subset; renormalized fixed weights; synthetic data; profile=smoke"
    )
    result.stdout.fnmatch_lines(
        ["gpqa-diamond  sim-large  synthetic  *",
         "data: synthetic data — scores are not comparable with sr-bench 1.0",
         "  synthetic: pytest-srbench * datasets synth, seed 5 — gpqa-diamond"]
    )  # fmt: skip


def test_user_and_mixed_data_are_labelled(pytester):
    project_suite(pytester.path, "gpqa-diamond")  # says no origin: the project's own
    result, report = run(
        pytester, "--srbench-benchmark=gpqa-diamond", "--srbench-benchmark=mmlu-pro"
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    kinds = {row["benchmark"]: row["data_source"]["kind"] for row in report["benchmarks"]}
    assert kinds == {"gpqa-diamond": "user", "mmlu-pro": "original"}
    user = report["plan"]["data_sources"]["gpqa-diamond"]
    assert user["source"] == "our copy of the gpqa-diamond smoke items"
    assert set(user["files"]) == {"cases.jsonl"}
    sources = report["data_sources"]
    assert (sources["kind"], sources["kinds"]) == ("mixed", ["original", "user"])
    assert report["summary"]["targets"][0]["score_scope"] == (
        "selected benchmark subset; renormalized fixed weights; mixed data (original, user); "
        "profile=smoke"
    )
    result.stdout.fnmatch_lines(
        ["data: mixed data (original, user) — scores are not comparable with sr-bench 1.0",
         "  user: our copy of the gpqa-diamond smoke items — gpqa-diamond",
         "  original: original smoke items written for pytest-srbench — mmlu-pro"]
    )  # fmt: skip


def test_the_gate_refuses_a_baseline_on_other_data_before_anything_runs(pytester):
    gpqa = ("--srbench-benchmark=gpqa-diamond",)
    result, baseline = run(pytester, *gpqa, json_name="main.json")  # the shipped originals
    assert result.ret == 0 and baseline["data_sources"]["kind"] == "original"
    project_suite(pytester.path, "gpqa-diamond")  # the same items, now the project's own
    result, _ = run(pytester, *gpqa, "--srbench-baseline=main.json", json_name="pr.json")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*the baseline * (main.json) cannot gate this run: Cannot compare runs whose cases come "
         "from different data sources: gpqa-diamond is original: original smoke items written "
         "for pytest-srbench in the baseline * but user: our copy of the gpqa-diamond smoke "
         "items in the candidate * (different kinds of data); allow mixed sources explicitly*"]
    )  # fmt: skip
    assert not (pytester.path / "pr.json").exists()
    store = open_store(pytester.path / ".srbench", read_only=True)
    assert [r.id for r in store.list_runs()] == [baseline["run_id"]]  # nothing was created
    store.close()
    result, report = run(
        pytester, *gpqa, "--srbench-baseline=main.json", "--srbench-allow-mixed-sources",
        json_name="pr.json",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    gate = report["gate"]
    assert gate["passed"] and "MIXED DATA SOURCES" in gate["line"]
    assert gate["comparison"]["data_sources"]["differences"][0]["benchmark"] == "gpqa-diamond"
    result.stdout.fnmatch_lines(["*srbench gate PASSED*MIXED DATA SOURCES*gpqa-diamond*"])
