"""The public API is pinned: ``pytest_srbench.__all__`` is exactly the list below, and every name
in it imports from the package root — the names the root resolves lazily on first use (PEP 562)
included, checked in a fresh interpreter where none has been resolved yet. Adding or removing a
public name means changing this list on purpose."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import pytest_srbench

PUBLIC_API = [
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

FRESH_IMPORT = """
import json, pytest_srbench
names = list(pytest_srbench.__all__)
unresolved = [name for name in names if name not in vars(pytest_srbench)]
namespace = {}
exec("from pytest_srbench import *", namespace)
imported = {}
for name in names:
    exec(f"from pytest_srbench import {name} as value", imported)
    assert imported["value"] is namespace[name], name
print(json.dumps({"unresolved": unresolved, "star": sorted(n for n in namespace if n in names)}))
"""


def test_all_is_the_pinned_public_api():
    assert pytest_srbench.__all__ == PUBLIC_API


def test_every_public_name_imports_from_the_root_lazy_ones_included():
    out = subprocess.run(
        [sys.executable, "-c", FRESH_IMPORT], capture_output=True, text=True, check=True
    )
    seen = json.loads(out.stdout)
    # every name but the version is resolved on first use: the import exercised that path
    assert seen["unresolved"] == [name for name in PUBLIC_API if name != "__version__"]
    assert seen["star"] == sorted(PUBLIC_API)


@pytest.mark.parametrize("name", [name for name in PUBLIC_API if name != "__version__"])
def test_a_public_name_is_the_object_its_module_defines(name):
    value = getattr(pytest_srbench, name)
    assert value.__name__ == name
    assert value is getattr(sys.modules[value.__module__], name)


def test_a_name_outside_the_api_does_not_import():
    with pytest.raises(ImportError):
        exec("from pytest_srbench import not_a_public_name", {})
