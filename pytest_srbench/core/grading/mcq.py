"""Conservative multiple-choice extraction on the final text only (grader ``sr-bench-mcq-final-v2``).

Candidates come from (a) standalone answer lines when the first non-empty line is itself a
bare answer, (b) explicit declarations such as "the answer is X" with chained alternatives,
and (c) ``\\boxed{X}``. One distinct letter is the answer; several are ``ambiguous``; none is
``unparsed``. A ``<think>`` marker left in the final text makes it ``unparsed``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

GRADER_VERSION = "sr-bench-mcq-final-v2"

AnswerStatus = Literal["answered", "ambiguous", "unparsed"]

_WRAP = r"(?:\*\*|__|`)?"
_BARE = re.compile(
    rf"^{_WRAP}(?:answer\s*:\s*)?{_WRAP}\(?([A-Z])\)?\.?{_WRAP}$",
    re.IGNORECASE,
)
_LETTER = rf"{_WRAP}\(?([A-Z])(?![A-Za-z0-9])\)?{_WRAP}"
_DECLARATION = re.compile(
    rf"\banswer\s*(?:is\b|:)\s*{_LETTER}((?:\s*(?:,|/|\bor\b|\band\b)\s*{_LETTER})*)",
    re.IGNORECASE,
)
_CHAINED = re.compile(rf"(?:,|/|\bor\b|\band\b)\s*{_LETTER}", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{\s*(?:\\text\{)?\s*([A-Z])\s*\}?\s*\}")


@dataclass(frozen=True)
class McqGrade:
    """Outcome of MCQ extraction."""

    answer: str | None
    status: AnswerStatus
    strict_format: bool
    correct: bool


def _bare_letter(line: str) -> str | None:
    match = _BARE.match(line.strip())
    if not match:
        return None
    letter = match.group(1)
    # A lone lower-case word such as "a" is an article, not an option: require upper case
    # unless the line carries an explicit "answer:" label.
    if letter.islower() and "answer" not in line.lower():
        return None
    return letter.upper()


def extract_choice(text: str, letters: str) -> tuple[str | None, AnswerStatus, bool]:
    """Return (letter, status, strict_format) for ``text`` over the allowed ``letters``."""
    if "<think>" in text or "</think>" in text:
        return (None, "unparsed", False)
    stripped = text.strip()
    candidates: set[str] = set()
    lines = [line.strip() for line in stripped.splitlines() if line.strip()]
    bare_first = bool(lines) and _bare_letter(lines[0]) is not None
    if bare_first:
        for line in lines:
            letter = _bare_letter(line)
            if letter is not None:
                candidates.add(letter)
    for match in _DECLARATION.finditer(stripped):
        letters_here = [match.group(1)]
        letters_here += [m.group(1) for m in _CHAINED.finditer(match.group(2) or "")]
        candidates.update(letter for letter in letters_here if letter.isupper())
    candidates.update(match.group(1).upper() for match in _BOXED.finditer(stripped))
    if len(candidates) > 1:
        return (None, "ambiguous", False)
    if len(candidates) == 1:
        letter = next(iter(candidates))
        if letter in letters:
            return (letter, "answered", bare_first and len(lines) == 1)
    return (None, "unparsed", False)


def grade_choice(text: str, answer: str, letters: str) -> McqGrade:
    """Grade ``text`` against the correct ``answer`` letter."""
    letter, status, strict = extract_choice(text, letters)
    return McqGrade(answer=letter, status=status, strict_format=strict, correct=letter == answer)
