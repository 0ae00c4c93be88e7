"""The ``realmodel`` tests skip with the reason where the real parts are missing, and fail
under ``CI`` (``.ci/run`` sets it: there the parts are required)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("ci", "outcome"), [(None, "skipped"), ("1", "errors")])
def test_missing_real_parts_skip_here_and_fail_under_ci(pytester, monkeypatch, ci, outcome):
    monkeypatch.setenv("SRBENCH_CACHE", str(pytester.path / "empty-cache"))  # nothing built
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    pytester.makepyfile(
        test_real="""
        from tests.real_parts import llama_server  # noqa: F401


        def test_uses_the_real_model(llama_server):
            assert llama_server.base_url
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(**{outcome: 1})
    result.stdout.fnmatch_lines(["*llama-server is not built in*srbench real build*"])
    if ci:
        assert result.ret == 1
        result.stdout.fnmatch_lines(["*required under CI*"])
