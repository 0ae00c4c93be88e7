"""The suite's xdist_group fix: grouped tests share one worker under --dist=loadgroup."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

GROUPED_MODULE = """
import os, pathlib, pytest

pytestmark = pytest.mark.xdist_group("{group}")

@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    with open(pathlib.Path(__file__).parent / "workers.txt", "a") as log:
        log.write(f"{group} {{os.environ['PYTEST_XDIST_WORKER']}}\\n")
"""

UNGROUPED_MODULE = """
import pytest

@pytest.mark.parametrize("n", range(12))
def test_free(n):
    pass
"""


def test_the_tests_of_a_group_run_on_one_worker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    pytester.makeconftest("from tests.xdist_groups import pytest_collection_modifyitems\n")
    pytester.makepyfile(
        test_a=GROUPED_MODULE.format(group="alpha"),
        test_b=GROUPED_MODULE.format(group="beta"),
        test_free=UNGROUPED_MODULE,
    )
    result = pytester.runpytest_subprocess("-n", "2", "--dist=loadgroup", "-p", "no:srbench")
    result.assert_outcomes(passed=24)
    lines = (pytester.path / "workers.txt").read_text().split()
    workers: dict[str, set[str]] = collections.defaultdict(set)
    for group, worker in zip(lines[::2], lines[1::2], strict=True):
        workers[group].add(worker)
    assert {group: len(seen) for group, seen in workers.items()} == {"alpha": 1, "beta": 1}
