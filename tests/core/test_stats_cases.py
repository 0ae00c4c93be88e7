"""Intervals over cases: the Kish effective number of cases, Wilson at that size, the
stratified macro interval, Student's t quantile and Wilson's worst-case coverage (worked
examples with their arithmetic)."""

import math
from fractions import Fraction

import pytest

from pytest_srbench.core.stats import (
    LOW_COVERAGE,
    LOW_COVERAGE_MAX_CASES,
    WILSON_Z,
    case_interval,
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
def test_without_repeats_it_is_exactly_wilson(correct, total):
    clusters = [(1, 1)] * correct + [(0, 1)] * (total - correct)
    # p(1 − p)/v = n − 1 < n, so the size is clamped to n: Wilson on correct / total
    assert effective_cases(clusters) == total
    assert case_interval(clusters) == wilson_interval(correct, total)


@pytest.mark.parametrize("repeats", [2, 3, 5])
def test_identical_repeats_give_the_interval_of_one_repeat(repeats):
    once = [(1, 1)] * 9 + [(0, 1)] * 5
    k_times = [(repeats, repeats)] * 9 + [(0, repeats)] * 5
    assert effective_cases(k_times) == 14
    assert case_interval(k_times) == case_interval(once) == wilson_interval(9, 14)


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
    assert case_interval(clusters) == wilson_bounds(0.5, float(size))
    # wider than Wilson over the 30 cells, narrower than over 10 Bernoulli cases
    cells = wilson_interval(15, 30)
    cases = wilson_interval(5, 10)
    assert cells is not None and cases is not None
    interval = case_interval(clusters)
    assert interval is not None
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
    assert interval == pytest.approx(wilson_bounds(p, 1 / (0.16 / 14 + 0.36 / 4)), abs=1e-15)
    assert interval == pytest.approx([0.17172750000340548, 0.694629880120776], abs=1e-15)


def test_stratified_interval_uses_the_larger_variance():
    # equal weights; 14/14 (e = 14) and 1/2 (e = 2): p = 0.75
    # own:    0.25 · 0 / 14 + 0.25 · 0.25 / 2 = 0.03125 (larger)
    # pooled: 0.75 · 0.25 · (0.25 / 14 + 0.25 / 2) = 0.026786
    interval = stratified_case_interval([(0.1, 14, 14, 14.0), (0.1, 1, 2, 2.0)])
    assert interval == pytest.approx(wilson_bounds(0.75, 0.1875 / 0.03125), abs=1e-15)
    # all right everywhere: no variance, n = (Σ ω² / e)⁻¹ = (0.25 / 14 + 0.25 / 2)⁻¹ = 7
    assert stratified_case_interval([(0.1, 14, 14, 14.0), (0.1, 2, 2, 2.0)]) == pytest.approx(
        wilson_bounds(1.0, 7.0)
    )


def test_one_stratum_is_that_strata_interval_exactly():
    assert stratified_case_interval([(0.15, 9, 14, 14.0)]) == wilson_interval(9, 14)
    clusters = [(3, 3)] * 3 + [(2, 3)] * 2 + [(1, 3)] * 2 + [(0, 3)] * 3
    size = effective_cases(clusters)
    assert size is not None
    assert stratified_case_interval([(0.1, 15, 30, float(size))]) == case_interval(clusters)
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
    assert coverage_caveat(1) == 0.793 and coverage_caveat(2) == 0.882  # rounded down


def test_low_coverage_ends_at_the_constant():
    assert wilson_worst_coverage(LOW_COVERAGE_MAX_CASES) < LOW_COVERAGE
    assert coverage_caveat(LOW_COVERAGE_MAX_CASES) is not None
    assert all(wilson_worst_coverage(n) >= LOW_COVERAGE for n in range(56, 121))
    assert coverage_caveat(56) is None and coverage_caveat(2000) is None
    assert coverage_caveat(0) is None
