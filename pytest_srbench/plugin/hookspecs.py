"""pytest-srbench's own hooks (``pytest_srbench_*``)."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookspec
def pytest_srbench_adapters(registry: Any, config: pytest.Config) -> None:
    """Register extra benchmark adapters, e.g. in a conftest.py::

    def pytest_srbench_adapters(registry, config):
        registry.register(MyBenchmarkAdapter())
    """
