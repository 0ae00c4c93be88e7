"""pytest-srbench: benchmark LLMs and LLM routers from pytest with sr-bench 1.0 semantics.

The package root stays light: importing it loads nothing but this module (the public names
below are resolved on first use), so the ``pytest11`` entry point costs a project that does
not use srbench almost nothing. It never imports pytest, httpx or sqlite3, so the pure core
can be used from any program. The pytest plugin lives in ``pytest_srbench.plugin``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> the module that defines it (imported on first access, PEP 562)
_LAZY: dict[str, str] = {
    "AgentRun": "pytest_srbench.core.agent_run",
    "ToolCall": "pytest_srbench.core.agent_run",
    "Case": "pytest_srbench.core.models",
    "Limits": "pytest_srbench.core.models",
    "Manifest": "pytest_srbench.core.models",
    "Prices": "pytest_srbench.core.models",
    "Target": "pytest_srbench.core.models",
    "UsageBuckets": "pytest_srbench.core.calls.usage",
    "canonical_json": "pytest_srbench.core.canonical",
    "cost_for": "pytest_srbench.core.calls.usage",
    "digest": "pytest_srbench.core.canonical",
    "normalize_usage": "pytest_srbench.core.calls.usage",
    "percentile": "pytest_srbench.core.stats",
    "wilson_interval": "pytest_srbench.core.stats",
    "target": "pytest_srbench.core.user_targets",
    "benchmark": "pytest_srbench.core.user_benchmarks",
}

__all__ = [
    "AgentRun",
    "Case",
    "Limits",
    "Manifest",
    "Prices",
    "Target",
    "ToolCall",
    "UsageBuckets",
    "__version__",
    "benchmark",
    "canonical_json",
    "cost_for",
    "digest",
    "normalize_usage",
    "percentile",
    "target",
    "wilson_interval",
]

if TYPE_CHECKING:
    from pytest_srbench.core.agent_run import AgentRun, ToolCall
    from pytest_srbench.core.calls.usage import UsageBuckets, cost_for, normalize_usage
    from pytest_srbench.core.canonical import canonical_json, digest
    from pytest_srbench.core.models import Case, Limits, Manifest, Prices, Target
    from pytest_srbench.core.stats import percentile, wilson_interval
    from pytest_srbench.core.user_benchmarks import benchmark
    from pytest_srbench.core.user_targets import target


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pytest_srbench' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
