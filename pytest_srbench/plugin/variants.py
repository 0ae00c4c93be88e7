"""Variants of a benchmark written as tests: each parameter combination of a marked test (its
``@pytest.mark.parametrize`` values beside the cells), and each of several marked test
functions answering one benchmark, is a variant — a target of its own, ``<target>~<variant>``,
reported, compared and gated like any target (``core/models.py::variant_of``).

A variant is named after what tells it apart: the function's name (without ``test_``) when
several functions answer the benchmark, then the ids of the parameters that take more than one
value. A parameter with a single value (anyio's one backend, say) names nothing. A function
without varying parameters that alone answers its benchmark has no variants.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

import pytest

from pytest_srbench.core.models import VARIANT_SEP
from pytest_srbench.plugin.bench_tests import CELL_PARAM, cell_id, cell_of, item_benchmark

_UNSAFE = re.compile(r"[^A-Za-z0-9._:-]+")
MAX_VARIANT = 64


def assign_variants(items: Iterable[pytest.Item]) -> dict[str, list[str]]:
    """Benchmark -> its variants in the order they were collected; every marked item of a
    benchmark with variants has its cell moved to its variant target (its node id is
    unchanged: ``test_app[mmlu-pro/q12-sim-large-fancy]``)."""
    functions: dict[str, dict[str, list[pytest.Function]]] = defaultdict(dict)
    for item in items:
        benchmark = item_benchmark(item)
        if benchmark is None or cell_of(item) is None or not isinstance(item, pytest.Function):
            continue
        key = f"{item.parent.nodeid if item.parent else ''}::{item.originalname}"
        functions[benchmark].setdefault(key, []).append(item)
    variants: dict[str, list[str]] = {}
    for benchmark, by_function in functions.items():
        names = _function_names(list(by_function)) if len(by_function) > 1 else {}
        raw: dict[pytest.Function, str] = {}
        for key, members in by_function.items():
            varying = _varying_ids(members)
            for item in members:
                parts = [names[key]] if names else []
                raw[item] = "-".join([*parts, *varying[item]])
        if not any(raw.values()):
            continue
        safe = _safe_names(dict.fromkeys(raw.values()))
        variants[benchmark] = list(dict.fromkeys(safe[name] for name in raw.values()))
        for item, name in raw.items():
            case_id, target_id = cell_of(item) or ("", "")
            item.callspec.params[CELL_PARAM] = (case_id, f"{target_id}{VARIANT_SEP}{safe[name]}")
    return variants


def _function_names(keys: list[str]) -> dict[str, str]:
    """Each function's short name (without ``test_``); its module's too where two functions of
    different modules share a name."""
    short = {key: key.rsplit("::", 1)[1].removeprefix("test_") for key in keys}
    counts: dict[str, int] = defaultdict(int)
    for name in short.values():
        counts[name] += 1
    return {
        key: name if counts[name] == 1 else f"{_module_stem(key)}.{name}"
        for key, name in short.items()
    }


def _module_stem(key: str) -> str:
    path = key.rsplit("::", 1)[0].split("::", 1)[0]
    return path.rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")


def _varying_ids(items: list[pytest.Function]) -> dict[pytest.Function, list[str]]:
    """Each item's parameter ids (beside its cell's) that differ between the function's items."""
    ids: dict[pytest.Function, list[str]] = {}
    for item in items:
        own = cell_id(*(cell_of(item) or ("", "")))
        ids[item] = [part for part in item.callspec._idlist if part != own]
    width = max((len(parts) for parts in ids.values()), default=0)
    varying = [
        position
        for position in range(width)
        if len({tuple(parts[position : position + 1]) for parts in ids.values()}) > 1
    ]
    return {item: [parts[p] for p in varying if p < len(parts)] for item, parts in ids.items()}


def _safe_names(names: Iterable[str]) -> dict[str, str]:
    """Each variant name made fit for a target id (letters, digits, ``._:-``; at most 64),
    distinct names kept distinct."""
    safe: dict[str, str] = {}
    taken: set[str] = set()
    for name in names:
        cleaned = _UNSAFE.sub("_", name).lstrip("._:-")[:MAX_VARIANT] or "v"
        candidate, number = cleaned, 2
        while candidate in taken:
            suffix = f"-{number}"
            candidate = cleaned[: MAX_VARIANT - len(suffix)] + suffix
            number += 1
        taken.add(candidate)
        safe[name] = candidate
    return safe
