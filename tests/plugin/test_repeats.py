"""Repeats end to end: K journaled cells per case, agreement and flip rates, and comparisons
that use the per-case mean (a K=1 baseline against a K=3 candidate)."""

from __future__ import annotations

import json

import pytest

from pytest_srbench.cli.main import main as srbench_main

pytestmark = pytest.mark.slow

CONFIG = """
[tool.srbench]
default_targets = ["steady", "flaky"]

[[tool.srbench.targets]]
id = "steady"
model = "steady-model"
simulated = true
[tool.srbench.targets.prices.steady-model]
input = 1.0
cached_input = 0.5
cache_write = 1.0
output = 2.0

[[tool.srbench.targets]]
id = "flaky"
model = "flaky-model"
simulated = true
[tool.srbench.targets.prices.flaky-model]
input = 1.0
cached_input = 0.5
cache_write = 1.0
output = 2.0

[tool.srbench.simulator.models.steady-model]
accuracy = 0.9
latency_s = 0.0
prices = { input = 1.0, cached_input = 0.5, cache_write = 1.0, output = 2.0 }

[tool.srbench.simulator.models.flaky-model]
accuracy = 0.2
flip_rate = 1.0
latency_s = 0.0
prices = { input = 1.0, cached_input = 0.5, cache_write = 1.0, output = 2.0 }
"""


def run(pytester: pytest.Pytester, name: str, *args: str) -> dict:
    return run_with_output(pytester, name, *args)[0]


def run_with_output(pytester: pytest.Pytester, name: str, *args: str) -> tuple[dict, str]:
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=gpqa-diamond",
        f"--srbench-json={name}",
        *args,
    )
    assert result.ret == 0, result.stdout.str()
    return json.loads((pytester.path / name).read_text()), result.stdout.str()


def test_repeats_journal_every_cell_and_report_agreement(pytester, capsys):
    pytester.makepyprojecttoml(CONFIG)
    # the K=1 baseline runs the deterministic target only: with the flaky one in it too, the
    # strongest single of the baseline would depend on the flaky target's fresh draws
    once = run(pytester, "once.json", "--srbench-target=steady")
    thrice, output = run_with_output(pytester, "thrice.json", "--srbench-repeats=3")

    assert once["repeats"] is None and once["plan"]["repeats"] == 1
    assert len(thrice["cells"]) == 18 * 3 * 2
    assert {c["status"] for c in thrice["cells"]} == {"completed"}
    case_ids = {c["case_id"] for c in thrice["cells"]}
    assert "mmlu-pro/smoke-biology-001#r3" in case_ids
    assert thrice["plan"]["repeats"] == 3
    assert thrice["plan"]["case_sha256"] == once["plan"]["case_sha256"]
    for target in thrice["summary"]["targets"]:
        assert target["total"] == 54  # every repeat counts in the denominator

    # the deterministic target's repeats all agree: every interval is the K=1 one (a case's
    # repeats are one unit, not three independent observations)
    once_steady = once["summary"]["targets"][0]
    thrice_steady = next(t for t in thrice["summary"]["targets"] if t["id"] == "steady")
    assert thrice_steady["cases"] == 18 and thrice_steady["accuracy_effective_cases"] == 18
    for key in ("accuracy_ci95", "macro_accuracy_ci95"):
        assert thrice_steady[key] == once_steady[key], key
    rows = [r["accuracy_ci95"] for r in thrice["benchmarks"] if r["target_id"] == "steady"]
    assert rows == [r["accuracy_ci95"] for r in once["benchmarks"]]
    points = {
        (frontier["target_id"], "once" if report is once else "thrice"): frontier["quality_ci95"]
        for report in (once, thrice)
        for frontier in report["frontier"]["points"] + report["frontier"]["unplaced"]
    }
    assert points["steady", "thrice"] == points["steady", "once"] is not None

    agreement = {t["target_id"]: t for t in thrice["repeats"]["targets"]}
    assert agreement["steady"]["flip_rate"] == 0  # deterministic answers never flip
    assert agreement["steady"]["mean_agreement"] == 1
    assert agreement["flaky"]["fully_observed_cases"] == 18
    assert agreement["flaky"]["flip_rate"] > 0  # a fresh draw per request
    per_case = [c for c in thrice["repeats"]["cases"] if c["target_id"] == "flaky"]
    assert len(per_case) == 18 and all(c["observed"] == 3 for c in per_case)
    flaky_rate = agreement["flaky"]["flip_rate"]
    assert "repeats (K=3): flip rate" in output  # the terminal summary prints them
    assert "steady: flip rate 0.000 (0/18 cases)" in output
    assert f"flaky: flip rate {flaky_rate:.3f} (" in output

    # a K=1 baseline against a K=3 candidate: per-case means are compared
    code = srbench_main(
        [
            "--store",
            str(pytester.path / ".srbench"),
            "compare",
            str(pytester.path / "once.json"),
            str(pytester.path / "thrice.json"),
            "--json",
            str(pytester.path / "compare.json"),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "Newcombe" in text and "flip rate base/cand" in text
    result = json.loads((pytester.path / "compare.json").read_text())
    rows = {r["candidate_target_id"]: r for r in result["candidates"][0]["comparisons"]}
    assert rows["steady"]["baseline_target_id"] == "steady"  # strongest single of the baseline
    assert rows["steady"]["quality_delta"] == pytest.approx(0.0, abs=1e-12)
    # the same model on the same cases at K=3 spends about three times as much, the same per
    # case: savings are compared per case, so about 0 % (not -200 %)
    steady = rows["steady"]
    assert steady["cost_basis"] == "per_case"
    assert (steady["baseline_cells_per_case"], steady["candidate_cells_per_case"]) == (1, 3)
    assert steady["candidate_subject_cost_usd"] == pytest.approx(
        3 * steady["baseline_subject_cost_usd"]
    )  # the simulator's usage is deterministic per case
    assert steady["subject_cost_saving_percent"] == pytest.approx(0, abs=1e-9)
    assert steady["total_cost_saving_percent"] == pytest.approx(0, abs=1e-9)
    assert (steady["baseline_flip_rate"], steady["candidate_flip_rate"]) == (None, 0)
    flaky = rows["flaky"]
    assert flaky["paired_cases"] == 18
    assert flaky["paired_statistics"]["binary_outcomes"] is False  # means over repeats
