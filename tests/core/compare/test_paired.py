"""Paired statistics: sr-bench's examples 17-19 and published values for Newcombe / McNemar."""

from __future__ import annotations

import itertools
import math

import pytest

from pytest_srbench.core.compare import paired
from tests.oracles.bootstrap import stratified_bootstrap_reference


def table(a: int, b: int, c: int, d: int) -> tuple[list[int], list[int]]:
    """Paired 0/1 outcomes of a 2x2 table: a both right, b only first, c only second, d none."""
    first = [1] * a + [1] * b + [0] * c + [0] * d
    second = [1] * a + [0] * b + [1] * c + [0] * d
    return first, second


def test_example_17_hoeffding_radii() -> None:
    assert paired.hoeffding_interval(0, [25], [1.0]) == [-0.5432406062962478, 0.5432406062962478]
    assert paired.hoeffding_interval(0, [100], [1.0])[1] == 0.2716203031481239
    assert paired.hoeffding_interval(0, [10, 90], [0.5, 0.5])[1] == 0.45270050524687316
    assert paired.hoeffding_interval(1, [1], [1.0]) == [-1, 1]
    assert paired.LN_TWO_OVER_ALPHA == 3.6888794541139363


def test_example_18_bootstrap_and_radius() -> None:
    weights = [0.15 / 0.25, 0.1 / 0.25]  # gpqa-diamond, mmlu-pro (sorted)
    diffs = [[0, 1, 0], [0, 1]]
    assert paired.hoeffding_interval(0.4, [3, 2], weights) == [-0.8147229238166104, 1]
    assert paired.stratified_bootstrap(diffs, weights) == [0.0, 0.8]


def test_example_19_all_tied_bootstrap_is_zero() -> None:
    assert paired.stratified_bootstrap([[0, 0, 0], [0, 0]], [0.6, 0.4]) == [0, 0]


def test_newcombe_matches_published_values() -> None:
    # Fagerland, Lydersen & Laake's paired examples (Cavo et al. 2012; Bentur et al. 2009)
    delta, (low, high) = paired.newcombe_interval(*table(59, 6, 16, 80))
    assert delta == pytest.approx(-0.0621, abs=5e-5)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)
    delta, (low, high) = paired.newcombe_interval(*table(1, 1, 7, 12))
    assert (round(low, 4), round(high, 4)) == (-0.5069, -0.0256)


def test_mcnemar_exact() -> None:
    assert paired.sign_test_p(6, 16) == pytest.approx(0.0525, abs=5e-5)
    assert paired.sign_test_p(0, 0) == 1.0
    assert paired.sign_test_p(3, 3) == 1.0
    assert paired.sign_test_p(0, 5) == 2 / 32
    assert paired.sign_test_p(0, 2000) < 1e-300  # exact integers, no overflow


def test_stratified_newcombe_with_one_group_is_newcombe() -> None:
    first, second = table(30, 5, 12, 20)
    _, single = paired.newcombe_interval(first, second)
    assert paired.stratified_newcombe([first], [second], [1.0]) == pytest.approx(single)


def test_stratified_newcombe_combines_groups_by_mover() -> None:
    a = table(40, 2, 8, 10)
    b = table(5, 1, 4, 10)
    weights = [0.6, 0.4]
    low, high = paired.stratified_newcombe([a[0], b[0]], [a[1], b[1]], weights)
    parts = [paired.newcombe_interval(*g) for g in (a, b)]
    centre = sum(w * d for w, (d, _) in zip(weights, parts, strict=True))
    assert low < centre < high
    below = math.sqrt(sum((w * (d - i[0])) ** 2 for w, (d, i) in zip(weights, parts, strict=True)))
    assert low == pytest.approx(centre - below)


def test_identical_outcomes_give_a_nonzero_interval_around_zero() -> None:
    same = [1, 0, 1, 1, 0]
    delta, (low, high) = paired.newcombe_interval(same, same)
    assert delta == 0 and low < 0 < high


def test_repeat_means_are_accepted() -> None:
    candidate = [1.0, 2 / 3, 0.0, 1 / 3, 1.0]
    baseline = [1.0, 1.0, 0.0, 0.0, 1 / 3]
    delta, (low, high) = paired.newcombe_interval(candidate, baseline)
    assert delta == pytest.approx(sum(candidate) / 5 - sum(baseline) / 5)
    assert -1 <= low < delta < high <= 1


def test_stratified_wald_worked_example() -> None:
    """Weights 0.6 / 0.4. Benchmark A: differences 0, 0, 1, −1, 0 (n 5, Σd 0, Σd² 2);
    B: −1, 0, 0 (n 3, Σd −1, Σd² 1).
    Floored second moments: A (2 + 1) / 6 = 0.5, B (1 + 1) / 4 = 0.5.
    Centre 0.6·0 + 0.4·(−1/3) = −0.133333.
    Variance 0.36·0.5/5 + 0.16·0.5/3 = 0.036 + 0.026667 = 0.062667; half-width
    1.959964·0.250333 = 0.490644 → [−0.623977, +0.357311]."""
    low, high = paired.stratified_wald([[0, 0, 1, -1, 0], [-1, 0, 0]], [0.6, 0.4])
    assert low == pytest.approx(-0.623977, abs=1e-6)
    assert high == pytest.approx(0.357311, abs=1e-6)
    assert paired.floored_second_moment([0, 0, 1, -1, 0]) == pytest.approx(3 / 6)


def test_the_floor_keeps_agreeing_runs_and_one_case_benchmarks_uncertain() -> None:
    """Every case agrees: A's second moment is 1 / 6, B's 1 / 4 (not 0);
    variance 0.36·(1/6)/5 + 0.16·(1/4)/3 = 0.012 + 0.013333 = 0.025333, half-width
    1.959964·0.159164 = 0.311957: an identical re-run of 8 cases cannot claim |Δ| < 0.31.
    The design's identical-re-run half-width is that same number."""
    low, high = paired.stratified_wald([[0] * 5, [0] * 3], [0.6, 0.4])
    assert (low, high) == pytest.approx((-0.311957, 0.311957), abs=1e-6)
    assert paired.expected_half_width([5, 3], [0.6, 0.4], [0.0, 0.0]) == pytest.approx(high)
    # one case, lost: second moment (1 + 1) / 2 = 1, interval −1 ± 1.959964
    assert paired.stratified_wald([[-1]], [1.0]) == [-1.0, pytest.approx(0.959964, abs=1e-6)]


def test_cases_needed_worked_example_with_the_floor() -> None:
    """One benchmark, differences 1, −1 and eight 0 (n 10, Σd² 2). Pooled second moment
    m̄ = (2 + 1)/11 = 0.272727; its own 2/10 = 0.2 is below it, so the floor (2 + m̄)/11 =
    0.206612 is used. The gate's half-width at n cases is z·√((0.206612 n + 1)/((n + 1) n));
    it falls below 0.10 when 0.01 n² − 0.783690 n − 3.841459 > 0, i.e. n > 82.98: 83 cases
    (the plain variance said ⌈10 · 0.02 · z² / 0.01⌉ = 77)."""
    diffs = [[1, -1, 0, 0, 0, 0, 0, 0, 0, 0]]
    assert paired.cases_for_half_width(diffs, [1.0], 0.10) == 83
    assert paired.expected_half_width([83], [1.0], [0.206612]) < 0.10
    assert paired.expected_half_width([82], [1.0], [0.206612]) > 0.10
    # half the margin: about four times the cases (the floor's pseudo-case weighs less)
    assert paired.cases_for_half_width(diffs, [1.0], 0.05) == 322
    with pytest.raises(ValueError, match="margin"):
        paired.cases_for_half_width(diffs, [1.0], 0)


def test_cases_needed_counts_a_one_case_benchmark_and_agreeing_runs() -> None:
    """A: the ten differences above; B: one case, tied (weights ½, ½). The plain variance
    gave B nothing: 11 · (0.25 · 0.2/10) · z² / 0.01 → 22 cases. Now m̄ = (2 + 1)/12 =
    0.25; A gets (2 + m̄)/11 = 0.204545 (above its own 2/10 = 0.2); B gets (0 + m̄)/2 =
    0.125."""
    groups = [[1, -1, 0, 0, 0, 0, 0, 0, 0, 0], [0]]
    moments = [2.25 / 11, 0.25 / 2]
    expected = paired.cases_at_mix(
        [10, 1], lambda at: paired.expected_half_width(at, [0.5, 0.5], moments), 0.1
    )
    assert paired.cases_for_half_width(groups, [0.5, 0.5], 0.1) == expected == 200
    # every difference equal: no longer null. m̄ = 1/3, floor (0 + 1/3)/3 = 1/9;
    # 0.01 n² − 0.416829 n − 3.841459 > 0 for n > 49.45: 50 cases
    assert paired.cases_for_half_width([[0, 0]], [1.0], 0.1) == 50


def test_newcombe_rejects_unpaired_groups() -> None:
    with pytest.raises(ValueError, match="paired groups"):
        paired.newcombe_interval([1, 0], [1])


@pytest.mark.parametrize("fractional", [False, True])
def test_vectorised_bootstrap_is_bit_identical_to_the_plain_loop(fractional: bool) -> None:
    import random

    rng = random.Random(7)
    sizes = [14, 4, 4, 2, 1, 1, 5, 2, 3, 120]
    pool = [-1, -2 / 3, -1 / 3, 0, 1 / 3, 2 / 3, 1] if fractional else [-1, 0, 0, 0, 1]
    groups = [[rng.choice(pool) for _ in range(n)] for n in sizes]
    raw = [0.1, 0.15, 0.15, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.3]
    weights = [w / sum(raw) for w in raw]
    assert paired.stratified_bootstrap(groups, weights) == stratified_bootstrap_reference(
        groups, weights
    )


@pytest.mark.parametrize("discordance", [0.5, 0.7, 0.9, 1.0])
def test_one_case_benchmarks_keep_false_alarms_under_five_percent(discordance: float) -> None:
    """Issue 47: one case per benchmark (the nine sr-bench weights), two systems of accuracy ½
    that differ on a share ``discordance`` of cases, no true change. Exact over the 3⁹
    outcomes: the regression gate (upper bound < 0) fired 6.05 % of the time at discordance
    1.0 (4.67 % at 0.9) with a pseudo-case at ½; its coverage was 87.9 %."""
    weights = [0.10, 0.15, 0.15, 0.10, 0.10, 0.10, 0.10, 0.10, 0.10]
    chance = {-1: discordance / 2, 0: 1 - discordance, 1: discordance / 2}
    alarm = covered = 0.0
    for outcome in itertools.product((-1, 0, 1), repeat=len(weights)):
        probability = math.prod(chance[d] for d in outcome)
        low, high = paired.stratified_wald([[d] for d in outcome], weights)
        alarm += probability * (high < 0)
        covered += probability * (low <= 0 <= high)
    assert alarm <= 0.05
    assert covered >= 0.95


def test_the_designs_worst_case_is_the_floor() -> None:
    """The floor's pseudo-case is the worst second moment the design states (issue 47): the
    largest a difference under no change can have, two systems that never agree."""
    from pytest_srbench.core.compare import design

    assert paired.FLOOR_SECOND_MOMENT == design.WORST_CASE_DISCORDANCE == 1.0
    # at the worst case the expected variance estimate equals the true one at every size
    for n in (1, 2, 5, 40):
        expected = paired.expected_half_width([n], [1.0], [1.0])
        assert expected == pytest.approx(paired.WILSON_Z * math.sqrt(1.0 / n))
