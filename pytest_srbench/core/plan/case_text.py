"""The canonical JSON of a plan's case list, made once when the plan is frozen.

Three digests and copies of a plan serialise every case the same way: the case digest
(``case_sha256``), the plan digest (``plan_sha256``) and the text the store keeps. A
``CaseListText`` holds that text once, as UTF-8 chunks, with what decides whether each
reader may use it as it is: a digest over distinct cases needs a plan without repeats, the
plan digest (taken over integral floats written as ints) needs cases with no integral float.
Whoever may not use it serialises the cases its own way, as before.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_srbench.core.canonical import canonical_json
from pytest_srbench.core.models import Case

CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class CaseListText:
    """``canonical_json([case.model_dump(mode="json") for case in cases])`` in UTF-8 chunks of
    about ``CHUNK_BYTES``, made from exactly ``cases`` (the objects, in order)."""

    cases: tuple[Case, ...]
    chunks: tuple[bytes, ...]
    has_repeats: bool  # a case is a repeat of another: the case digest counts it once
    has_integral_floats: bool  # the plan digest writes such a float as an int: other text

    @classmethod
    def of(cls, cases: Iterable[Case]) -> CaseListText:
        made = tuple(cases)
        integral = False

        def pieces() -> Iterator[str]:
            nonlocal integral
            yield "["
            for index, case in enumerate(made):
                dumped = case.model_dump(mode="json")
                text = canonical_json(dumped)
                if not integral and _MAYBE_INTEGRAL.search(text):  # most hold none: no walk
                    integral = has_integral_float(dumped)
                yield text if index == 0 else "," + text
            yield "]"

        chunks = tuple(text_chunks(pieces()))
        repeats = any(isinstance(case.metadata.get("repeat_of"), str) for case in made)
        return cls(made, chunks, repeats, integral)

    def made_from(self, cases: Sequence[Case]) -> bool:
        """Whether this is the text of ``cases`` (the same case objects, in the same order)."""
        return len(cases) == len(self.cases) and all(
            held is given for held, given in zip(self.cases, cases, strict=True)
        )


# What an integral float looks like in canonical JSON (``repr``): ``<digits>.0`` followed by
# the end of its value, or an exponent written with ``e+`` (1e+16). A text without either
# holds none; a string that merely contains one costs the walk (``has_integral_float``).
_MAYBE_INTEGRAL = re.compile(r"\.0(?:[,\]}]|$)|\de\+")


def has_integral_float(value: Any) -> bool:
    """Whether ``integralize`` would change ``value`` (a float with an integral value inside)."""
    pending = [value]
    while pending:  # a loop, not a call per node: tens of thousands of cases at freeze time
        item = pending.pop()
        kind = type(item)
        if kind is dict:
            pending.extend(item.values())
        elif kind is list or kind is tuple:
            pending.extend(item)
        elif kind is float:
            if item.is_integer():
                return True
        elif kind not in _LEAVES:  # a subclass: as ``integralize`` tells it
            if isinstance(item, float) and item.is_integer():
                return True
            if isinstance(item, dict):
                pending.extend(item.values())
            elif isinstance(item, list | tuple):
                pending.extend(item)
    return False


_LEAVES = frozenset({str, int, bool, type(None)})


def text_chunks(pieces: Iterable[str], size: int = CHUNK_BYTES) -> Iterator[bytes]:
    """``pieces`` encoded and joined into chunks of about ``size`` bytes."""
    pending: list[str] = []
    held = 0
    for piece in pieces:
        pending.append(piece)
        held += len(piece)
        if held >= size:
            yield "".join(pending).encode("utf-8")
            pending, held = [], 0
    if pending:
        yield "".join(pending).encode("utf-8")
