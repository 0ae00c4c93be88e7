"""The ``pytest11`` entry point: options, hookspecs and, only when activated, the session plugin.

Importing this module must cost a project that does not use srbench almost nothing: it loads
only the option definitions (plain constants) and the hookspecs. The configuration, the
engine, the report and every third-party library (pydantic, numpy, aiohttp, httpx, jinja2)
load in ``pytest_configure`` once an ``--srbench-*`` option activates the plugin, or when a
test requests one of the public fixtures. ``bench/plugin_overhead.py`` measures it.
"""

from __future__ import annotations

from pytest_srbench.plugin.rewrite_opt_out import unmark, unmark_installed_hooks

unmark_installed_hooks()  # before the imports below: the package loads unrewritten

import pytest  # noqa: E402

from pytest_srbench.plugin import hookspecs  # noqa: E402
from pytest_srbench.plugin.fixtures import (  # noqa: E402
    srbench_case,
    srbench_cell,
    srbench_client,
    srbench_llama_server,
    srbench_protocol,
    srbench_target,
)
from pytest_srbench.plugin.options import (  # noqa: E402
    BenchmarksSkipped,
    add_options,
    check_spaced_paths,
    is_active,
)

__all__ = [
    "srbench_case",
    "srbench_cell",
    "srbench_client",
    "srbench_llama_server",
    "srbench_protocol",
    "srbench_target",
]


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    # every session's own hook (pytester runs a new one in this process, the module imported)
    unmark(getattr(pluginmanager, "rewrite_hook", None))
    pluginmanager.add_hookspecs(hookspecs)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "srbench(benchmark): a benchmark written as a test, parametrized by its cases and "
        "targets; skipped unless srbench runs (pytest --srbench-profile=smoke)",
    )
    check_spaced_paths(config)  # before the configuration is read: from the right rootdir
    if not is_active(config):
        config.pluginmanager.register(BenchmarksSkipped(), "srbench-skipped")
        return
    from pytest_srbench.plugin.assembly import register_session

    register_session(config)
