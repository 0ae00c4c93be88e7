"""A managed llama-server target in a pytest session, against the real llama-server: a plan
whose case cannot fit the model is refused before the run (one line, exit 4, nothing sent)."""

from __future__ import annotations

import textwrap

import pytest

from pytest_srbench.managed.common import cache_root
from pytest_srbench.store import open_store
from tests.real_parts import require_llama_parts

pytestmark = [pytest.mark.realmodel, pytest.mark.xdist_group("real-servers")]
REAL_CACHE = cache_root()  # read before pytester moves HOME


def test_a_case_that_cannot_fit_refuses_the_run_before_anything_is_sent(pytester, monkeypatch):
    monkeypatch.setenv("SRBENCH_CACHE", str(REAL_CACHE))  # pytester moves HOME
    require_llama_parts()
    pytester.makefile(
        ".toml",
        pyproject=textwrap.dedent("""
        [tool.srbench]
        default_targets = ["smollm2"]
        [tool.srbench.sampling]
        max_tokens = 8190
        [[tool.srbench.targets]]
        id = "smollm2"
        model = "smollm2-135m"
        managed = "llama-server"
        [tool.srbench.targets.server]
        threads = 1
        [tool.srbench.targets.prices.smollm2-135m]
        input = 0.0
        cached_input = 0.0
        cache_write = 0.0
        output = 0.0
        """),
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
        "--srbench-limit=1",
    )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["ERROR: pytest-srbench: target 'smollm2': case mmlu-pro/* needs * tokens (its prompt * "
         "+ max_tokens 8190), more than the model's trained context of 8192*"]
    )  # fmt: skip
    store = open_store(pytester.path / ".srbench")
    assert store.list_runs() == []  # refused before a run was created
