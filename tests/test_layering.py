"""Imports point downward: the pure core never loads pytest, httpx, aiohttp, jinja2 or sqlite3."""

import subprocess
import sys

CORE_MODULES = [
    "pytest_srbench",
    "pytest_srbench.core.canonical",
    "pytest_srbench.core.models",
    "pytest_srbench.core.usage",
    "pytest_srbench.core.stats",
    "pytest_srbench.core.metrics",
    "pytest_srbench.core.report",
    "pytest_srbench.core.report_model",
    "pytest_srbench.core.paired",
    "pytest_srbench.core.compare",
    "pytest_srbench.core.gate",
    "pytest_srbench.core.frontier",
    "pytest_srbench.core.reconcile",
    "pytest_srbench.core.recovery",
    "pytest_srbench.core.drilldown",
    "pytest_srbench.core.offline",
    "pytest_srbench.core.plan",
    "pytest_srbench.core.selection",
    "pytest_srbench.core.sse",
    "pytest_srbench.core.receipts",
    "pytest_srbench.core.budget",
    "pytest_srbench.core.grading.mcq",
    "pytest_srbench.core.preview",
    "pytest_srbench.core.recipes",
    "pytest_srbench.core.continuity",
    "pytest_srbench.core.routing",
    "pytest_srbench.core.benchmark_errors",
    "pytest_srbench.core.rag_metrics",
    "pytest_srbench.core.agent_metrics",
    "pytest_srbench.core.benchmark_datasets",
    "pytest_srbench.core.retrieval",
    "pytest_srbench.core.task_reports",
    "pytest_srbench.core.redact",
]
FORBIDDEN = ["pytest", "_pytest", "httpx", "aiohttp", "jinja2", "sqlite3", "xdist"]


def test_core_imports_no_io_or_framework_module():
    code = (
        "import sys\n"
        + "".join(f"import {name}\n" for name in CORE_MODULES)
        + f"bad = [m for m in {FORBIDDEN!r} if m in sys.modules]\n"
        + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cli_and_store_do_not_import_pytest():
    code = "import sys, pytest_srbench.cli, pytest_srbench.store; print('pytest' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
