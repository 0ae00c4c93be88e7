"""Which (case, target) pairs a plan holds: pure functions over ids, without the models (the
plugin's start-up reads them before pydantic is imported)."""

from __future__ import annotations

from collections.abc import Iterable

CHAT_TARGET_KINDS = ("single", "mom")


def planned_keys(
    cases: list[tuple[str, str]],
    targets: list[tuple[str, str]],
    execution_cells: list[tuple[str, str]],
    target_kinds: dict[str, list[str]] | None = None,
    benchmark_targets: dict[str, list[str]] | None = None,
) -> list[tuple[str, str]]:
    """The planned (case, target) pairs: explicit execution cells, else case-major cases x
    targets where the target's kind is one the case's benchmark runs against (``target_kinds``
    per benchmark; chat models and routers when a benchmark is not listed).

    ``cases`` are (id, benchmark) and ``targets`` (id, kind) pairs."""
    if execution_cells:
        return list(execution_cells)
    targets_of = runs_on(
        {benchmark for _, benchmark in cases}, targets, target_kinds, benchmark_targets
    )
    return [
        (case_id, target_id) for case_id, benchmark in cases for target_id in targets_of[benchmark]
    ]


def runs_on(
    benchmarks: Iterable[str],
    targets: list[tuple[str, str]],
    target_kinds: dict[str, list[str]] | None = None,
    benchmark_targets: dict[str, list[str]] | None = None,
) -> dict[str, list[str]]:
    """Per benchmark, the (id, kind) targets it runs against, in the targets' order: those
    ``benchmark_targets`` names for it, else those of a kind the benchmark lists in
    ``target_kinds``, else chat models and routers."""
    kinds = target_kinds or {}
    named = benchmark_targets or {}
    found = {}
    for benchmark in benchmarks:
        if benchmark in named:
            chosen = set(named[benchmark])
            found[benchmark] = [target_id for target_id, _ in targets if target_id in chosen]
        else:
            allowed = kinds.get(benchmark, CHAT_TARGET_KINDS)
            found[benchmark] = [target_id for target_id, kind in targets if kind in allowed]
    return found
