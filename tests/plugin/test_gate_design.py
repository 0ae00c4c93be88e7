"""The gate's design through the real plugin: a gate that can never pass is a usage error before
anything runs (no run is created), and a verdict carries the design's power (smoke profile,
mmlu-pro only, three cases: seconds)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow

RUN = (
    "-p",
    "no:cacheprovider",
    "--srbench-profile=smoke",
    "--srbench-benchmark=mmlu-pro",
    "--srbench-limit=3",
)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    made = pytester.runpytest_subprocess(*RUN, "--srbench-json=main.json")
    assert made.ret == 0, made.stdout.str()
    return pytester


def runs_in_store(pytester: pytest.Pytester) -> int:
    listing = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "runs"],
        cwd=pytester.path, capture_output=True, text=True,
    )  # fmt: skip
    return listing.stdout.count("run-")


def test_a_noninferiority_gate_no_rerun_can_pass_is_refused_before_anything_runs(project):
    """Three mmlu-pro cases: even a re-run that agrees on all three gets 0 ± 1.96·√(1/(4·3))
    = ±0.566, so a margin of 0.05 can never pass. An identical re-run passes once
    1.96² < 0.05²·n(n + 1), i.e. n(n + 1) > 1536.6: 39 cases; in the worst case (every case
    differs, the floor's pseudo-case), 1.96²/n < 0.05²: 1,537 cases."""
    refused = project.runpytest_subprocess(
        *RUN,
        "--srbench-baseline=main.json",
        "--srbench-gate=noninferiority",
        "--srbench-gate-scope=macro",
    )
    output = refused.stdout.str() + refused.stderr.str()
    assert refused.ret == pytest.ExitCode.USAGE_ERROR, output
    assert "Traceback" not in output
    refused.stderr.fnmatch_lines(
        [
            "ERROR: pytest-srbench: --srbench-gate=noninferiority --srbench-margin=0.05 can "
            "never pass at this plan's size (3 cases over 1 benchmark): even a re-run that "
            "agrees on every case gets ±0.566, so a candidate of equal quality always fails. "
            "It needs about 39 cases at this benchmark mix (about 1,537 if every case "
            "differs), or a margin above 0.566"
        ]
    )
    assert runs_in_store(project) == 1  # only the baseline: nothing was planned or spent
    # one benchmark is not the full sr-bench set: by default the gate is per benchmark, and
    # its refusal says the scope was the default and how to gate the macro score
    default = project.runpytest_subprocess(
        *RUN, "--srbench-baseline=main.json", "--srbench-gate=noninferiority"
    )
    assert default.ret == pytest.ExitCode.USAGE_ERROR
    default.stderr.fnmatch_lines(
        ["*(the default scope: this session is not the full sr-bench set; "
         "--srbench-gate-scope=macro gates the macro score)"]
    )  # fmt: skip

    # the same plan with a margin it can show runs, and its verdict carries the design
    wide = project.runpytest_subprocess(
        *RUN,
        "--srbench-baseline=main.json",
        "--srbench-gate=noninferiority",
        "--srbench-margin=0.6",
        "--srbench-gate-scope=macro",
        "--srbench-json=wide.json",
    )
    assert wide.ret == 0, wide.stdout.str()
    line = wide.stdout.lines[-2]
    assert line.startswith("srbench gate PASSED (noninferiority, stratified Wald 95 %, margin 0.6)")
    assert "— design power " in line and "to pass at equal quality if half the cases differ" in line
    gate = json.loads((project.path / "wide.json").read_text())["gate"]
    assert gate["design"]["identical_rerun_half_width"] == pytest.approx(0.566, abs=1e-3)
    assert gate["design"]["usable"] is True and gate["design"]["cases"] == 3


def test_a_regression_gate_that_can_never_fail_is_refused(project):
    """Three cases, all lost: Δ −1, second moment (3 + 1)/4 = 1, upper bound
    −1 + 1.96·√(1/3) = +0.132 ≥ 0: no result can fail this gate, so it is refused too
    (from four cases on a lost benchmark fails: −1 + 1.96·√(5/20) = −0.020)."""
    refused = project.runpytest_subprocess(
        *RUN, "--srbench-baseline=main.json", "--srbench-gate-scope=benchmark"
    )
    assert refused.ret == pytest.ExitCode.USAGE_ERROR, refused.stdout.str()
    refused.stderr.fnmatch_lines(
        [
            "ERROR: pytest-srbench: --srbench-gate=regression --srbench-gate-scope=benchmark "
            "can never fail at this plan's size (3 cases over 1 benchmark): even losing every "
            "case leaves the interval's upper bound at or above 0. Plan more cases per benchmark"
        ]
    )
    assert runs_in_store(project) == 1
