"""The entry point loads nothing heavy until srbench is used (issue 15: an unused plugin costs
nothing). Checked in a fresh interpreter, by module names, not by timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = (
    "numpy",
    "aiohttp",
    "httpx",
    "fastapi",
    "jinja2",
    "pydantic",
    "orjson",
    "sqlite3",
    "pytest_srbench.app.config",
    "pytest_srbench.engine",
    "pytest_srbench.core.models",
    "pytest_srbench.store",
)


def loaded_after(code: str) -> list[str]:
    probe = (
        "import json, sys\n"
        f"{code}\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in heavy or "
        "any(m == h or m.startswith(h + '.') for h in heavy))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return list(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_the_entry_point_loads_no_heavy_module() -> None:
    assert loaded_after("import pytest_srbench.plugin.entry") == []


def test_the_package_root_resolves_public_names_on_first_use() -> None:
    assert loaded_after("import pytest_srbench") == []
    loaded = loaded_after("import pytest_srbench as s; assert s.wilson_interval(1, 2)")
    assert "pytest_srbench.core.models" not in loaded
    assert "pydantic" in loaded_after("import pytest_srbench as s; s.Target")


def test_an_unrelated_pytest_session_loads_nothing_of_srbench(pytester) -> None:
    """A plain run in a project: the plugin's session machinery is never imported."""
    pytester.makepyfile(
        test_one="""
        import sys

        def test_one():
            assert "pytest_srbench.plugin.session" not in sys.modules
            assert "pytest_srbench.app.config" not in sys.modules
            assert "pytest_srbench.engine.engine" not in sys.modules
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_collecting_a_plan_loads_no_http_client_and_no_report(tmp_path) -> None:
    """``--collect-only`` builds the plan and its items, nothing of the run: neither the HTTP
    transport (aiohttp) nor the report model loads (issue 21)."""
    probe = (
        "import os, sys, pytest\n"
        "code = pytest.main(['-q', '-p', 'no:cacheprovider', '-p', 'pytest_srbench.plugin.entry',"
        " '--collect-only', '--srbench-profile=smoke', '--srbench-benchmark=mmlu-pro'])\n"
        "heavy = ('aiohttp', 'httpx', 'jinja2', 'pytest_srbench.core.report.model',"
        " 'pytest_srbench.app.run_end')\n"
        "print('exit', int(code), 'loaded:', ','.join(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # other plugins load theirs
    )
    assert done.stdout.strip().splitlines()[-1] == "exit 0 loaded:", done.stdout + done.stderr


def test_the_package_is_kept_out_of_assertion_rewriting(pytestconfig) -> None:
    """pytest marks every module of a ``pytest11`` distribution for assertion rewriting (re-run
    on every start under PYTHONDONTWRITEBYTECODE=1, issue 48); the entry point unmarks the
    package through the hook's private ``_must_rewrite`` and ``_marked_for_rewrite_cache``.
    This fails when pytest renames them (the unmarking would then silently do nothing)."""
    from _pytest.assertion import rewrite

    from pytest_srbench.plugin.rewrite_opt_out import unmark

    hook = rewrite.AssertionRewritingHook(pytestconfig)
    state = pytestconfig.stash[rewrite.assertstate_key]
    # what mark_rewrite records (it would also warn: pytest_srbench is imported already)
    hook._must_rewrite.update({"pytest_srbench", "other_plugin"})
    assert hook._is_marked_for_rewrite("pytest_srbench.engine.engine", state)
    assert unmark(hook)
    assert not hook._is_marked_for_rewrite("pytest_srbench.engine.engine", state)
    assert hook._is_marked_for_rewrite("other_plugin.module", state)
    assert not unmark(object())  # anything else: left alone


def test_a_session_loads_the_package_unrewritten(pytester) -> None:
    """In a fresh process with the plugin active, the engine's modules load through the
    ordinary loader, not pytest's rewriting hook."""
    pytester.makepyfile(
        test_one="""
        import sys

        def test_one(srbench_target):
            pass

        def test_loaders():
            import pytest_srbench.plugin.fixtures as fixtures
            assert type(fixtures.__loader__).__name__ != "AssertionRewritingHook"
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly", "-k", "loaders")
    result.assert_outcomes(passed=1)
