"""Conservative multiple-choice extraction on the final text only (grader ``sr-bench-mcq-final-v2``).

Candidates come from (a) standalone answer lines when the first non-empty line is itself a
bare answer, (b) explicit declarations such as "the answer is X" with chained alternatives,
and (c) ``\\boxed{X}``. One distinct letter is the answer; several are ``ambiguous``; none is
``unparsed``. A ``<think>`` marker left in the final text makes it ``unparsed``.

``unparsed_reason`` says why a reply was ``unparsed``, ending with the forms the grader
accepts (``ACCEPTED_FORMS``); it explains the extraction, it never changes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

GRADER_VERSION = "sr-bench-mcq-final-v2"
ACCEPTED_FORMS = (
    "a first line that is only the letter ('B', '(B)', 'B.', '**B**', 'Answer: B'), "
    "a declaration anywhere ('the answer is B', 'Answer: B'), or \\boxed{B}"
)
QUOTED_CHARS = 60  # of the reply's line an unparsed reason quotes

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


def _candidates(text: str) -> tuple[set[str], list[str], bool]:
    """The candidate letters of ``text``, its non-empty lines, and whether its first line is
    a bare answer."""
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
    return candidates, lines, bare_first


def extract_choice(text: str, letters: str) -> tuple[str | None, AnswerStatus, bool]:
    """Return (letter, status, strict_format) for ``text`` over the allowed ``letters``."""
    if "<think>" in text or "</think>" in text:
        return (None, "unparsed", False)
    candidates, lines, bare_first = _candidates(text)
    if len(candidates) > 1:
        return (None, "ambiguous", False)
    if len(candidates) == 1:
        letter = next(iter(candidates))
        if letter in letters:
            return (letter, "answered", bare_first and len(lines) == 1)
    return (None, "unparsed", False)


def _quoted(line: str) -> str:
    flat = " ".join(line.split())
    return repr(flat if len(flat) <= QUOTED_CHARS else flat[: QUOTED_CHARS - 1] + "…")


def unparsed_reason(text: str, letters: str) -> str:
    """Why ``extract_choice`` found no answer in ``text`` (an ``unparsed`` reply), one line
    ending with the accepted forms."""
    if "<think>" in text or "</think>" in text:
        why = "the reply holds a <think> marker (reasoning left in the final text)"
    else:
        candidates, lines, _ = _candidates(text)
        if not lines:
            why = "the reply is empty"
        elif len(candidates) == 1 and (letter := next(iter(candidates))) not in letters:
            why = f"the answer letter {letter} is not one of the options {letters}"
        elif len(lines) == 1:
            why = (
                f"the reply {_quoted(lines[0])} is not a bare letter, an 'Answer: X' "
                "declaration or \\boxed{X}"
            )
        else:
            why = (
                f"first line {_quoted(lines[0])} is not a bare letter, and the reply holds no "
                "'Answer: X' declaration or \\boxed{X}"
            )
    return f"{why}; accepted forms: {ACCEPTED_FORMS}"


def grade_choice(text: str, answer: str, letters: str) -> McqGrade:
    """Grade ``text`` against the correct ``answer`` letter."""
    letter, status, strict = extract_choice(text, letters)
    return McqGrade(answer=letter, status=status, strict_format=strict, correct=letter == answer)
