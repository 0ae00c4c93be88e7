"""Offline regrade and training-matrix export of a stored run (the I/O around
``pytest_srbench.core.offline.ops``).

They read the run through the store, make zero model requests, write one artifact JSON
atomically (temporary file in the target folder, then ``os.replace``) and change nothing in
the store; an artifact path inside the store folder is refused. The export reads usage and
cost through the run's latest accounting correction, as reports do.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_srbench.benchmarks.arc import GRADER_VERSION as GRID_GRADER_VERSION
from pytest_srbench.benchmarks.arc import ArcAgi2Adapter
from pytest_srbench.benchmarks.mcq import McqAdapter
from pytest_srbench.benchmarks.registry import AdapterRegistry, default_registry
from pytest_srbench.core.grading.mcq import GRADER_VERSION as MCQ_GRADER_VERSION
from pytest_srbench.core.models import Manifest, Run
from pytest_srbench.core.offline.ops import (
    GridGrader,
    McqGrader,
    OfflineError,
    OfflineGrader,
    regrade,
    training_matrix,
)
from pytest_srbench.render.outputs import OutputError, check_output_file, output_reason
from pytest_srbench.store.base import Row, Store
from pytest_srbench.store.corrections import latest_correction


def graders_from_registry(registry: AdapterRegistry | None = None) -> dict[str, OfflineGrader]:
    """The current grader of every registered MCQ or grid benchmark.

    An adapter qualifies when it keeps the shared protocol of its kind (one subject call graded
    by the MCQ or grid grader); an adapter that overrides ``evaluate`` is not regraded.
    """
    registry = registry if registry is not None else default_registry()
    graders: dict[str, OfflineGrader] = {}
    for benchmark in registry:
        adapter = registry.get(benchmark)
        protocol = type(adapter).evaluate
        if isinstance(adapter, McqAdapter) and protocol is McqAdapter.evaluate:
            graders[benchmark] = McqGrader(MCQ_GRADER_VERSION)
        elif isinstance(adapter, ArcAgi2Adapter) and protocol is ArcAgi2Adapter.evaluate:
            graders[benchmark] = GridGrader(GRID_GRADER_VERSION)
    return graders


def _load(store: Store, run_id: str) -> tuple[Manifest, Run, list[Row], list[Row]]:
    run = store.get_run(run_id)
    if run is None:
        raise OfflineError(f"no run {run_id!r} in {store.location}")
    return store.get_manifest(run_id), run, store.results(run_id), store.calls(run_id)


def _check_outside_store(store: Store, output: Path) -> None:
    root = Path(store.root).resolve()
    where = output.resolve()
    if where == root or root in where.parents:
        raise OfflineError(
            f"{output}: the artifact must be written outside the store folder {store.root}"
        )


def write_artifact(artifact: Mapping[str, Any], output: Path) -> None:
    """Write ``artifact`` as indented JSON to ``output`` atomically; an unwritable path raises
    ``OutputError`` (one line)."""
    check_output_file(output)
    text = json.dumps(artifact, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    try:
        _write_atomic(text, output)
    except OSError as error:
        raise OutputError(output, output_reason(output, error)) from None


def _write_atomic(text: str, output: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".tmp", dir=output.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, output)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def regrade_run(
    store: Store,
    run_id: str,
    output: Path,
    *,
    graders: Mapping[str, OfflineGrader] | None = None,
) -> dict[str, Any]:
    """Regrade a stored run with the current graders and write the ``offline-regrade`` artifact."""
    output = Path(output)
    _check_outside_store(store, output)
    manifest, run, results, calls = _load(store, run_id)
    artifact = regrade(
        manifest, run, results, calls, graders if graders is not None else graders_from_registry()
    )
    write_artifact(artifact, output)
    return artifact


def export_run(store: Store, run_id: str, output: Path) -> dict[str, Any]:
    """Export a stored dev-split run as the ``training-matrix`` artifact, reading usage and cost
    through the run's latest accounting correction when it has one."""
    output = Path(output)
    _check_outside_store(store, output)
    manifest, run, results, calls = _load(store, run_id)
    correction = latest_correction(store, run_id)
    artifact = training_matrix(manifest, run, results, calls, correction)
    write_artifact(artifact, output)
    return artifact
