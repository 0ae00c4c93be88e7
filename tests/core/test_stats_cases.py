"""Intervals over cases: the Kish effective number of cases, Wilson at that size, the
stratified macro interval, Student's t quantile and Wilson's worst-case coverage (worked
examples with their arithmetic)."""

import math
from fractions import Fraction

import pytest

from pytest_srbench.core.stats import (
    EDGE_COUNT,
    LOW_COVERAGE,
    LOW_COVERAGE_MAX_CASES,
    WILSON_Z,
    accuracy_bounds,
    accuracy_interval,
    accuracy_worst_coverage,
    case_interval,
    clopper_pearson_bounds,
    coverage_caveat,
    effective_cases,
    stratified_case_interval,
    student_t_mass,
    student_t_quantile,
    wilson_bounds,
    wilson_interval,
    wilson_worst_coverage,
)


@pytest.mark.parametrize(("correct", "total"), [(9, 14), (0, 10), (1, 1), (5, 10), (1, 3)])
def test_without_repeats_it_is_exactly_the_interval_of_correct_over_total(correct, total):
    clusters = [(1, 1)] * correct + [(0, 1)] * (total - correct)
    # p(1 − p)/v = n − 1 < n, so the size is clamped to n: Wilson on correct / total
    assert effective_cases(clusters) == total
    assert case_interval(clusters) == accuracy_interval(correct, total)


@pytest.mark.parametrize("repeats", [2, 3, 5])
def test_identical_repeats_give_the_interval_of_one_repeat(repeats):
    once = [(1, 1)] * 9 + [(0, 1)] * 5
    k_times = [(repeats, repeats)] * 9 + [(0, repeats)] * 5
    assert effective_cases(k_times) == 14
    assert case_interval(k_times) == case_interval(once) == accuracy_interval(9, 14)


def test_disagreeing_repeats_worked_example():
    # 10 cases, K = 3, correct repeats 3, 3, 3, 2, 2, 1, 1, 0, 0, 0: p = 15 / 30 = 1/2
    clusters = [(3, 3)] * 3 + [(2, 3)] * 2 + [(1, 3)] * 2 + [(0, 3)] * 3
    # Σ (c_i − p k_i)² = 6 · 1.5² + 4 · 0.5² = 14.5
    # p(1 − p) / v = 0.25 · 30² · (10 − 1) / (10 · 14.5) = 2025 / 145 = 13.9655…
    # t(9 df, 97.5 %) = 2.2621571628; (1.959964 / 2.262157)² = 0.7506727
    # 13.9655 · 0.7506727 = 10.48353, inside [10 cases, 30 cells]
    size = effective_cases(clusters)
    assert size is not None
    assert float(size) == pytest.approx(2025 / 145 * (WILSON_Z / 2.2621571627982044) ** 2)
    assert float(size) == pytest.approx(10.48353281848561, rel=1e-12)
    # 5 right cases of 10 is within EDGE_COUNT of the edge: the hull of Wilson at the effective
    # size and Clopper–Pearson over the 10 cases
    assert case_interval(clusters) == accuracy_bounds(0.5, float(size), cases=10)
    wilson = wilson_bounds(0.5, float(size))
    exact = clopper_pearson_bounds(0.5, 10)
    assert case_interval(clusters) == [min(wilson[0], exact[0]), max(wilson[1], exact[1])]
    # Wilson at the effective size: wider than over the 30 cells, narrower than over 10 cases
    interval = wilson
    cells = wilson_interval(15, 30)
    cases = wilson_interval(5, 10)
    assert cells is not None and cases is not None
    assert cases[0] < interval[0] < cells[0] and cells[1] < interval[1] < cases[1]


def test_effective_size_is_kept_within_cases_and_cells():
    # 8 cases each 1 or 2 of 3 right: p = 12/24, Σ (c − 1.5 · ... )² = 8 · 0.25 = 2,
    # p(1 − p)/v = 0.25 · 24² · 7 / (8 · 2) = 63; · (z / t_7)² = 63 · 0.687 = 43.3 > 24 cells
    assert effective_cases([(2, 3), (1, 3)] * 4) == 24
    # every case 1 of 3 right: no spread at all, so the cells
    assert effective_cases([(1, 3)] * 5) == 15
    # 6 cases 3, 3, 2, 1, 0, 0 of 3: p(1 − p)/v = 0.25 · 18² · 5 / (6 · 9.5) = 7.1 > 6, but
    # · (z / t_5)² = 7.1 · 0.581 = 4.1 < 6: clamped to the 6 cases
    assert effective_cases([(3, 3), (3, 3), (2, 3), (1, 3), (0, 3), (0, 3)]) == 6
    # one case, or all right / all wrong: the number of cases
    assert effective_cases([(2, 3)]) == 1
    assert effective_cases([(3, 3), (3, 3)]) == 2 and effective_cases([(0, 3)] * 4) == 4
    assert effective_cases([]) is None and case_interval([]) is None


def test_exact_arithmetic_makes_equal_inputs_equal_outputs():
    a = [(2, 3), (0, 3), (3, 3), (1, 3)] * 7
    assert effective_cases(a) == effective_cases(list(reversed(a)))
    assert isinstance(effective_cases(a), Fraction)


@pytest.mark.parametrize(
    ("df", "expected"),
    [
        (1, math.tan(0.475 * math.pi)),  # Cauchy: tan(π (0.975 − 1/2)) = 12.7062
        (2, 0.95 / math.sqrt(2 * 0.975 * 0.025)),  # (2F − 1) / √(2F(1 − F)) = 4.3027
        (9, 2.2621571627982044),
        (30, 2.0422724563012373),
    ],
)
def test_student_t_quantile(df, expected):
    assert student_t_quantile(df) == pytest.approx(expected, rel=1e-12)
    assert student_t_mass(student_t_quantile(df), df) == pytest.approx(0.95, abs=1e-12)


def test_stratified_interval_worked_example():
    # weights 0.10 and 0.15 renormalise to ω = 0.4, 0.6; p_b = 9/14 (e = 14) and 1/4 (e = 4)
    # p = 0.4 · 9/14 + 0.6 · 1/4 = 0.407143
    # own:    0.16 · (9/14)(5/14) / 14 + 0.36 · (1/4)(3/4) / 4 = 0.019499
    # pooled: p(1 − p) · (0.16 / 14 + 0.36 / 4) = 0.241378 · 0.101429 = 0.024483 (larger)
    # n = p(1 − p) / 0.024483 = 1 / 0.101429 = 9.859
    interval = stratified_case_interval([(0.1, 9, 14, 14.0), (0.15, 1, 4, 4.0)])
    p = 0.4 * 9 / 14 + 0.6 * 0.25
    assert interval == pytest.approx(accuracy_bounds(p, 1 / (0.16 / 14 + 0.36 / 4)), abs=1e-15)
    # 0.407 · 9.86 = 4.0 successes: within EDGE_COUNT, so Clopper–Pearson's hull (Wilson alone
    # was [0.171728, 0.694630])
    assert interval == pytest.approx([0.12437818940340001, 0.7455510821348788], abs=1e-12)


def test_stratified_interval_uses_the_larger_variance():
    # equal weights; 14/14 (e = 14) and 1/2 (e = 2): p = 0.75
    # own:    0.25 · 0 / 14 + 0.25 · 0.25 / 2 = 0.03125 (larger)
    # pooled: 0.75 · 0.25 · (0.25 / 14 + 0.25 / 2) = 0.026786
    interval = stratified_case_interval([(0.1, 14, 14, 14.0), (0.1, 1, 2, 2.0)])
    assert interval == pytest.approx(accuracy_bounds(0.75, 0.1875 / 0.03125), abs=1e-15)
    # all right everywhere: no variance, n = (Σ ω² / e)⁻¹ = (0.25 / 14 + 0.25 / 2)⁻¹ = 7
    assert stratified_case_interval([(0.1, 14, 14, 14.0), (0.1, 2, 2, 2.0)]) == pytest.approx(
        accuracy_bounds(1.0, 7.0)
    )


def test_one_stratum_is_that_strata_interval_exactly():
    assert stratified_case_interval([(0.15, 9, 14, 14.0)]) == accuracy_interval(9, 14)
    clusters = [(3, 3)] * 3 + [(2, 3)] * 2 + [(1, 3)] * 2 + [(0, 3)] * 3
    size = effective_cases(clusters)
    assert size is not None
    assert stratified_case_interval([(0.1, 15, 30, float(size), 10)]) == case_interval(clusters)
    assert stratified_case_interval([]) is None
    assert stratified_case_interval([(0.0, 1, 2, 2.0)]) is None


def test_wilson_worst_coverage_worked_examples():
    z2 = WILSON_Z**2
    # n = 1: Wilson(0/1) = [0, z²/(1 + z²)] = [0, 0.79345]; just above 0.79345 only X = 1
    # covers, with probability p → 0.79345
    assert wilson_worst_coverage(1) == pytest.approx(z2 / (1 + z2), abs=1e-15)
    # n = 2: just below the lower end of Wilson(2/2), L = 0.34238, X = 2 stops covering:
    # P(X ≤ 1) = 1 − L² = 0.88278
    low = wilson_interval(2, 2)
    assert low is not None
    assert wilson_worst_coverage(2) == pytest.approx(1 - low[0] ** 2, abs=1e-15)
    # the printed interval at n = 1 is Clopper–Pearson's [0, 0.975] and [0.025, 1]: 97.5 %
    assert accuracy_worst_coverage(1) == pytest.approx(0.975, abs=1e-12)
    assert accuracy_interval(0, 1) == [0, pytest.approx(0.975)]


def test_the_printed_interval_covers_93_percent_for_any_accuracy():
    """Issue 47: Wilson covers 83.8 % near 0 and 1 whatever n (89.5 % at 58–110 cases and an
    accuracy of 0.005–0.01); the printed interval (Clopper–Pearson's hull within EDGE_COUNT of
    the edge) covers ≥ 93 % for a true accuracy anywhere in [0, 1], so no interval carries a
    caveat any more (exact, n ≤ 120 here; bench/interval_coverage.py goes to 300 and beyond)."""
    assert EDGE_COUNT == 12 and LOW_COVERAGE_MAX_CASES == 0
    assert wilson_worst_coverage(80, (0.0, 1.0)) < 0.85
    assert wilson_worst_coverage(58, (0.005, 0.01)) < 0.9
    assert min(accuracy_worst_coverage(n) for n in range(1, 121)) >= LOW_COVERAGE
    assert coverage_caveat(1) is None and coverage_caveat(55) is None
    assert coverage_caveat(2000) is None and coverage_caveat(0) is None


@pytest.mark.parametrize(("right", "total"), [(0, 10), (1, 10), (3, 10), (1, 100), (12, 100)])
def test_clopper_pearson_bounds_match_the_beta_quantiles(right, total):
    """Clopper–Pearson by bisection on our incomplete beta, against closed forms: x = 0 gives
    an upper bound 1 − (α/2)^(1/n); x = 1 a lower bound 1 − (1 − α/2)^(1/n)."""
    low, high = clopper_pearson_bounds(right / total, total)
    if right == 0:
        assert low == 0 and high == pytest.approx(1 - 0.025 ** (1 / total), abs=1e-12)
    if right == 1:
        assert low == pytest.approx(1 - 0.975 ** (1 / total), abs=1e-12)
    assert 0 <= low <= right / total < high <= 1
