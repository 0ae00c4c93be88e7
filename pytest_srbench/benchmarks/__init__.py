"""Benchmark adapters: how a suite row becomes a case, how a cell calls the target, how it is graded."""

from pytest_srbench.benchmarks.base import (
    Adapter,
    CellContext,
    CodeRun,
    Grade,
    ModelReply,
    SuiteRowError,
)
from pytest_srbench.benchmarks.notes_tools import NotesToolbox
from pytest_srbench.benchmarks.registry import AdapterRegistry, default_registry

__all__ = [
    "Adapter",
    "AdapterRegistry",
    "CellContext",
    "CodeRun",
    "Grade",
    "ModelReply",
    "NotesToolbox",
    "SuiteRowError",
    "default_registry",
]
