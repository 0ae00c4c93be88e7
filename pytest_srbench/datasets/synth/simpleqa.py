"""simpleqa-verified rows: short factual-style questions (arithmetic, calendar, geometry, units, words)."""

from __future__ import annotations

import datetime
from collections.abc import Callable

from pytest_srbench.datasets.synth.common import QA, VOWELS, Rng, Row, made_up_word, native_id

_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip


def _qa_product(r: Rng) -> QA:
    a, b = r.randint(11, 99), r.randint(11, 99)
    return (f"What is {a} × {b}?", str(a * b))


def _qa_sum(r: Rng) -> QA:
    a, b = r.randint(1000, 99_999), r.randint(1000, 99_999)
    return (f"What is {a} + {b}?", str(a + b))


def _qa_root(r: Rng) -> QA:
    n = r.randint(11, 999)
    return (f"What is the square root of {n * n}?", str(n))


def _qa_letters(r: Rng) -> QA:
    word = made_up_word(r, r.randint(2, 5))
    return (f"How many letters does the made-up word '{word}' have?", str(len(word)))


def _qa_vowels(r: Rng) -> QA:
    word = made_up_word(r, r.randint(3, 6))
    return (
        f"How many vowels (a, e, i, o, u) does the made-up word '{word}' contain?",
        str(sum(ch in VOWELS for ch in word)),
    )


def _qa_reverse(r: Rng) -> QA:
    word = made_up_word(r, r.randint(3, 4))
    return (f"What is the made-up word '{word}' spelled backwards?", word[::-1])


def _qa_weekday(r: Rng) -> QA:
    start, days = r.randrange(7), r.randint(2, 400)
    return (
        f"Which day of the week is {days} days after a {_WEEKDAYS[start]}?",
        _WEEKDAYS[(start + days) % 7],
    )


def _qa_day_of_year(r: Rng) -> QA:
    month, day = r.randint(1, 12), r.randint(1, 28)
    number = datetime.date(2027, month, day).timetuple().tm_yday
    return (
        f"In the non-leap year 2027, what is the day number of {day} {_MONTHS[month - 1]} (1 January is day 1)?",
        str(number),
    )


def _qa_weeks(r: Rng) -> QA:
    weeks = r.randint(2, 520)
    return (f"How many days are there in {weeks} weeks?", str(7 * weeks))


def _qa_polygon(r: Rng) -> QA:
    sides = r.randint(5, 60)
    return (
        f"A convex polygon's interior angles add up to {(sides - 2) * 180} degrees. How many sides does it have?",
        str(sides),
    )


def _qa_diagonals(r: Rng) -> QA:
    sides = r.randint(5, 80)
    return (
        f"How many diagonals does a convex polygon with {sides} sides have?",
        str(sides * (sides - 3) // 2),
    )


def _qa_area(r: Rng) -> QA:
    a, b = r.randint(3, 99), r.randint(3, 99)
    return (
        f"What is the area, in square centimetres, of a {a} cm by {b} cm rectangle?",
        str(a * b),
    )


def _qa_grams(r: Rng) -> QA:
    kilograms = r.randint(2, 999)
    return (f"How many grams are there in {kilograms} kilograms?", str(1000 * kilograms))


def _qa_minutes(r: Rng) -> QA:
    hours = r.randint(2, 500)
    return (f"How many minutes are there in {hours} hours?", str(60 * hours))


def _qa_centimetres(r: Rng) -> QA:
    metres = r.randint(2, 999)
    return (f"How many centimetres are there in {metres} metres?", str(100 * metres))


SIMPLEQA_TOPICS: dict[str, tuple[Callable[[Rng], QA], ...]] = {
    "arithmetic": (_qa_product, _qa_sum, _qa_root),
    "calendar": (_qa_weekday, _qa_day_of_year, _qa_weeks),
    "geometry": (_qa_polygon, _qa_diagonals, _qa_area),
    "units": (_qa_grams, _qa_minutes, _qa_centimetres),
    "words": (_qa_letters, _qa_vowels, _qa_reverse),
}


def simpleqa_row(rng: Rng, index: int) -> Row:
    """Row ``index``: a short-answer item of the index's topic (the topics take turns)."""
    topic = sorted(SIMPLEQA_TOPICS)[index % len(SIMPLEQA_TOPICS)]
    problem, answer = rng.choice(SIMPLEQA_TOPICS[topic])(rng)
    return {"answer": answer, "id": native_id(index), "problem": problem, "topic": topic}
