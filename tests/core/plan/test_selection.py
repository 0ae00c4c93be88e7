"""Seeded stratified selection: smoke ⊂ quick, standard disjoint, shortfall is an error."""

import pytest

from pytest_srbench.core.plan.selection import (
    SelectionError,
    Shortfall,
    select_for_profile,
    shortfalls_message,
    stratified_order,
)

COUNTS = {"smoke": 3, "quick": 6, "standard": 4}


def items(n_per_stratum=5, strata=("a", "b", "c")):
    return [(f"x/{s}{i}", s) for s in strata for i in range(n_per_stratum)]


def test_order_is_deterministic_and_covers_every_stratum_first():
    order = stratified_order(items(), 7)
    assert order == stratified_order(list(reversed(items())), 7)
    assert {case_id[2] for case_id in order[:3]} == {"a", "b", "c"}
    assert sorted(order) == sorted(case_id for case_id, _ in items())
    assert stratified_order(items(), 8) != order


def test_round_robin_balances_strata():
    order = stratified_order(items(3, ("a", "b")), 1, round_robin=True)
    assert [case_id[2] for case_id in order] == ["a", "b", "a", "b", "a", "b"]


def test_smoke_is_a_prefix_of_quick_and_standard_is_disjoint():
    order = stratified_order(items(), 3)
    smoke = select_for_profile(order, "smoke", COUNTS, benchmark="x")
    quick = select_for_profile(order, "quick", COUNTS, benchmark="x")
    standard = select_for_profile(order, "standard", COUNTS, benchmark="x")
    assert quick[: len(smoke)] == smoke
    assert not set(standard) & set(quick)
    assert len(standard) == 4


def test_shortfall_is_an_error_never_padding():
    with pytest.raises(SelectionError, match="needs 6 cases, but the suite has 4"):
        select_for_profile(["x/1", "x/2", "x/3", "x/4"], "quick", COUNTS, benchmark="x")
    with pytest.raises(SelectionError, match="after the 6 quick cases"):
        select_for_profile([f"x/{i}" for i in range(8)], "standard", COUNTS, benchmark="x")


def test_a_shortfall_of_an_sr_bench_benchmark_names_the_command_that_fetches_it():
    with pytest.raises(SelectionError) as raised:
        select_for_profile(["gpqa-diamond/1"], "quick", COUNTS, benchmark="gpqa-diamond")
    assert "gpqa-diamond: profile 'quick' needs 6 cases" in str(raised.value)
    assert "`srbench datasets fetch gpqa-diamond --profile quick`" in str(raised.value)
    with pytest.raises(SelectionError) as raised:  # an extension benchmark has nothing to fetch
        select_for_profile(["x/1"], "quick", COUNTS, benchmark="x")
    assert "fetch" not in str(raised.value) and "srbench datasets prepare" in str(raised.value)


def test_limit_keeps_a_prefix():
    order = stratified_order(items(), 3)
    assert select_for_profile(order, "quick", COUNTS, benchmark="x", limit=2) == order[:2]
    assert select_for_profile(order, "smoke", COUNTS, benchmark="x", limit=50) == order[:3]


def test_a_limit_the_suite_reaches_is_served_though_the_whole_profile_is_not():
    """The shortfall's own advice ("or use --srbench-limit") works: the first cases of the
    profile's block exist even when the whole block does not."""
    order = ["x/1", "x/2", "x/3", "x/4"]  # quick needs 6
    assert select_for_profile(order, "quick", COUNTS, benchmark="x", limit=4) == order
    assert select_for_profile(order, "quick", COUNTS, benchmark="x", limit=2) == order[:2]
    with pytest.raises(Shortfall, match=r"needs 5 cases \(--srbench-limit 5 of its 6\)"):
        select_for_profile(order, "quick", COUNTS, benchmark="x", limit=5)
    standard = [f"x/{i}" for i in range(8)]  # standard starts after the 6 quick cases
    assert select_for_profile(standard, "standard", COUNTS, benchmark="x", limit=2) == standard[6:]
    with pytest.raises(Shortfall, match="after the 6 quick cases"):
        select_for_profile(standard, "standard", COUNTS, benchmark="x", limit=3)
    with pytest.raises(SelectionError, match="must be >= 1"):
        select_for_profile(order, "quick", COUNTS, benchmark="x", limit=0)


def test_several_shortfalls_are_named_together_with_one_fetch_command():
    errors = []
    for benchmark, suite in (("hle", ["hle/1"]), ("x", ["x/1"]), ("tau3", ["tau3/1"])):
        with pytest.raises(Shortfall) as raised:
            select_for_profile(suite, "quick", COUNTS, benchmark=benchmark)
        errors.append(raised.value)
    message = shortfalls_message(errors)
    assert message.splitlines()[:4] == [
        "3 benchmarks have too few cases for this profile:",
        "  hle: profile 'quick' needs 6 cases, but the suite has 1 in all",
        "  x: profile 'quick' needs 6 cases, but the suite has 1 in all",
        "  tau3: profile 'quick' needs 6 cases, but the suite has 1 in all",
    ]
    assert "`srbench datasets fetch hle tau3 --profile quick`" in message  # x is no sr-bench one
    assert shortfalls_message(errors[:1]) == str(errors[0])
