"""Benchmarks defined in Python: cases from a list (or a function that yields them) and a
grader function, with no suite folder.

``benchmark(...)`` records the definition at import time of a test module or ``conftest.py``;
planning turns it into a suite whose case hash covers every row, so a change to the cases is a
new plan, and a test marked ``@pytest.mark.srbench(name)`` answers its cases.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pytest_srbench.core.canonical import canonical_json, digest
from pytest_srbench.core.errors import InputError

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_CASE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
Grader = Callable[[str, Mapping[str, Any]], object]


@dataclass(frozen=True)
class PythonBenchmark:
    """One benchmark defined in Python."""

    name: str
    rows: tuple[dict[str, Any], ...]
    grade: Grader
    version: str
    description: str | None = None

    @property
    def sha256(self) -> str:
        """The digest of every row (what the plan's case hash is built on)."""
        return digest(list(self.rows))


_DEFINED: dict[str, PythonBenchmark] = {}


def _rows(
    cases: Iterable[Mapping[str, Any]] | Callable[[], Iterable[Mapping[str, Any]]],
) -> tuple[dict[str, Any], ...]:
    produced = cases() if callable(cases) else cases
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, row in enumerate(produced, start=1):
        if not isinstance(row, Mapping):
            raise InputError(f"case {number} is a {type(row).__name__}, not a mapping")
        case_id = row.get("id")
        if not isinstance(case_id, str | int) or isinstance(case_id, bool):
            raise InputError(f"case {number} needs an 'id' (a string or an integer)")
        case_id = str(case_id)
        if not _CASE_ID.match(case_id):
            raise InputError(f"case {number}: id {case_id!r} must match {_CASE_ID.pattern}")
        if case_id in seen:
            raise InputError(f"case {number}: duplicate id {case_id!r}")
        seen.add(case_id)
        question, messages = row.get("question"), row.get("messages")
        if (question is None) == (messages is None):
            raise InputError(f"case {case_id!r} needs exactly one of 'question' or 'messages'")
        if question is not None and (not isinstance(question, str) or not question.strip()):
            raise InputError(f"case {case_id!r}: 'question' must be a non-empty string")
        if messages is not None and (not isinstance(messages, list) or not messages):
            raise InputError(f"case {case_id!r}: 'messages' must be a non-empty list")
        try:
            canonical_json(dict(row))
        except (TypeError, ValueError) as error:
            raise InputError(f"case {case_id!r} is not JSON data: {error}") from None
        rows.append({**row, "id": case_id})
    if not rows:
        raise InputError("a benchmark needs at least one case")
    return tuple(rows)


def benchmark(
    name: str,
    *,
    cases: Iterable[Mapping[str, Any]] | Callable[[], Iterable[Mapping[str, Any]]],
    grade: Grader,
    version: str = "1",
    description: str | None = None,
) -> PythonBenchmark:
    """Define benchmark ``name``: its ``cases`` (mappings with an ``id``, a ``question`` or
    OpenAI-style ``messages``, usually an ``answer``; other keys become the case's metadata)
    and ``grade(answer_text, case) -> bool`` (or ``(bool, details)``), which sees the whole
    case, reference included. ``version`` names the grader's version in the plan."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise InputError(f"benchmark name {name!r} must match {_NAME.pattern}")
    if not callable(grade):
        raise InputError(f"benchmark {name!r}: grade must be a function")
    try:
        rows = _rows(cases)
    except InputError as error:
        raise InputError(f"benchmark {name!r}: {error}") from None
    defined = PythonBenchmark(name, rows, grade, str(version), description)
    existing = _DEFINED.get(name)
    if existing is not None and (existing.sha256, existing.version) != (
        defined.sha256,
        defined.version,
    ):
        raise InputError(f"benchmark {name!r} is defined twice with different cases")
    _DEFINED[name] = defined
    return defined


def defined_benchmarks() -> dict[str, PythonBenchmark]:
    """Every benchmark defined so far, by name."""
    return dict(_DEFINED)
