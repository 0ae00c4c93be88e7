"""What a report says about where its cases came from, and what it may call its score (pure).

The frozen plan records each suite's origin (``core.origins``); a plan frozen before origins
were recorded has none, and its benchmarks read ``unknown``. A macro score is an sr-bench 1.0
score only over **sr-bench data**: all nine benchmarks from their released data, at the
profile's sr-bench case counts, not a custom task subset, not a recovery child, a live run.
Any other macro over all nine is "a macro score over original / synthetic / user / mixed data —
not comparable with sr-bench 1.0"; a subset's scope names its data too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from pytest_srbench.core.models import Manifest
from pytest_srbench.core.origins import (
    NOT_COMPARABLE,
    SR_BENCH_LABEL,
    data_kind,
    data_phrase,
    kinds_of,
    origin_kind,
)
from pytest_srbench.core.plan.srbench import PROFILE_COUNTS, SR_BENCH_BENCHMARKS

Origin = Mapping[str, Any] | None


def suite_origins(manifest: Manifest) -> dict[str, dict[str, Any] | None]:
    """Benchmark -> the origin its frozen suite records (None when the plan has none)."""
    found: dict[str, dict[str, Any] | None] = {}
    for suite in manifest.dataset.suites:
        origin = suite.get("origin")
        found[str(suite.get("benchmark"))] = dict(origin) if isinstance(origin, Mapping) else None
    return found


def custom_subset(manifest: Manifest) -> bool:
    """A user's selection of cells or cases (``-k``, ``--srbench-limit``, a prepared limit)."""
    return manifest.execution_cells is not None or manifest.dataset.custom_subset


def at_profile_counts(manifest: Manifest, benchmarks: Iterable[str]) -> bool:
    """Every benchmark plans exactly sr-bench's case count for the plan's profile (a case's
    repeats are one case)."""
    cases = Counter(
        case.benchmark for case in manifest.cases if case.metadata.get("repeat_of") is None
    )
    return all(
        cases[name] == PROFILE_COUNTS.get(name, {}).get(manifest.profile) for name in benchmarks
    )


def srbench_data(manifest: Manifest, benchmarks: set[str]) -> bool:
    """Whether a macro over ``benchmarks`` may be called an sr-bench 1.0 score (module doc)."""
    origins = suite_origins(manifest)
    return (
        benchmarks == set(SR_BENCH_BENCHMARKS)
        and all(origin_kind(origins.get(name)) == "released" for name in benchmarks)
        and not any((origins.get(name) or {}).get("srbench_gap") for name in benchmarks)
        and at_profile_counts(manifest, benchmarks)
        and not custom_subset(manifest)
        and manifest.recovery is None
        and manifest.mode == "live"
    )


def score_scope(manifest: Manifest, benchmarks: set[str], present: set[str]) -> tuple[str, bool]:
    """The scope label of a target's macro over ``benchmarks`` (``present``: every benchmark of
    the plan) and whether that macro is over sr-bench data."""
    origins = suite_origins(manifest)
    phrase = data_phrase(origins.get(name) for name in sorted(benchmarks))
    comparable = srbench_data(manifest, benchmarks)
    if comparable:
        base = SR_BENCH_LABEL
    elif benchmarks == set(SR_BENCH_BENCHMARKS):
        base = f"macro score over {phrase} — {NOT_COMPARABLE}"
    elif not present <= SR_BENCH_BENCHMARKS:
        base = f"extension diagnostic; normalized adapter weights; {phrase}"
    else:
        base = f"selected benchmark subset; renormalized fixed weights; {phrase}"
    scope = f"{base}; profile={manifest.profile}"
    if custom_subset(manifest):
        scope += "; custom task subset"
    return scope, comparable


def data_sources(manifest: Manifest, present: set[str]) -> dict[str, Any]:
    """The report's ``data_sources``: the kind of data of the planned benchmarks, per benchmark
    and overall, whether it is sr-bench data, and the label every surface shows."""
    origins = suite_origins(manifest)
    chosen: list[Origin] = [origins.get(name) for name in sorted(present)]
    comparable = srbench_data(manifest, present)
    if comparable:
        label = (
            f"{SR_BENCH_LABEL} data: all nine benchmarks from their released data at the "
            f"{manifest.profile} profile's counts"
        )
    else:
        label = f"{data_phrase(chosen)} — scores are {NOT_COMPARABLE}"
        gaps = [
            f"{name}: {gap}"
            for name in sorted(present)
            if (gap := (origins.get(name) or {}).get("srbench_gap"))
        ]
        if gaps:
            label += f" ({'; '.join(gaps)})"
    return {
        "kind": data_kind(chosen),
        "kinds": kinds_of(chosen),
        "comparable": comparable,
        "label": label,
        "benchmarks": {name: origin_kind(origins.get(name)) for name in sorted(present)},
    }


def plan_sources(manifest: Manifest) -> dict[str, dict[str, Any] | None]:
    """The plan identity's ``data_sources``: every planned benchmark's origin (what a
    comparison checks), null where the plan recorded none."""
    origins = suite_origins(manifest)
    planned = sorted({case.benchmark for case in manifest.cases})
    return {name: origins.get(name) for name in planned}
