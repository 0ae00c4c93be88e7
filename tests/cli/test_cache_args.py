"""``srbench cache clear --older-than``: durations read, and the ones that cannot be are usage
errors naming why (never a traceback)."""

from __future__ import annotations

import argparse
from datetime import timedelta

import pytest

from pytest_srbench.cli.cache import parse_duration


@pytest.mark.parametrize(
    ("text", "span"),
    [("90s", timedelta(seconds=90)), ("15m", timedelta(minutes=15)), (" 12h ", timedelta(hours=12)),
     ("1.5d", timedelta(days=1.5)), ("2w", timedelta(weeks=2)), ("0d", timedelta(0))],
)  # fmt: skip
def test_a_duration_is_a_number_and_a_unit(text, span):
    assert parse_duration(text) == span


@pytest.mark.parametrize(
    ("text", "why"),
    [("soon", "a number and a unit"), ("3x", "a number and a unit"), ("-5d", "a number and a unit"),
     ("99999999999d", "longer than the calendar"), ("1e9w", "a number and a unit"),
     ("800000w", "longer than the calendar")],
)  # fmt: skip
def test_a_duration_that_cannot_be_read_is_a_usage_error(text, why):
    with pytest.raises(argparse.ArgumentTypeError, match=why):
        parse_duration(text)


def test_the_command_says_why_in_one_line(capsys):
    from pytest_srbench.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["cache", "clear", "--older-than", "99999999999d"])
    assert exited.value.code == 2
    assert "longer than the calendar" in capsys.readouterr().err
