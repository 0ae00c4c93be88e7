"""pytest-srbench: benchmark LLMs and LLM routers from pytest with sr-bench 1.0 semantics.

The package root stays light: it never imports pytest, httpx or sqlite, so the pure
core can be used from any program. The pytest plugin lives in ``pytest_srbench.plugin``.
"""

from pytest_srbench.core.canonical import canonical_json, digest
from pytest_srbench.core.models import Case, Limits, Manifest, Prices, Target
from pytest_srbench.core.stats import percentile, wilson_interval
from pytest_srbench.core.usage import UsageBuckets, cost_for, normalize_usage

__all__ = [
    "Case",
    "Limits",
    "Manifest",
    "Prices",
    "Target",
    "UsageBuckets",
    "__version__",
    "canonical_json",
    "cost_for",
    "digest",
    "normalize_usage",
    "percentile",
    "wilson_interval",
]

__version__ = "0.1.0"
