"""Repository root: settings for our own test runs (no plugin logic lives here)."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """``pyproject.toml`` configures pytest-asyncio, a development extra. Without it (the
    README's first command installs the package alone) pytest would warn about an unknown
    ini key, which ``filterwarnings = error`` turns into an error: declare the key then."""
    if not pluginmanager.has_plugin("asyncio"):
        parser.addini(
            "asyncio_default_fixture_loop_scope", "read by pytest-asyncio when it is installed"
        )
