"""``tests/optional.py``: a test module or test that needs a missing optional part skips and
says which extra installs it, except under ``CI``, where it fails."""

from __future__ import annotations

import pytest

from tests.optional import import_extra

NEEDS_A_MISSING_EXTRA = """
from tests.optional import import_extra

import_extra("srbench_no_such_module", "fetch")


def test_never_runs():
    raise AssertionError("the module should have stopped at its import")
"""

NEEDS_A_MISSING_PART = """
from tests.optional import part_missing


def test_needs_a_part():
    part_missing("no such part here")
"""


@pytest.fixture
def ci(request, monkeypatch):
    if request.param is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", request.param)
    return request.param


# where the part is needed: (the test file, its outcome under CI, what it says)
WHERE = {
    "module": (
        NEEDS_A_MISSING_EXTRA,
        "errors",
        "srbench_no_such_module is not installed*'fetch' extra",
    ),
    "test": (NEEDS_A_MISSING_PART, "failed", "no such part here"),
}


@pytest.mark.parametrize("ci", [None, "1"], indirect=True)
@pytest.mark.parametrize("where", sorted(WHERE))
def test_what_needs_a_missing_part_skips_here_and_fails_under_ci(pytester, ci, where):
    source, failure, said = WHERE[where]
    pytester.makepyfile(test_needs=source)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    if ci:
        result.assert_outcomes(**{failure: 1})
        result.stdout.fnmatch_lines([f"*{said}*(required under CI)*"])
    else:
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines([f"SKIPPED*test_needs.py:*: {said}*"])


def test_an_installed_extra_is_the_module_itself():
    import json

    assert import_extra("json", "dev") is json
