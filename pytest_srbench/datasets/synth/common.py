"""What every synthetic generator shares: the seeded stream, native ids, drawing distinct rows, made-up words."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from pytest_srbench.core.canonical import digest
from pytest_srbench.core.errors import InputError

GENERATOR = "pytest-srbench-synth-v1"

Row = dict[str, Any]
Rng = random.Random
QA = tuple[str, str]  # a short-answer question and its answer (hle, simpleqa-verified)


class SynthError(InputError):
    """Synthetic suites cannot be written (unknown benchmark or profile, an existing folder)."""


def seeded_rng(seed: int, *parts: Any) -> Rng:
    """An independent, deterministic stream for one benchmark of one seed."""
    return random.Random(int(digest([GENERATOR, seed, *parts]), 16))


def distinct_rows(
    count: int, make: Callable[[int], Row | None], keys: Callable[[Row], list[str]], what: str
) -> list[Row]:
    """``count`` rows from ``make(index)``; a row whose prompt identity was already produced
    (or that ``make`` gave up on, returning None) is drawn again."""
    rows: list[Row] = []
    seen: set[str] = set()
    budget = 200 * count + 1000
    while len(rows) < count:
        budget -= 1
        if budget < 0:
            raise SynthError(f"{what}: could not generate {count} distinct items")
        row = make(len(rows))
        if row is None:
            continue
        identity = keys(row)
        if any(key in seen for key in identity):
            continue
        seen.update(identity)
        rows.append(row)
    return rows


def native_id(index: int) -> str:
    """The benchmark-native id of the ``index``-th generated row (synth-00001, ...)."""
    return f"synth-{index + 1:05d}"


_CONSONANTS = "bdfgklmnprstvz"
VOWELS = "aeiou"


def made_up_word(rng: Rng, syllables: int) -> str:
    """A pronounceable made-up lowercase word."""
    body = "".join(rng.choice(_CONSONANTS) + rng.choice(VOWELS) for _ in range(syllables))
    return body + (rng.choice("nrslk") if rng.random() < 0.5 else "")


def surname(rng: Rng) -> str:
    """A made-up capitalised surname."""
    return made_up_word(rng, rng.randint(2, 3)).capitalize()


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, ..., 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
