"""The cache-read ratio beside a target's token totals says what it is over when the totals
are unknown (issue 49: a ratio printed beside "—" read as if it were over the totals)."""

from __future__ import annotations

from pytest_srbench.render.terminal import cache_read_text


def test_beside_known_totals_the_ratio_stands_alone() -> None:
    target = {"tokens": {"input_tokens": 10}, "cache_read_ratio": 0.5, "cache_read_call_count": 2}
    assert cache_read_text(target) == "cache-read 0.500"


def test_beside_unknown_totals_the_ratio_names_the_calls_it_is_over() -> None:
    target = {"tokens": None, "cache_read_ratio": 0.599, "cache_read_call_count": 3}
    text = cache_read_text(target)
    assert text == (
        "cache-read 0.599 over the 3 call(s) that reported cache reads (totals unknown)"
    )


def test_an_unknown_ratio_is_a_dash() -> None:
    assert cache_read_text({"tokens": None, "cache_read_ratio": None}) == "cache-read —"
