"""Gates that see the user's benchmarks (issue 44): a session that is not the full sr-bench
set is gated per benchmark by default, so one benchmark collapsing fails it (exit 1); a
benchmark on one side only is reported and the common part gated; `srbench compare
--fail-on` gives the same verdict and exit status from saved runs and JSON reports.

Simulated targets at the smoke profile (mmlu-pro 14, gpqa-diamond 4, arc-agi-2 2, tau3 3
cases): the baseline model answers 90 % right, the broken one nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import srbench
from tests.plugin.gate_helpers import BROKEN, CONFIG, FOUR, GOOD, run_pytest  # noqa: F401

pytestmark = pytest.mark.xdist_group("gate-user-suites")

DEFAULT_LINE = (
    "srbench gate FAILED (regression, per benchmark: this session is not the full sr-bench "
    "set; stratified Wald 95 % Bonferroni-adjusted over 4) against "
)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Baselines (four benchmarks; three, without tau3) and a broken candidate, made once."""
    folder = tmp_path_factory.mktemp("user-gate")
    (folder / "pyproject.toml").write_text(GOOD)
    for name, benchmarks in (("base", FOUR), ("base3", FOUR[:3]), ("same", FOUR)):
        done = run_pytest(folder, benchmarks, f"--srbench-json={name}.json")
        assert done.returncode == 0, done.stdout + done.stderr
    (folder / "pyproject.toml").write_text(BROKEN)
    done = run_pytest(folder, FOUR, "--srbench-json=broken.json")
    assert done.returncode == 0, done.stdout + done.stderr
    return folder


@pytest.fixture
def project(tmp_path: Path, workspace: Path) -> Path:
    shutil.copytree(workspace, tmp_path, dirs_exist_ok=True)
    (tmp_path / "pyproject.toml").write_text(GOOD)
    return tmp_path


def run_id(project: Path, name: str) -> str:
    return str(json.loads((project / f"{name}.json").read_text())["run_id"])


def test_a_collapse_in_a_four_benchmark_session_fails_the_default_gate(project, monkeypatch):
    (project / "pyproject.toml").write_text(BROKEN)
    summary = project / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    done = run_pytest(project, FOUR, "--srbench-baseline=base.json", "--srbench-json=cand.json")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    gate_line = next(line for line in lines if line.startswith("srbench gate "))
    assert gate_line.startswith(DEFAULT_LINE), gate_line
    assert "app mmlu-pro Δ -0.929 [-1.000, -0.284] FAIL" in gate_line
    # every benchmark's Δ next to the verdict, in the terminal and the step summary
    assert "  scope: per benchmark: this session is not the full sr-bench set" in lines
    mmlu = next(line for line in lines if " mmlu-pro " in line and "→" in line)
    assert "0.929 → 0.000  Δ -0.929 [-1.000, -0.284] (14 cases) FAIL" in mmlu
    text = summary.read_text()
    assert "Scope: **per benchmark: this session is not the full sr-bench set**." in text
    assert (
        "| app | app | mmlu-pro | 14 | 0.929 | 0.000 | -0.929 | [-1.000, -0.284] | FAIL |" in text
    )
    gate = json.loads((project / "cand.json").read_text())["gate"]
    assert gate["scope"] == "benchmark" and gate["scope_default"] is True
    rows = {b["benchmark"]: b for b in gate["targets"][0]["benchmarks"]}
    assert set(rows) == set(FOUR) and rows["mmlu-pro"]["passed"] is False
    # an explicit scope still wins
    macro = run_pytest(project, FOUR, "--srbench-baseline=base.json", "--srbench-gate-scope=macro")
    macro_line = next(line for line in macro.stdout.splitlines() if "srbench gate" in line)
    assert macro_line.startswith("srbench gate FAILED (regression, stratified Wald 95 %)")


def test_an_added_benchmark_is_reported_and_the_common_part_gated(project):
    done = run_pytest(project, FOUR, "--srbench-baseline=base3.json", "--srbench-json=cand.json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  Added (not gated): tau3 — in this run only" in done.stdout.splitlines()
    gate = json.loads((project / "cand.json").read_text())["gate"]
    assert gate["passed"] is True and gate["added_benchmarks"] == ["tau3"]
    assert gate["removed_benchmarks"] == []
    assert [b["benchmark"] for b in gate["targets"][0]["benchmarks"]] == [
        "arc-agi-2", "gpqa-diamond", "mmlu-pro"
    ]  # fmt: skip
    assert "— added (not gated): tau3" in gate["line"]
    # and a candidate with no benchmark in common is refused before anything runs
    alone = run_pytest(project, ("tau3",), "--srbench-baseline=base3.json")
    assert alone.returncode == 4, alone.stdout + alone.stderr
    assert "no benchmark in common" in alone.stdout + alone.stderr


@pytest.mark.parametrize("by", ["report", "run id"])
def test_compare_fail_on_gives_the_plugins_verdict_and_exit_status(project, by):
    def ref(name: str) -> str:
        return f"{name}.json" if by == "report" else run_id(project, name)

    failed = srbench(project, "compare", ref("base"), ref("broken"), "--fail-on", "regression")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert failed.stdout.splitlines()[-1].startswith(DEFAULT_LINE)
    assert "app mmlu-pro Δ -0.929 [-1.000, -0.284] FAIL" in failed.stdout
    passed = srbench(project, "compare", ref("base"), ref("same"), "--fail-on", "regression")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert passed.stdout.splitlines()[-1].startswith("srbench gate PASSED (regression, per ")
    # the scope and margin options are the plugin's
    macro = srbench(project, "compare", ref("base"), ref("broken"), "--fail-on", "regression",
                    "--scope", "macro")  # fmt: skip
    assert macro.returncode == 1
    assert macro.stdout.splitlines()[-1].startswith(
        "srbench gate FAILED (regression, stratified Wald 95 %)"
    )
    wide = srbench(project, "compare", ref("base"), ref("same"), "--fail-on", "noninferiority",
                   "--margin", "0.9", "--format", "json")  # fmt: skip
    assert wide.returncode == 0, wide.stdout + wide.stderr
    gates = json.loads(wide.stdout)["gates"]
    assert gates[0]["mode"] == "noninferiority" and gates[0]["margin"] == 0.9
    # without --fail-on, compare never fails on a drop
    plain = srbench(project, "compare", ref("base"), ref("broken"))
    assert plain.returncode == 0 and "srbench gate" not in plain.stdout


def test_compare_fail_on_gates_the_common_part_of_an_added_benchmark(project):
    done = srbench(project, "compare", "base3.json", "broken.json", "--fail-on", "regression")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "gating the common part" in done.stderr
    assert "  Added (not gated): tau3 — in this run only" in done.stdout.splitlines()
    line = done.stdout.splitlines()[-1]
    assert line.startswith("srbench gate FAILED (regression, per benchmark: this session is not")
    assert "over 3)" in line and "— added (not gated): tau3" in line
    # without --fail-on the comparison is refused as before (an input error)
    refused = srbench(project, "compare", "base3.json", "broken.json")
    assert refused.returncode == 2 and "identical planned cases" in refused.stderr
