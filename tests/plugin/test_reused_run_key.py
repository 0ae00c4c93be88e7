"""A run key re-used re-prints the existing run and says so — in the header line, the summary
and the JSON report — instead of a report that reads like a fresh run (a real pytest session on
the built-in simulator, twice)."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

RUN = ("-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
       "--srbench-limit=3", "--srbench-run-key=nightly-42")  # fmt: skip
SAID = "existing run re-printed, no call made"


def test_a_reused_run_key_says_the_run_was_re_printed(pytester):
    first = pytester.runpytest_subprocess(*RUN, "--srbench-json=a.json")
    assert first.ret == 0, first.stdout.str()
    assert SAID not in first.stdout.str()
    a = json.loads((pytester.path / "a.json").read_text())
    assert a["reused_existing_run"] is False

    second = pytester.runpytest_subprocess(*RUN, "--srbench-json=b.json")
    assert second.ret == 0, second.stdout.str()
    lines = second.stdout.lines
    header = next(line for line in lines if line.startswith(f"run {a['run_id']} · "))
    assert header.endswith(f" · {SAID}")
    second.stdout.fnmatch_lines([f"srbench: existing run {a['run_id']} re-printed, no call made*"])
    b = json.loads((pytester.path / "b.json").read_text())
    assert b["run_id"] == a["run_id"] and b["reused_existing_run"] is True
    # the same calls: the second invocation sent none
    assert b["summary"]["targets"] == a["summary"]["targets"]
