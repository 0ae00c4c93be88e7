"""Worked examples 1 and 2 of reference/report-and-accounting.md §10."""

import pytest

from pytest_srbench.core.stats import percentile, wilson_interval


@pytest.mark.parametrize(
    ("correct", "total", "expected"),
    [
        (9, 14, [0.38764423103907397, 0.8365526824644587]),
        (0, 10, [0, 0.2775327998628892]),
        (1, 1, [0.20654931437723745, 1]),
        (5, 10, [0.236593090512564, 0.7634069094874361]),
        (11, 14, [0.524107694133997, 0.9242861328730683]),
    ],
)
def test_wilson_matches_sr_bench(correct, total, expected):
    assert wilson_interval(correct, total) == pytest.approx(expected, abs=1e-15)


def test_wilson_clamps_to_exact_integers_and_null_for_empty():
    assert wilson_interval(0, 10)[0] == 0 and isinstance(wilson_interval(0, 10)[0], int)
    assert wilson_interval(1, 1)[1] == 1 and isinstance(wilson_interval(1, 1)[1], int)
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1, 2, 3, 4], 0.5, 2.5),
        (list(range(1, 11)), 0.95, 9.549999999999999),
        ([5], 0.95, 5),
        ([3, 1, 2], 0.5, 2),
        ([10, 20], 0.95, 19.5),
    ],
)
def test_percentile_linear_interpolation(values, q, expected):
    assert percentile(values, q) == expected


def test_percentile_of_nothing_is_null():
    assert percentile([], 0.5) is None
