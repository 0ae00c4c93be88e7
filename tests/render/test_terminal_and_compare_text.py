"""Flip rates in the terminal: the run summary's repeats block and the comparison table."""

from __future__ import annotations

from pytest_srbench.core.compare.runs import RunSide, compare_many
from pytest_srbench.render.compare import comparison_csv, render_comparison
from pytest_srbench.render.terminal import render_summary
from tests.render.flip_helpers import CASES, report  # noqa: F401


def test_the_run_summary_prints_flip_rates_with_repeats() -> None:
    """K=2: case a right twice (agrees), case b right then wrong (flips).
    flip rate 1/2 = 0.5; mean agreement (1 + 1/2) / 2 = 0.75;
    pairwise disagreement (0 + 2·1·1 / (2·1)) / 2 = 0.5."""
    lines = render_summary(report("k2", 2, {"mmlu-pro/b#r2"}))
    assert (
        "repeats (K=2): flip rate = share of fully observed cases whose repeats did not all agree"
        in lines
    )
    assert (
        "  t: flip rate 0.500 (1/2 cases) · mean agreement 0.750 · pairwise disagreement 0.500"
        in lines
    )
    assert not any(line.startswith("repeats") for line in render_summary(report("k1", 1, set())))


def test_the_comparison_table_prints_flip_rates_of_both_sides() -> None:
    base = RunSide.from_report(report("base-k1", 1, set()))
    cand = RunSide.from_report(report("cand-k2", 2, {"mmlu-pro/b#r2"}))
    result = compare_many(base, [cand])
    row = result["candidates"][0]["comparisons"][0]
    assert (row["baseline_flip_rate"], row["candidate_flip_rate"]) == (None, 0.5)
    lines = render_comparison(result)
    header = next(line for line in lines if line.startswith("run "))
    assert header.rstrip().endswith("flip rate base/cand")
    assert any(line.rstrip().endswith("—/0.500") for line in lines)
    assert any("Flip rate = share of a target's cases" in line for line in lines)
    assert comparison_csv(result).splitlines()[1].endswith(",0.5")
    # without repeats on either side the column is left out
    plain = compare_many(base, [RunSide.from_report(report("cand-k1", 1, set()))])
    assert not any("flip rate" in line for line in render_comparison(plain))


def test_the_comparison_table_names_no_other_baseline_when_every_row_has_the_selected_one():
    """Every candidate target paired with the selected baseline target: no 'against' column
    (tests/cli/test_compare_pairing.py shows it when a row is set against its own id)."""
    base = RunSide.from_report(report("base-k1", 1, set()))
    result = compare_many(base, [RunSide.from_report(report("cand-k1", 1, set()))])
    candidate = result["candidates"][0]
    assert {row["baseline_target_id"] for row in candidate["comparisons"]} == {
        candidate["baseline_selected_target_id"]
    }
    lines = render_comparison(result)
    header = next(line for line in lines if line.startswith("run "))
    assert header.split()[:3] == ["run", "target", "Δ"]
    assert not any("'against' column" in line for line in lines)
