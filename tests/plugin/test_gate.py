"""The CI gate end to end: quick-profile suites (synthetic, 640 cases over three benchmarks),
a baseline report from one job, a degraded model in the next job fails it with exit status 1,
the same model passes; bad baselines are usage errors before anything runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.zygote_server import new_session_command

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("gate-workspace")]

CONFIG = """
[tool.srbench]
default_targets = ["mut"]

[[tool.srbench.targets]]
id = "mut"
model = "{model}"
simulated = true
[tool.srbench.targets.prices.{model}]
input = 1.0
cached_input = 0.5
cache_write = 1.0
output = 2.0

[tool.srbench.simulator.models.fast-good]
accuracy = 0.85
latency_s = 0.0
prices = {{ input = 1.0, cached_input = 0.5, cache_write = 1.0, output = 2.0 }}

[tool.srbench.simulator.models.fast-degraded]
accuracy = 0.70
latency_s = 0.0
prices = {{ input = 1.0, cached_input = 0.5, cache_write = 1.0, output = 2.0 }}
"""
BENCHMARKS = ("mmlu-pro", "gpqa-diamond", "simpleqa-verified")
ARGS = (
    "-p",
    "no:cacheprovider",
    "--srbench-profile=quick",
    "--srbench-concurrency=64",
    *[f"--srbench-benchmark={b}" for b in BENCHMARKS],
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Synthetic quick suites and one baseline run (store + main.json), made once per module;
    every test starts from a copy, so the expensive part is paid once."""
    folder = tmp_path_factory.mktemp("gate")
    (folder / "pyproject.toml").write_text(CONFIG.format(model="fast-good"))
    made = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "datasets", "synth", "--profile", "quick",
         *[arg for b in BENCHMARKS for arg in ("--benchmark", b)]],
        cwd=folder, capture_output=True, text=True,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    base = subprocess.run(
        [*new_session_command(), *ARGS, "--srbench-json=main.json"],
        cwd=folder, capture_output=True, text=True,
    )  # fmt: skip
    assert base.returncode == 0, base.stdout + base.stderr
    return folder


@pytest.fixture
def project(pytester: pytest.Pytester, workspace: Path) -> pytest.Pytester:
    for name in ("suites", ".srbench"):
        shutil.copytree(workspace / name, pytester.path / name)
    for name in ("pyproject.toml", "main.json"):
        shutil.copy(workspace / name, pytester.path / name)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(*ARGS, *args)


def test_degraded_model_fails_the_gate_and_the_same_model_passes(project, monkeypatch):
    baseline = json.loads((project.path / "main.json").read_text())
    assert baseline["summary"]["planned_cells"] == 640
    assert baseline["plan"]["profile"] == "quick"

    same = run(project, "--srbench-baseline=main.json", "--srbench-json=same.json")
    assert same.ret == 0, same.stdout.str()
    assert same.stdout.lines[-2].startswith("srbench gate PASSED (regression")
    assert json.loads((project.path / "same.json").read_text())["gate"]["passed"] is True

    project.makepyprojecttoml(CONFIG.format(model="fast-degraded"))
    summary = project.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    # three benchmarks are not the full sr-bench set: the default scope would be per benchmark
    worse = run(
        project,
        "--srbench-baseline=main.json",
        "--srbench-json=worse.json",
        "--srbench-gate-scope=macro",
    )
    assert worse.ret == 1, worse.stdout.str()
    gate_line = worse.stdout.lines[-2]
    assert gate_line.startswith("srbench gate FAILED (regression, stratified Wald 95 %)")
    assert "mut Δ -0.1" in gate_line and "FAIL — design power " in gate_line
    report = json.loads((project.path / "worse.json").read_text())
    gate = report["gate"]
    assert gate["passed"] is False and gate["targets"][0]["interval"][1] < 0
    assert gate["design"]["cases"] == 640 and gate["design"]["usable"] is True
    assert gate["comparison"]["comparisons"][0]["paired_cases"] == 640
    stored = project.path / ".srbench" / "runs" / report["run_id"] / "report.json"
    assert json.loads(stored.read_text())["gate"]["passed"] is False
    assert "### srbench gate ❌ failed" in summary.read_text()
    assert "| mut | mut |" in summary.read_text()

    # the conservative interval cannot see the same drop at this size
    hoeffding = run(
        project,
        "--srbench-baseline=main.json",
        "--srbench-gate-interval=hoeffding",
        "--srbench-gate-scope=macro",
    )
    assert hoeffding.ret == 0, hoeffding.stdout.str()
    assert hoeffding.stdout.lines[-2].startswith(
        "srbench gate PASSED (regression, paired Hoeffding"
    )

    # xdist: the controller sets the exit status
    spread = run(project, "-n", "2", f"--srbench-baseline={baseline['run_id']}")
    assert spread.ret == 1, spread.stdout.str()
    assert "srbench gate FAILED" in spread.stdout.str()


def test_noninferiority_against_a_run_in_the_store(project):
    run_id = json.loads((project.path / "main.json").read_text())["run_id"]
    ok = run(
        project,
        f"--srbench-baseline={run_id}",
        "--srbench-gate=noninferiority",
        "--srbench-gate-scope=macro",
    )
    assert ok.ret == 0, ok.stdout.str()
    assert "srbench gate PASSED (noninferiority, stratified Wald 95 %, margin 0.05)" in (
        ok.stdout.str()
    )
    # a margin no re-run can show at 640 cases is refused before anything runs (it used to
    # run every cell, then fail)
    strict = run(
        project,
        f"--srbench-baseline={run_id}",
        "--srbench-gate=noninferiority",
        "--srbench-margin=0.001",
    )
    assert strict.ret == pytest.ExitCode.USAGE_ERROR, strict.stdout.str()
    strict.stderr.fnmatch_lines(["*--srbench-margin=0.001 can never pass at this plan's size*"])


def test_bad_baselines_are_usage_errors_before_anything_runs(project):
    missing = run(project, "--srbench-limit=20", "--srbench-baseline=nowhere.json")
    assert missing.ret == pytest.ExitCode.USAGE_ERROR
    missing.stderr.fnmatch_lines(["*--srbench-baseline: 'nowhere.json' is neither a report file*"])

    (project.path / "broken.json").write_text("{not json")
    broken = run(project, "--srbench-limit=20", "--srbench-baseline=broken.json")
    assert broken.ret == pytest.ExitCode.USAGE_ERROR
    broken.stderr.fnmatch_lines(["*broken.json: not a JSON report*"])

    lonely = run(project, "--srbench-limit=20", "--srbench-gate=noninferiority")
    assert lonely.ret == pytest.ExitCode.USAGE_ERROR
    lonely.stderr.fnmatch_lines(["*--srbench-gate needs --srbench-baseline*"])

    other = run(
        project,
        "--srbench-baseline=main.json",
        "--srbench-limits",
        "max_output_chars=999",
    )
    assert other.ret == pytest.ExitCode.USAGE_ERROR
    other.stderr.fnmatch_lines(
        ["*cannot gate this run: Cannot compare runs with different limits*"]
    )
    # a hand-edited report: one correct cell flipped to wrong, its summary left as it was
    report = json.loads((project.path / "main.json").read_text())
    cell = next(c for c in report["cells"] if c["correct"] is True)
    cell["correct"] = False
    (project.path / "edited.json").write_text(json.dumps(report))
    edited = run(project, "--srbench-baseline=edited.json")
    assert edited.ret == pytest.ExitCode.USAGE_ERROR
    edited.stderr.fnmatch_lines(
        [f"*cannot gate this run: Baseline report *edited.json is inconsistent: target mut on "
         f"{cell['benchmark']} says * correct but its cells hold * correct*"]
    )  # fmt: skip
    listing = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "runs"],
        cwd=project.path, capture_output=True, text=True,
    )  # fmt: skip
    assert listing.stdout.count("run-") == 1  # only the baseline: no rejected run was created
