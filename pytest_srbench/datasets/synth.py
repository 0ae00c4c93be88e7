"""Synthetic suites: procedurally generated items in the row format of each sr-bench benchmark.

``srbench datasets synth --profile quick|standard`` writes ``<out>/<benchmark>/`` (``suite.json``
and ``cases.jsonl``, exactly the shipped suites' format) with as many rows as the profile's
selection needs (quick: the quick count; standard: the quick count plus the standard block
that follows it), so those profiles run offline on the built-in simulator.

Every item is generated here from the seed, nothing is copied from anywhere: arithmetic, unit,
logic and counting questions whose answers the generator computes; ARC-style grid puzzles with
a known rule; programming problems whose expected outputs come from running the reference
solution (and whose wrong solution is checked to fail a test); parameterised multi-step code,
shell and library-desk tasks whose reference plans are replayed before they are written. They
exercise the harness (selection, grading, the simulator, the sandbox, reports); a score on them
says nothing about the real benchmarks.
"""

from __future__ import annotations

import contextlib
import copy
import datetime
import functools
import hashlib
import io
import json
import math
import random
import string
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from pytest_srbench.core.canonical import canonical_json, digest
from pytest_srbench.core.models import DEFAULT_SEED
from pytest_srbench.core.protocol import PROFILE_COUNTS
from pytest_srbench.datasets.prepare import SUITE_VERSION, publish
from pytest_srbench.datasets.suites import SUITE_CASES, SUITE_META

__all__ = [
    "DEFAULT_SEED",
    "SYNTH_BENCHMARKS",
    "SYNTH_PROFILES",
    "SynthError",
    "SynthSummary",
    "run_function_solution",
    "run_stdin_solution",
    "synth_count",
    "synth_files",
    "synth_rows",
    "write_synthetic_suites",
]

GENERATOR = "pytest-srbench-synth-v1"
SYNTH_PROFILES = ("quick", "standard")
SYNTH_BENCHMARKS = tuple(PROFILE_COUNTS)
LICENSE = "Apache-2.0"

Row = dict[str, Any]
Rng = random.Random


class SynthError(ValueError):
    """Synthetic suites cannot be written (unknown benchmark or profile, an existing folder)."""


def _rng(seed: int, *parts: Any) -> Rng:
    """An independent, deterministic stream for one benchmark of one seed."""
    return random.Random(int(digest([GENERATOR, seed, *parts]), 16))


def _distinct(
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


def _native_id(index: int) -> str:
    return f"synth-{index + 1:05d}"


# --------------------------------------------------------------------------- words and names

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_FIRST_NAMES = (
    "Ada", "Ben", "Cleo", "Dara", "Eli", "Faye", "Gus", "Hana", "Ivo", "Juno", "Kai", "Lena",
    "Milo", "Nina", "Omar", "Pia", "Quin", "Rosa", "Sami", "Tove", "Uma", "Vik", "Wren", "Yara",
)  # fmt: skip
_ADJECTIVES = (
    "Amber", "Silent", "Hidden", "Northern", "Paper", "Quiet", "Distant", "Copper", "Hollow",
    "Winter", "Crimson", "Glass", "Wandering", "Last", "Burning", "Salt", "Iron", "Velvet",
    "Patient", "Folded", "Sunken", "Borrowed", "Lunar", "Tidal",
)  # fmt: skip
_NOUNS = (
    "Harbor", "Engine", "Orchard", "Lantern", "Bridge", "River", "Garden", "Candle", "Tower",
    "Meadow", "Letter", "Archive", "Island", "Mirror", "Signal", "Valley", "Voyage", "Clock",
    "Forest", "Window", "Kite", "Anchor", "Falcon", "Beacon",
)  # fmt: skip


def _word(rng: Rng, syllables: int) -> str:
    """A pronounceable made-up lowercase word."""
    body = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables))
    return body + (rng.choice("nrslk") if rng.random() < 0.5 else "")


def _surname(rng: Rng) -> str:
    return _word(rng, rng.randint(2, 3)).capitalize()


def _title(rng: Rng) -> str:
    adjective, noun = rng.choice(_ADJECTIVES), rng.choice(_NOUNS)
    if rng.random() < 0.5:
        return f"The {adjective} {noun}"
    return f"{adjective} {noun}s"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


_ROMAN = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
    (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)  # fmt: skip


def _roman(n: int) -> str:
    out = []
    for value, symbol in _ROMAN:
        while n >= value:
            out.append(symbol)
            n -= value
    return "".join(out)


def _formula(parts: Sequence[tuple[str, int]]) -> str:
    """A molecular formula such as C2H6O (counts of 1 unwritten, absent elements left out)."""
    return "".join(f"{element}{n if n > 1 else ''}" for element, n in parts if n > 0)


# --------------------------------------------------------------------------- numeric MCQs


@dataclass(frozen=True)
class Numeric:
    """A question with an integer answer, plausible wrong values and how values are shown."""

    question: str
    value: int
    near: tuple[int, ...] = ()
    unit: str = ""
    money: bool = False
    low: int = 0
    high: int | None = None
    show: Callable[[int], str] | None = None

    def text(self, value: int) -> str:
        if self.show is not None:
            return self.show(value)
        if self.money:
            return f"${value:,}"
        return f"{value} {self.unit}" if self.unit else str(value)


def _choices(rng: Rng, item: Numeric, n: int) -> tuple[list[str], int]:
    """``n`` distinct option texts (the right one at a random position) and that position."""
    wrong: list[int] = []

    def usable(value: int) -> bool:
        return (
            value != item.value
            and value >= item.low
            and (item.high is None or value <= item.high)
            and value not in wrong
        )

    for value in item.near:
        if len(wrong) == n - 1:
            break
        if usable(value):
            wrong.append(value)
    span = max(3, abs(item.value) // 10)
    tries = 0
    while len(wrong) < n - 1:
        value = item.value + rng.choice((-1, 1)) * rng.randint(1, span)
        if usable(value):
            wrong.append(value)
        tries += 1
        if tries % 40 == 0:
            span *= 2
    rng.shuffle(wrong)
    position = rng.randrange(n)
    values = [*wrong[:position], item.value, *wrong[position:]]
    texts = [item.text(value) for value in values]
    if len(set(texts)) != n:
        raise SynthError(f"internal: options of {item.question!r} are not distinct: {texts}")
    return texts, position


def _shuffled(rng: Rng, values: Sequence[int]) -> tuple[int, ...]:
    out = list(values)
    rng.shuffle(out)
    return tuple(out)


# mmlu-pro: one to three templates per MMLU-Pro category name (names used only as strata)


def _math_product(r: Rng) -> Numeric:
    a, b = r.randint(12, 99), r.randint(12, 99)
    return Numeric(
        f"What is {a} × {b}?",
        a * b,
        (a * (b + 1), (a + 1) * b, a * b + 10, a * b - 10, a * (b - 1)),
    )


def _math_remainder(r: Rng) -> Numeric:
    a, b = r.randint(100, 9999), r.randint(3, 29)
    return Numeric(
        f"What is the remainder when {a} is divided by {b}?", a % b, _shuffled(r, range(max(b, 10)))
    )


def _math_linear(r: Rng) -> Numeric:
    x, a, b = r.randint(2, 60), r.randint(2, 15), r.randint(1, 90)
    c = a * x + b
    return Numeric(
        f"Solve for x: {a}x + {b} = {c}.", x, (x + 1, x - 1, (c + b) // a, c // a, x + 2)
    )


def _math_series(r: Rng) -> Numeric:
    n = r.randint(10, 400)
    return Numeric(
        f"What is the sum of the integers from 1 to {n}?",
        n * (n + 1) // 2,
        (n * (n - 1) // 2, n * n, n * (n + 1), n * (n + 1) // 2 + n),
    )


def _physics_speed(r: Rng) -> Numeric:
    a, t = r.randint(2, 15), r.randint(2, 20)
    return Numeric(
        f"An object starts from rest and accelerates uniformly at {a} m/s^2. What is its speed after {t} s?",
        a * t,
        (a + t, a * t * t, a * t + a, a * t - a),
        unit="m/s",
    )


def _physics_distance(r: Rng) -> Numeric:
    a, t = 2 * r.randint(1, 8), r.randint(2, 15)
    return Numeric(
        f"An object starts from rest and accelerates uniformly at {a} m/s^2. How far does it travel in the first {t} s?",
        a * t * t // 2,
        (a * t * t, a * t, a * t // 2, a * (t - 1) * (t - 1) // 2),
        unit="m",
    )


def _physics_kinetic(r: Rng) -> Numeric:
    m, v = 2 * r.randint(1, 15), r.randint(2, 30)
    return Numeric(
        f"What is the kinetic energy of a {m} kg object moving at {v} m/s?",
        m * v * v // 2,
        (m * v * v, m * v, m * v // 2, m * v * v // 4),
        unit="J",
    )


def _physics_km(r: Rng) -> Numeric:
    whole, tenth = r.randint(1, 90), r.randint(1, 9)
    metres = whole * 1000 + tenth * 100
    return Numeric(
        f"How many metres are there in {whole}.{tenth} kilometres?",
        metres,
        (metres // 10, metres * 10, metres // 100, whole * 1000 + tenth * 10, whole * 100 + tenth),
        unit="m",
    )


def _engineering_voltage(r: Rng) -> Numeric:
    resistance, current = r.randint(2, 250), r.randint(2, 25)
    return Numeric(
        f"A resistor of {resistance} ohms carries a steady current of {current} A. What is the voltage across it?",
        resistance * current,
        (resistance + current, resistance * current * current, resistance * current * 2),
        unit="V",
    )


def _engineering_power(r: Rng) -> Numeric:
    resistance, current = r.randint(2, 60), r.randint(2, 15)
    return Numeric(
        f"A resistor of {resistance} ohms carries a steady current of {current} A. What power does it dissipate?",
        current * current * resistance,
        (current * resistance, current * current, resistance * resistance * current),
        unit="W",
    )


def _engineering_series(r: Rng) -> Numeric:
    parts = [r.randint(10, 990) for _ in range(3)]
    total = sum(parts)
    return Numeric(
        f"Resistors of {parts[0]}, {parts[1]} and {parts[2]} ohms are connected in series. What is the total resistance?",
        total,
        (total + 10, total - 10, total + 100, total - 100, max(parts)),
        unit="ohms",
    )


def _engineering_parallel(r: Rng) -> Numeric:
    t = r.randint(1, 4)
    result = t * r.randint(2, 40)
    a, b = result * (t + 1), result * (t + 1) // t
    return Numeric(
        f"Resistors of {a} ohms and {b} ohms are connected in parallel. What is the equivalent resistance?",
        result,
        (a + b, abs(a - b), (a + b) // 2, result * 2),
        unit="ohms",
    )


_MASSES = {"C": 12, "H": 1, "N": 14, "O": 16}


def _molecule(r: Rng) -> list[tuple[str, int]]:
    return [
        ("C", r.randint(1, 9)),
        ("H", r.randint(2, 20)),
        ("N", r.randint(0, 2)),
        ("O", r.randint(0, 4)),
    ]


def _chemistry_molar(r: Rng) -> Numeric:
    parts = _molecule(r)
    mass = sum(_MASSES[element] * n for element, n in parts)
    return Numeric(
        "Using the atomic masses H = 1, C = 12, N = 14 and O = 16 g/mol, what is the molar mass "
        f"of {_formula(parts)}?",
        mass,
        (mass + 12, mass - 12, mass + 16, mass - 16, mass + 2, mass - 2),
        unit="g/mol",
    )


def _chemistry_atoms(r: Rng) -> Numeric:
    parts = _molecule(r)
    atoms = sum(n for _, n in parts)
    return Numeric(
        f"How many atoms are there in one molecule of {_formula(parts)}?",
        atoms,
        (atoms + 1, atoms - 1, len([p for p in parts if p[1]])),
        low=1,
    )


def _chemistry_moles(r: Rng) -> Numeric:
    molar, n = r.choice((18, 28, 32, 44, 46, 58, 60, 98, 100, 180)), r.randint(2, 40)
    return Numeric(
        f"How many moles are there in {molar * n} g of a compound whose molar mass is {molar} g/mol?",
        n,
        (2 * n, n + 1, n - 1, max(n // 2, 1), n + 2),
        unit="mol",
        low=1,
    )


def _cs_binary(r: Rng) -> Numeric:
    value = r.randint(20, 4095)
    bits = format(value, "b")
    return Numeric(
        f"What is the decimal value of the binary number {bits}?",
        value,
        (*(value ^ (1 << k) for k in _shuffled(r, range(len(bits)))), int(bits[::-1], 2)),
    )


def _cs_hex(r: Rng) -> Numeric:
    value = r.randint(256, 65535)
    return Numeric(
        f"What is the decimal value of the hexadecimal number {value:X}?",
        value,
        (value + 16, value - 16, value + 256, value - 256, value + 1, value - 1),
    )


def _cs_bits(r: Rng) -> Numeric:
    n = r.randint(3, 2_000_000)
    bits = (n - 1).bit_length()
    return Numeric(
        f"What is the smallest number of bits that gives each of {n} different items its own binary code?",
        bits,
        _shuffled(r, range(max(bits - 4, 1), bits + 6)),
        low=1,
    )


def _cs_tree(r: Rng) -> Numeric:
    depth = r.randint(2, 20)
    return Numeric(
        f"How many nodes does a perfect binary tree of depth {depth} have (the root alone has depth 0)?",
        2 ** (depth + 1) - 1,
        (2**depth - 1, 2**depth, 2 ** (depth + 1), 2 ** (depth + 2) - 1),
    )


def _economics_percent(r: Rng) -> Numeric:
    j, i = r.randint(1, 40), r.randint(1, 20)
    before, percent = 20 * j, 5 * i
    after = before + j * i
    return Numeric(
        f"The price of a good rises from ${before} to ${after}. By what percentage did it rise?",
        percent,
        (after - before, round(100 * (after - before) / after), percent + 5, percent - 5),
        low=1,
        show=lambda v: f"{v}%",
    )


def _economics_real_gdp(r: Rng) -> Numeric:
    real, deflator = 100 * r.randint(2, 90), r.randint(101, 190)
    nominal = real * deflator // 100
    return Numeric(
        f"Nominal GDP is ${nominal:,} billion and the GDP deflator is {deflator} (base year = 100). What is real GDP?",
        real,
        (nominal, nominal * deflator // 100, real + 100, real - 100, nominal - real),
        show=lambda v: f"${v:,} billion",
    )


def _economics_multiplier(r: Rng) -> Numeric:
    propensity, multiplier = r.choice(
        ((Fraction(1, 2), 2), (Fraction(3, 4), 4), (Fraction(4, 5), 5), (Fraction(9, 10), 10))
    )
    spending = 10 * r.randint(1, 90)
    rise = spending * multiplier
    return Numeric(
        f"The marginal propensity to consume is {float(propensity)}. By how much does equilibrium output rise, "
        f"according to the simple spending multiplier, when government spending rises by ${spending} million?",
        rise,
        (spending, rise - spending, rise * 2, rise // 2),
        show=lambda v: f"${v:,} million",
        low=1,
    )


def _business_profit(r: Rng) -> Numeric:
    units, price = 10 * r.randint(10, 200), r.randint(12, 95)
    cost = r.randint(2, price - 5)
    fixed = 100 * r.randint(1, units * (price - cost) // 100 - 1)
    profit = units * (price - cost) - fixed
    return Numeric(
        f"A firm sells {units:,} units at ${price} each. Fixed costs are ${fixed:,} and the variable cost is ${cost} "
        "per unit. What is the operating profit?",
        profit,
        (
            units * price - fixed,
            units * (price - cost),
            profit + 2 * fixed,
            units * price - units * cost - cost,
        ),
        money=True,
    )


def _business_interest(r: Rng) -> Numeric:
    principal, rate, years = 100 * r.randint(5, 300), r.randint(2, 12), r.randint(2, 10)
    interest = principal * rate * years // 100
    return Numeric(
        f"How much simple interest does ${principal:,} earn at {rate}% per year over {years} years?",
        interest,
        (principal * rate // 100, interest + principal, principal * rate * (years - 1) // 100),
        money=True,
    )


def _business_markup(r: Rng) -> Numeric:
    k, j = r.randint(1, 50), r.randint(1, 16)
    cost, percent = 20 * k, 5 * j
    price = cost + k * j
    return Numeric(
        f"A retailer buys an item for ${cost} and sells it at a markup of {percent}% on cost. What is the selling price?",
        price,
        (k * j, cost + percent, cost - k * j, price + k * j),
        money=True,
    )


def _health_dose(r: Rng) -> Numeric:
    dose, weight = r.randint(2, 15), r.randint(20, 110)
    return Numeric(
        f"A drug is dosed at {dose} mg per kg of body weight. What total dose does a patient weighing {weight} kg receive?",
        dose * weight,
        (dose + weight, dose * weight * 2, dose * (weight - 10), dose * weight // 2),
        unit="mg",
    )


def _health_beats(r: Rng) -> Numeric:
    rate, hours = r.randint(50, 110), r.randint(2, 12)
    return Numeric(
        f"A resting heart beats {rate} times per minute. How many times does it beat in {hours} hours?",
        rate * 60 * hours,
        (rate * hours, rate * 60, rate * 3600 * hours, rate * 30 * hours),
        show=lambda v: f"{v:,}",
    )


def _health_drip(r: Rng) -> Numeric:
    rate, hours = 5 * r.randint(5, 50), r.randint(2, 24)
    return Numeric(
        f"An intravenous drip runs at {rate} mL per hour for {hours} hours. What volume is delivered?",
        rate * hours,
        (rate + hours, rate * (hours - 1), rate * hours * 2),
        unit="mL",
    )


def _biology_doubling(r: Rng) -> Numeric:
    period, k, start = (
        r.choice((15, 20, 30, 40, 60)),
        r.randint(2, 9),
        r.choice((50, 100, 200, 500, 1000)),
    )
    return Numeric(
        f"A bacterial culture doubles every {period} minutes. Starting from {start} cells, how many cells are there "
        f"after {period * k} minutes?",
        start * 2**k,
        (start * 2 ** (k - 1), start * 2 ** (k + 1), start * 2 * k, start * k),
        show=lambda v: f"{v:,}",
    )


def _biology_codons(r: Rng) -> Numeric:
    n = r.randint(40, 900)
    return Numeric(
        f"A coding sequence is {3 * n} nucleotides long, not counting its stop codon. How many amino acids long is the "
        "polypeptide it encodes?",
        n,
        (3 * n, n - 1, n + 1, 3 * n // 2, n // 3),
        low=1,
    )


def _biology_cross(r: Rng) -> Numeric:
    n = 4 * r.randint(10, 500)
    return Numeric(
        f"Two parents heterozygous for one gene (Aa x Aa) have {n} offspring. How many are expected to show the "
        "recessive phenotype?",
        n // 4,
        (n // 2, 3 * n // 4, n // 8, n // 3, n),
    )


def _history_roman(r: Rng) -> Numeric:
    year = r.randint(1000, 2099)
    return Numeric(
        f"Which year is written in Roman numerals as {_roman(year)}?",
        year,
        (year + 10, year - 10, year + 100, year - 100, year + 50, year - 50, year + 1, year - 1),
    )


def _history_century(r: Rng) -> Numeric:
    year = r.randint(101, 2099)
    century = (year - 1) // 100 + 1
    return Numeric(
        f"In which century does the year {year} CE fall?",
        century,
        (year // 100, century + 1, century - 1, century + 2, century - 2),
        low=1,
        show=lambda v: f"the {_ordinal(v)} century",
    )


def _history_span(r: Rng) -> Numeric:
    bce, ce = r.randint(20, 900), r.randint(20, 900)
    return Numeric(
        f"How many years passed between 1 January {bce} BCE and 1 January {ce} CE? (There is no year zero.)",
        bce + ce - 1,
        (bce + ce, bce + ce - 2, abs(ce - bce), bce + ce + 1),
    )


def _law_penalty(r: Rng) -> Numeric:
    per_day, cap_days, late = 10 * r.randint(5, 50), r.randint(5, 30), r.randint(2, 45)
    cap = per_day * cap_days
    return Numeric(
        f"A contract sets a penalty of ${per_day} per day of late delivery, capped at ${cap:,} in total. Delivery was "
        f"{late} days late. What penalty is owed?",
        min(per_day * late, cap),
        (per_day * late, cap, per_day * (late - 1), per_day * (late + 1)),
        money=True,
    )


def _law_estate(r: Rng) -> Numeric:
    heirs, share, fee = r.randint(2, 8), 500 * r.randint(2, 180), 500 * r.randint(1, 19)
    estate = share * heirs + fee
    return Numeric(
        f"An estate worth ${estate:,} must first pay ${fee:,} in fees; the rest is split equally among {heirs} heirs. "
        "How much does each heir receive?",
        share,
        (estate // heirs, share + fee, (estate + fee) // heirs, share - fee),
        money=True,
    )


def _law_limitation(r: Rng) -> Numeric:
    year, period = r.randint(1980, 2030), r.randint(2, 20)
    return Numeric(
        f"A claim must be filed within {period} years of the event, which took place on 1 March {year}. In which "
        "year does the filing period end (on 1 March)?",
        year + period,
        (year + period - 1, year + period + 1, year + period - 2, year + 2 * period),
    )


def _psychology_mean(r: Rng) -> Numeric | None:
    k, mean = r.randint(5, 9), r.randint(10, 80)
    scores = [r.randint(max(1, mean - 15), mean + 15) for _ in range(k - 1)]
    last = mean * k - sum(scores)
    if not 1 <= last <= 99:
        return None
    scores.append(last)
    middle = sorted(scores)[k // 2]
    return Numeric(
        f"In a memory study, {k} participants recalled {', '.join(map(str, scores))} words. What is the mean number "
        "of words recalled?",
        mean,
        (middle, mean + 1, mean - 1, max(scores), min(scores)),
    )


def _psychology_median(r: Rng) -> Numeric:
    k = r.choice((5, 7, 9))
    scores = r.sample(range(100, 900), k)
    ordered = sorted(scores)
    median = ordered[k // 2]
    return Numeric(
        f"Reaction times of {k} participants were {', '.join(f'{s} ms' for s in scores)}. What is the median "
        "reaction time?",
        median,
        (scores[k // 2], sum(scores) // k, ordered[k // 2 - 1], ordered[k // 2 + 1]),
        unit="ms",
    )


def _psychology_range(r: Rng) -> Numeric:
    scores = r.sample(range(10, 100), r.randint(5, 8))
    return Numeric(
        f"Anxiety scores in a small sample were {', '.join(map(str, scores))}. What is the range of the scores?",
        max(scores) - min(scores),
        (max(scores), min(scores), max(scores) + min(scores), scores[-1] - scores[0]),
    )


Formula = tuple[Any, ...]
_CONNECTIVES = ("and", "or", "implies", "if and only if")


def _literal(r: Rng) -> Formula:
    variable: Formula = ("var", r.choice("PQR"))
    return ("not", variable) if r.random() < 0.35 else variable


def _logic_formula(r: Rng) -> Formula:
    left: Formula = (r.choice(_CONNECTIVES), _literal(r), _literal(r))
    right: Formula = (
        (r.choice(_CONNECTIVES), _literal(r), _literal(r)) if r.random() < 0.4 else _literal(r)
    )
    if r.random() < 0.5:
        left, right = right, left
    return (r.choice(_CONNECTIVES), left, right)


def _logic_text(formula: Formula, top: bool = True) -> str:
    kind = formula[0]
    if kind == "var":
        return str(formula[1])
    if kind == "not":
        return f"not {_logic_text(formula[1], False)}"
    text = f"{_logic_text(formula[1], False)} {kind} {_logic_text(formula[2], False)}"
    return text if top else f"({text})"


def _logic_value(formula: Formula, env: dict[str, bool]) -> bool:
    kind = formula[0]
    if kind == "var":
        return env[formula[1]]
    if kind == "not":
        return not _logic_value(formula[1], env)
    a, b = _logic_value(formula[1], env), _logic_value(formula[2], env)
    return {"and": a and b, "or": a or b, "implies": (not a) or b, "if and only if": a == b}[kind]


def _philosophy_truth(r: Rng) -> Numeric:
    formula = _logic_formula(r)
    rows = [dict(zip("PQR", bits, strict=True)) for bits in _truth_rows()]
    count = sum(_logic_value(formula, env) for env in rows)
    return Numeric(
        "Under how many of the 8 assignments of truth values to P, Q and R is the formula "
        f"'{_logic_text(formula)}' true?",
        count,
        _shuffled(r, range(10)),
    )


def _truth_rows() -> list[tuple[bool, bool, bool]]:
    return [(p, q, s) for p in (True, False) for q in (True, False) for s in (True, False)]


def _philosophy_syllogism(r: Rng) -> Numeric:
    n, m = r.randint(3, 60), r.randint(3, 60)
    a, b = _word(r, 2), _word(r, 2)
    question = (
        f"Every {a} is a {b}, and no {b} is red. A box holds {n} {a}s and {m} red things. "
        f"At most how many objects in the box are both {a}s and red?"
    )
    return Numeric(question, 0, _shuffled(r, (1, n, m, min(n, m), n + m, abs(n - m), 2, 3, 4, 5)))


def _other_seconds(r: Rng) -> Numeric:
    hours, minutes = r.randint(1, 23), r.randint(1, 59)
    total = 3600 * hours + 60 * minutes
    return Numeric(
        f"How many seconds are there in {hours} hours and {minutes} minutes?",
        total,
        (
            60 * hours + minutes,
            3600 * hours + minutes,
            360 * hours + 60 * minutes,
            total + 60,
            total - 60,
        ),
        show=lambda v: f"{v:,}",
    )


def _other_days(r: Rng) -> Numeric:
    weeks, days = r.randint(2, 99), r.randint(1, 6)
    return Numeric(
        f"How many days are there in {weeks} weeks and {days} days?",
        7 * weeks + days,
        (7 * weeks, 7 * (weeks + days), weeks + days, 7 * weeks + days + 7),
    )


def _other_clock(r: Rng) -> Numeric:
    start, duration = r.randint(0, 1439), r.randint(15, 600)
    arrival = (start + duration) % 1440
    return Numeric(
        f"A train leaves at {start // 60:02d}:{start % 60:02d} and the journey takes {duration} minutes. At what time "
        "(24-hour clock) does it arrive?",
        arrival,
        (
            arrival + 60,
            arrival - 60,
            arrival + 30,
            arrival - 30,
            arrival + 10,
            arrival - 10,
            arrival + 100,
        ),
        high=1439,
        show=lambda v: f"{v // 60:02d}:{v % 60:02d}",
    )


MMLU_CATEGORIES: dict[str, tuple[Callable[[Rng], Numeric | None], ...]] = {
    "biology": (_biology_doubling, _biology_codons, _biology_cross),
    "business": (_business_profit, _business_interest, _business_markup),
    "chemistry": (_chemistry_molar, _chemistry_atoms, _chemistry_moles),
    "computer science": (_cs_binary, _cs_hex, _cs_bits, _cs_tree),
    "economics": (_economics_percent, _economics_real_gdp, _economics_multiplier),
    "engineering": (
        _engineering_voltage,
        _engineering_power,
        _engineering_series,
        _engineering_parallel,
    ),
    "health": (_health_dose, _health_beats, _health_drip),
    "history": (_history_roman, _history_century, _history_span),
    "law": (_law_penalty, _law_estate, _law_limitation),
    "math": (_math_product, _math_remainder, _math_linear, _math_series),
    "other": (_other_seconds, _other_days, _other_clock),
    "philosophy": (_philosophy_truth, _philosophy_syllogism),
    "physics": (_physics_speed, _physics_distance, _physics_kinetic, _physics_km),
    "psychology": (_psychology_mean, _psychology_median, _psychology_range),
}


def _mmlu_row(rng: Rng, index: int) -> Row | None:
    category = sorted(MMLU_CATEGORIES)[index % len(MMLU_CATEGORIES)]
    item = rng.choice(MMLU_CATEGORIES[category])(rng)
    if item is None:
        return None
    options, position = _choices(rng, item, 10)
    return {
        "answer": string.ascii_uppercase[position],
        "answer_index": position,
        "category": category,
        "options": options,
        "question": item.question,
        "question_id": _native_id(index),
        "src": GENERATOR,
    }


# gpqa-diamond: four-option multi-step questions in three domains


def _gp_height(r: Rng) -> Numeric:
    speed = 10 * r.randint(1, 12)
    return Numeric(
        f"A ball is thrown straight up at {speed} m/s. Ignoring air resistance and taking g = 10 m/s^2, how high "
        "above the launch point does it rise?",
        speed * speed // 20,
        (speed * speed // 10, speed // 2, speed * speed // 40, speed),
        unit="m",
        low=1,
    )


def _gp_flight(r: Rng) -> Numeric:
    speed = 5 * r.randint(1, 24)
    return Numeric(
        f"A stone is launched vertically upward at {speed} m/s from ground level. Ignoring air resistance and taking "
        "g = 10 m/s^2, how many seconds pass before it lands again?",
        speed // 5,
        (speed // 10 if speed % 10 == 0 else speed // 5 + 1, speed * 2, speed // 5 + 2),
        unit="s",
        low=1,
    )


def _gp_springs(r: Rng) -> Numeric:
    t = r.randint(1, 4)
    result = t * r.randint(2, 60)
    a, b = result * (t + 1), result * (t + 1) // t
    return Numeric(
        f"Two springs of stiffness {a} N/m and {b} N/m are joined end to end (in series). What is the stiffness of "
        "the combination?",
        result,
        (a + b, abs(a - b) or a, (a + b) // 2),
        unit="N/m",
        low=1,
    )


def _gp_collision(r: Rng) -> Numeric:
    m1, k, final = r.randint(1, 20), r.randint(1, 5), r.randint(1, 15)
    m2, speed = m1 * k, (1 + k) * final
    return Numeric(
        f"A {m1} kg cart moving at {speed} m/s collides with a stationary {m2} kg cart and the two stick together. "
        "What is their common speed just after the collision?",
        final,
        (speed, speed // 2 if speed // 2 != final else speed + 1, final * k or final + 2),
        unit="m/s",
        low=1,
    )


def _gp_pendulum(r: Rng) -> Numeric:
    k = r.randint(2, 12)
    return Numeric(
        f"The length of a simple pendulum is multiplied by {k * k} (small oscillations, same location). By what "
        "factor is its period multiplied?",
        k,
        (k * k, k * k * k * k, 2 * k),
        low=2,
        show=lambda v: f"by a factor of {v}",
    )


def _gp_wavelength(r: Rng) -> Numeric:
    frequency, wavelength = r.randint(10, 500), r.randint(2, 200)
    speed = frequency * wavelength / 100
    return Numeric(
        f"A wave of frequency {frequency} Hz travels at {speed:g} m/s. What is its wavelength?",
        wavelength,
        (wavelength * 2, wavelength // 2 or 1, wavelength + 10),
        unit="cm",
        low=1,
    )


def _gp_dilution(r: Rng) -> Numeric:
    final, factor, volume = r.randint(2, 200), r.randint(2, 20), r.randint(5, 50)
    return Numeric(
        f"{volume} mL of a {final * factor / 1000:g} M solution is diluted with water to {volume * factor} mL. What is "
        "the new concentration?",
        final,
        (final * factor, final * factor * factor, final + factor),
        unit="mM",
        low=1,
    )


def _gp_half_life(r: Rng) -> Numeric:
    remaining, k, half_life = r.randint(1, 40), r.randint(2, 6), r.randint(2, 90)
    start = remaining * 2**k
    return Numeric(
        f"A sample holds {start} g of a radioactive isotope whose half-life is {half_life} days. How many grams of "
        f"the isotope remain after {k * half_life} days?",
        remaining,
        (
            start // k,
            remaining * 2,
            max(remaining // 2, 1) if remaining > 1 else 3,
            start // (2 * k),
        ),
        unit="g",
        low=1,
    )


def _gp_ph(r: Rng) -> Numeric:
    n, volume = r.randint(1, 5), 10 * r.randint(1, 100)
    if r.random() < 0.5:
        return Numeric(
            f"{volume} mL of hydrochloric acid at a concentration of 1e-{n} mol/L is prepared at 25 °C. What is its pH?",
            n,
            (14 - n, n + 1, n - 1 if n > 1 else n + 2),
            low=0,
        )
    return Numeric(
        f"{volume} mL of sodium hydroxide solution at a concentration of 1e-{n} mol/L is prepared at 25 °C. What is its pH?",
        14 - n,
        (n, 13 - n, 15 - n),
        low=0,
    )


_REACTIONS = (
    ("N2 + 3 H2 -> 2 NH3", {"N2": 1, "H2": 3, "NH3": 2}),
    ("2 H2 + O2 -> 2 H2O", {"H2": 2, "O2": 1, "H2O": 2}),
    ("CH4 + 2 O2 -> CO2 + 2 H2O", {"CH4": 1, "O2": 2, "CO2": 1, "H2O": 2}),
    ("2 C2H6 + 7 O2 -> 4 CO2 + 6 H2O", {"C2H6": 2, "O2": 7, "CO2": 4, "H2O": 6}),
    ("C3H8 + 5 O2 -> 3 CO2 + 4 H2O", {"C3H8": 1, "O2": 5, "CO2": 3, "H2O": 4}),
)


def _gp_stoichiometry(r: Rng) -> Numeric:
    equation, coefficients = r.choice(_REACTIONS)
    reactant, product = equation.split(" -> ")
    species_in = [part.split()[-1] for part in reactant.split(" + ")]
    species_out = [part.split()[-1] for part in product.split(" + ")]
    need, made = r.choice(species_in), r.choice(species_out)
    amount = coefficients[made] * r.randint(1, 30)
    answer = amount * coefficients[need] // coefficients[made]
    return Numeric(
        f"For the balanced reaction {equation}, how many moles of {need} are consumed when {amount} mol of {made} "
        "are produced?",
        answer,
        (amount, amount * coefficients[made], answer * 2, answer + coefficients[need]),
        unit="mol",
        low=1,
    )


def _gp_hardy_weinberg(r: Rng) -> Numeric:
    q, people = r.randint(1, 9), 100 * r.randint(1, 90)
    hetero = people * 2 * q * (10 - q) // 100
    return Numeric(
        f"A population of {people:,} individuals is in Hardy-Weinberg equilibrium for one gene, and the recessive "
        f"allele has frequency 0.{q}. How many individuals are expected to be heterozygous?",
        hetero,
        (
            people * q * q // 100,
            people * (10 - q) ** 2 // 100,
            people * q // 10,
            people * 2 * q // 10,
        ),
        show=lambda v: f"{v:,}",
    )


def _gp_chargaff(r: Rng) -> Numeric:
    adenine = r.randint(10, 40)
    base = r.choice(("guanine", "cytosine", "thymine"))
    value = adenine if base == "thymine" else 50 - adenine
    return Numeric(
        f"A double-stranded DNA sample is {adenine}% adenine. What percentage of its bases are {base}?",
        value,
        (100 - 2 * adenine, 100 - adenine, 50 + adenine, adenine, 50 - adenine, 2 * adenine),
        show=lambda v: f"{v}%",
    )


def _gp_gametes(r: Rng) -> Numeric:
    chromosomes = 2 * r.randint(3, 45)
    return Numeric(
        f"The somatic cells of a diploid organism hold {chromosomes} chromosomes. How many chromosomes does each of "
        "its gametes hold after normal meiosis?",
        chromosomes // 2,
        (chromosomes, 2 * chromosomes, chromosomes // 2 + 1),
        low=1,
    )


def _gp_divisions(r: Rng) -> Numeric:
    rounds = r.randint(3, 20)
    return Numeric(
        f"A single cell and all of its descendants divide by mitosis once per round, with no cell death. How many "
        f"cells are there after {rounds} rounds?",
        2**rounds,
        (2 * rounds, 2 ** (rounds - 1), 2 ** (rounds + 1), rounds * rounds),
        show=lambda v: f"{v:,}",
    )


def _gp_codon_space(r: Rng) -> Numeric:
    bases, length = r.randint(2, 6), r.randint(2, 5)
    return Numeric(
        f"A synthetic genetic system uses an alphabet of {bases} bases and codons of {length} bases. How many "
        "distinct codons are possible?",
        bases**length,
        (
            bases * length,
            length**bases if length**bases != bases**length else bases**length + 1,
            bases ** (length - 1),
        ),
        low=1,
    )


GPQA_DOMAINS: dict[str, tuple[Callable[[Rng], Numeric], ...]] = {
    "Biology": (_gp_hardy_weinberg, _gp_chargaff, _gp_gametes, _gp_divisions, _gp_codon_space),
    "Chemistry": (_gp_dilution, _gp_half_life, _gp_ph, _gp_stoichiometry),
    "Physics": (_gp_height, _gp_flight, _gp_springs, _gp_collision, _gp_pendulum, _gp_wavelength),
}


def _gpqa_row(rng: Rng, index: int) -> Row:
    domain = sorted(GPQA_DOMAINS)[index % len(GPQA_DOMAINS)]
    item = rng.choice(GPQA_DOMAINS[domain])(rng)
    options, position = _choices(rng, item, 4)
    return {
        "correct_answer": options[position],
        "domain": domain,
        "incorrect_answers": [text for i, text in enumerate(options) if i != position],
        "question": item.question,
        "record_id": _native_id(index),
    }


# hle and simpleqa-verified: short answers the generator computes (judged by reference)

QA = tuple[str, str]


@functools.cache
def _primes(limit: int = 20_000) -> tuple[int, ...]:
    sieve = bytearray([1]) * (limit + 1)
    sieve[0:2] = b"\x00\x00"
    for p in range(2, math.isqrt(limit) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytearray(len(range(p * p, limit + 1, p)))
    return tuple(i for i, flag in enumerate(sieve) if flag)


def _divisors(n: int) -> int:
    count = 0
    for d in range(1, math.isqrt(n) + 1):
        if n % d == 0:
            count += 1 if d * d == n else 2
    return count


def _hle_power_mod(r: Rng) -> QA:
    a, b, m = r.randint(2, 60), r.randint(20, 999), r.choice(_primes()[3:40])
    return (f"What is the remainder when {a}^{b} is divided by {m}?", str(pow(a, b, m)))


def _hle_divisors(r: Rng) -> QA:
    n = r.randint(100, 200_000)
    return (f"How many positive divisors does {n} have?", str(_divisors(n)))


def _hle_trailing(r: Rng) -> QA:
    n = r.randint(30, 20_000)
    zeros, power = 0, 5
    while power <= n:
        zeros += n // power
        power *= 5
    return (f"How many trailing zeros does {n}! (n factorial) have in base 10?", str(zeros))


def _hle_factorial_power(r: Rng) -> QA:
    p, k = r.choice((2, 3, 5, 7, 11)), r.randint(3, 60)
    n = 1
    while _legendre(n, p) < k:
        n += 1
    return (
        f"What is the smallest positive integer n such that n! is divisible by {p}^{k}?",
        str(n),
    )


def _legendre(n: int, p: int) -> int:
    total, power = 0, p
    while power <= n:
        total += n // power
        power *= p
    return total


def _hle_kth_prime(r: Rng) -> QA:
    k = r.randint(50, 2000)
    return (f"What is the {_ordinal(k)} prime number (2 is the 1st)?", str(_primes()[k - 1]))


def _hle_paths(r: Rng) -> QA:
    a, b = r.randint(3, 16), r.randint(3, 16)
    return (
        f"How many shortest lattice paths lead from (0, 0) to ({a}, {b}) using unit steps right and up?",
        str(math.comb(a + b, a)),
    )


def _hle_digit_sum(r: Rng) -> QA:
    n = r.randint(20, 400)
    return (f"What is the sum of the decimal digits of 2^{n}?", str(sum(map(int, str(2**n)))))


def _hle_fibonacci_strings(r: Rng) -> QA:
    n = r.randint(5, 45)
    a, b = 1, 2  # strings of length 0 and 1
    for _ in range(n - 1):
        a, b = b, a + b
    return (f"How many binary strings of length {n} contain no two adjacent 1s?", str(b))


def _hle_cayley(r: Rng) -> QA:
    n = r.randint(3, 14)
    return (
        f"How many distinct spanning trees does the complete graph on {n} labelled vertices have?",
        str(n ** (n - 2)),
    )


def _hle_bipartite(r: Rng) -> QA:
    a, b = r.randint(2, 40), r.randint(2, 40)
    return (
        f"A simple graph has {a + b} vertices split into parts of {a} and {b}, with an edge between every pair of "
        "vertices in different parts and no other edges. How many edges does it have?",
        str(a * b),
    )


def _hle_hamming(r: Rng) -> QA:
    length = r.randint(12, 28)
    x = "".join(r.choice("01") for _ in range(length))
    y = "".join(r.choice("01") for _ in range(length))
    distance = sum(a != b for a, b in zip(x, y, strict=True))
    return (f"What is the Hamming distance between the bit strings {x} and {y}?", str(distance))


def _hle_arrangements(r: Rng) -> QA:
    word = "".join(r.choice("abcdeklmnorst"[: r.randint(4, 13)]) for _ in range(r.randint(6, 10)))
    counts = [word.count(ch) for ch in sorted(set(word))]
    total = math.factorial(len(word))
    for count in counts:
        total //= math.factorial(count)
    return (
        f"How many distinct strings can be formed by rearranging all the letters of the string '{word}'?",
        str(total),
    )


def _hle_derangements(r: Rng) -> QA:
    n = r.randint(4, 16)
    a, b = 1, 0  # D(0), D(1)
    for k in range(2, n + 1):
        a, b = b, (k - 1) * (a + b)
    return (
        f"In how many ways can {n} letters be put into their {n} addressed envelopes so that no letter is in its "
        "own envelope?",
        str(b),
    )


HLE_CATEGORIES: dict[str, tuple[Callable[[Rng], QA], ...]] = {
    "Computer Science/AI": (_hle_fibonacci_strings, _hle_cayley, _hle_bipartite, _hle_hamming),
    "Math": (
        _hle_power_mod,
        _hle_divisors,
        _hle_trailing,
        _hle_factorial_power,
        _hle_kth_prime,
        _hle_paths,
        _hle_digit_sum,
    ),
    "Other": (_hle_arrangements, _hle_derangements),
}


def _hle_row(rng: Rng, index: int) -> Row:
    category = sorted(HLE_CATEGORIES)[index % len(HLE_CATEGORIES)]
    question, answer = rng.choice(HLE_CATEGORIES[category])(rng)
    return {
        "answer": answer,
        "answer_type": "exactMatch",
        "category": category,
        "id": _native_id(index),
        "question": question,
    }


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
    word = _word(r, r.randint(2, 5))
    return (f"How many letters does the made-up word '{word}' have?", str(len(word)))


def _qa_vowels(r: Rng) -> QA:
    word = _word(r, r.randint(3, 6))
    return (
        f"How many vowels (a, e, i, o, u) does the made-up word '{word}' contain?",
        str(sum(ch in _VOWELS for ch in word)),
    )


def _qa_reverse(r: Rng) -> QA:
    word = _word(r, r.randint(3, 4))
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


def _simpleqa_row(rng: Rng, index: int) -> Row:
    topic = sorted(SIMPLEQA_TOPICS)[index % len(SIMPLEQA_TOPICS)]
    problem, answer = rng.choice(SIMPLEQA_TOPICS[topic])(rng)
    return {"answer": answer, "id": _native_id(index), "problem": problem, "topic": topic}


# arc-agi-2: grids transformed by one hidden rule

Grid = list[list[int]]


def _grid(rng: Rng, colours: Sequence[int], height: int, width: int, density: float) -> Grid:
    return [
        [rng.choice(colours) if rng.random() < density else 0 for _ in range(width)]
        for _ in range(height)
    ]


def _gravity(grid: Grid) -> Grid:
    height = len(grid)
    columns = []
    for column in zip(*grid, strict=True):
        filled = [cell for cell in column if cell]
        columns.append([0] * (height - len(filled)) + filled)
    return [list(row) for row in zip(*columns, strict=True)]


def _arc_rule(rng: Rng) -> tuple[str, Callable[[Grid], Grid], list[int]]:
    """A rule's name, the transformation and the colours its inputs use."""
    colours = rng.sample(range(1, 10), rng.randint(2, 4))
    kind = rng.choice(
        (
            "flip-lr",
            "flip-ud",
            "transpose",
            "rotate",
            "half-turn",
            "recolour",
            "swap",
            "shift",
            "gravity",
        )
    )
    if kind == "flip-lr":
        return kind, lambda g: [row[::-1] for row in g], colours
    if kind == "flip-ud":
        return kind, lambda g: [list(row) for row in g[::-1]], colours
    if kind == "transpose":
        return kind, lambda g: [list(row) for row in zip(*g, strict=True)], colours
    if kind == "rotate":
        return kind, lambda g: [list(row) for row in zip(*g[::-1], strict=True)], colours
    if kind == "half-turn":
        return kind, lambda g: [row[::-1] for row in g[::-1]], colours
    if kind == "recolour":
        source = colours[0]
        target = rng.choice([c for c in range(1, 10) if c not in colours])
        return kind, lambda g: [[target if c == source else c for c in row] for row in g], colours
    if kind == "swap":
        a, b = colours[0], colours[1]
        return (
            kind,
            lambda g: [[b if c == a else a if c == b else c for c in row] for row in g],
            colours,
        )
    if kind == "shift":
        step = rng.randint(1, 2)
        return kind, lambda g: [row[-step:] + row[:-step] for row in g], colours
    return kind, _gravity, colours


def _arc_row(rng: Rng, index: int) -> Row | None:
    kind, rule, colours = _arc_rule(rng)
    pairs = []
    for _ in range(rng.randint(3, 4)):
        height, width = rng.randint(3, 7), rng.randint(3, 7)
        grid = _grid(rng, colours, height, width, rng.uniform(0.3, 0.6))
        if kind in ("recolour", "swap") and not any(colours[0] in row for row in grid):
            grid[rng.randrange(height)][rng.randrange(width)] = colours[0]
        output = rule(grid)
        if output == grid:
            return None
        pairs.append({"input": grid, "output": output})
    return {"id": _native_id(index), "test": pairs[-1:], "train": pairs[:-1]}


# livecodebench: templated problems; expected outputs come from running the reference solution


@dataclass(frozen=True)
class Problem:
    """A programming problem, its reference and subtly wrong solutions and its test inputs
    (stdin text, or JSON lines of arguments when ``func_name`` is set)."""

    title: str
    content: str
    difficulty: str
    reference: str
    wrong: str
    inputs: tuple[str, ...]
    func_name: str | None = None
    starter: str = ""


def _code(*lines: str) -> str:
    return "\n".join(lines)


def _starter(signature: str) -> str:
    return f"class Solution:\n    def {signature}:\n        "


def _numbers(values: Sequence[int]) -> str:
    return " ".join(map(str, values))


def _args(*values: Any) -> str:
    return "\n".join(json.dumps(value) for value in values)


def _lcb_multiples(r: Rng) -> Problem:
    k = r.randint(3, 40)
    return Problem(
        f"Multiples of {k}",
        f"Read one integer n (1 <= n <= 10^9). Print the sum of all positive multiples of {k} that are less than "
        "or equal to n (0 when there are none).",
        "easy",
        _code("n = int(input())", f"m = n // {k}", f"print({k} * m * (m + 1) // 2)"),
        _code("n = int(input())", f"print(sum(range({k}, n, {k})))"),
        (
            f"{k * r.randint(2, 60) + r.randint(1, k - 1)}\n",
            f"{k * r.randint(2, 60)}\n",
            f"{r.randint(1, k - 1)}\n",
        ),
    )


def _lcb_threshold(r: Rng) -> Problem:
    t = r.randint(5, 95)
    plain = [r.randint(0, 100) for _ in range(r.randint(5, 9))]
    edge = [r.randint(0, 100) for _ in range(r.randint(4, 8))] + [t, t]
    r.shuffle(edge)
    return Problem(
        f"Above {t}",
        "The first line holds an integer n (1 <= n <= 10^5); the second holds n integers between 0 and 100. Print "
        f"how many of them are strictly greater than {t}.",
        "easy",
        _code(
            "n = int(input())",
            "values = list(map(int, input().split()))",
            f"print(sum(1 for value in values if value > {t}))",
        ),
        _code(
            "n = int(input())",
            "values = list(map(int, input().split()))",
            f"print(sum(1 for value in values if value >= {t}))",
        ),
        tuple(f"{len(values)}\n{_numbers(values)}\n" for values in (plain, edge, [t])),
    )


def _lcb_kth_distinct(r: Rng) -> Problem:
    k, missing = r.randint(2, 4), r.choice(("NONE", "-1", "EMPTY", "0"))
    top = r.randint(50, 99)
    repeated = [top, top, *[r.randint(1, top - 1) for _ in range(r.randint(k + 1, k + 5))]]
    r.shuffle(repeated)
    return Problem(
        f"The {_ordinal(k)} largest distinct value",
        "The first line holds n (1 <= n <= 10^5); the second holds n integers. Print the "
        f"{_ordinal(k)} largest distinct value among them, or {missing} if there are fewer than {k} distinct values.",
        "medium",
        _code(
            "n = int(input())",
            "values = sorted(set(map(int, input().split())), reverse=True)",
            f"print(values[{k - 1}] if len(values) >= {k} else {missing!r})",
        ),
        _code(
            "n = int(input())",
            "values = sorted(map(int, input().split()), reverse=True)",
            f"print(values[{k - 1}] if len(values) >= {k} else {missing!r})",
        ),
        tuple(
            f"{len(values)}\n{_numbers(values)}\n"
            for values in (r.sample(range(1, 200), k + 3), repeated, [7] * (k + 1))
        ),
    )


def _lcb_recurrence(r: Rng) -> Problem:
    modulus = r.randint(97, 9973)
    a, m, c = r.randint(1, 96), r.randint(2, 9), r.randint(1, 50)
    return Problem(
        "Linear congruential sequence",
        f"A sequence is defined by a_1 = {a} and a_i = (a_(i-1) * {m} + {c}) mod {modulus} for i >= 2. Read n "
        "(1 <= n <= 10^5) and print a_n.",
        "medium",
        _code(
            "n = int(input())",
            f"value = {a}",
            "for _ in range(n - 1):",
            f"    value = (value * {m} + {c}) % {modulus}",
            "print(value)",
        ),
        _code(
            "n = int(input())",
            f"value = {a}",
            "for _ in range(n):",
            f"    value = (value * {m} + {c}) % {modulus}",
            "print(value)",
        ),
        ("1\n", f"{r.randint(5, 60)}\n", f"{r.randint(100, 3000)}\n"),
    )


def _lcb_window(r: Rng) -> Problem:
    k, largest = r.randint(2, 6), r.random() < 0.5
    word, pick = ("largest", "max") if largest else ("smallest", "min")
    name = "maxWindowSum" if largest else "minWindowSum"
    tail = [r.randint(60, 99) if largest else r.randint(-99, -60) for _ in range(k)]
    ending = [r.randint(-20, 20) for _ in range(r.randint(k + 2, k + 6))] + tail
    return Problem(
        f"{word.capitalize()} window of {k}",
        f"Given a list of integers nums with at least {k} elements, return the {word} sum of {k} consecutive elements.",
        "medium",
        _code(
            "from typing import List",
            "",
            "class Solution:",
            f"    def {name}(self, nums: List[int]) -> int:",
            f"        window = sum(nums[:{k}])",
            "        best = window",
            f"        for i in range({k}, len(nums)):",
            f"            window += nums[i] - nums[i - {k}]",
            f"            best = {pick}(best, window)",
            "        return best",
        ),
        _code(
            "from typing import List",
            "",
            "class Solution:",
            f"    def {name}(self, nums: List[int]) -> int:",
            f"        best = sum(nums[:{k}])",
            f"        for start in range(1, len(nums) - {k}):",
            f"            best = {pick}(best, sum(nums[start:start + {k}]))",
            "        return best",
        ),
        tuple(
            _args(values)
            for values in (
                [r.randint(-50, 50) for _ in range(k + 4)],
                ending,
                [r.randint(-9, 9) for _ in range(k)],
            )
        ),
        name,
        _starter(f"{name}(self, nums: List[int]) -> int"),
    )


def _lcb_smooth(r: Rng) -> Problem:
    d = r.randint(1, 25)
    gaps = [r.randint(-(d - 1), d - 1) for _ in range(r.randint(4, 7))]
    gaps.insert(r.randint(0, len(gaps)), r.choice((-d, d)))  # exactly one gap of d
    edge = [r.randint(0, 100)]
    for gap in gaps:
        edge.append(edge[-1] + gap)
    rough = [0, d + r.randint(1, 9)]
    return Problem(
        f"Steps of at most {d}",
        f"Given a list of integers nums, return True if every two adjacent elements differ by at most {d} (in "
        "absolute value), otherwise False. A list with fewer than two elements qualifies.",
        "easy",
        _code(
            "from typing import List",
            "",
            "class Solution:",
            "    def isSmooth(self, nums: List[int]) -> bool:",
            f"        return all(abs(b - a) <= {d} for a, b in zip(nums, nums[1:]))",
        ),
        _code(
            "from typing import List",
            "",
            "class Solution:",
            "    def isSmooth(self, nums: List[int]) -> bool:",
            f"        return all(abs(b - a) < {d} for a, b in zip(nums, nums[1:]))",
        ),
        (_args(rough), _args(edge), _args([r.randint(0, 9)])),
        "isSmooth",
        _starter("isSmooth(self, nums: List[int]) -> bool"),
    )


def _lcb_digits(r: Rng) -> Problem:
    base = r.randint(2, 16)
    return Problem(
        f"Digits in base {base}",
        f"Given an integer n (1 <= n <= 10^12), return the number of digits of n written in base {base}.",
        "easy",
        _code(
            "class Solution:",
            "    def digitCount(self, n: int) -> int:",
            "        count = 0",
            "        while n > 0:",
            f"            n //= {base}",
            "            count += 1",
            "        return count",
        ),
        _code(
            "class Solution:",
            "    def digitCount(self, n: int) -> int:",
            "        count = 1",
            f"        while n > {base}:",
            f"            n //= {base}",
            "            count += 1",
            "        return count",
        ),
        (_args(r.randint(2, 10**9)), _args(base ** r.randint(1, 6)), _args(1)),
        "digitCount",
        _starter("digitCount(self, n: int) -> int"),
    )


def _lcb_divisible(r: Rng) -> Problem:
    k = r.randint(2, 60)
    start = k * r.randint(1, 10**6)
    return Problem(
        f"Divisible by {k} in a range",
        f"Read two integers a and b (1 <= a <= b <= 10^12) on one line. Print how many integers x with a <= x <= b "
        f"are divisible by {k}.",
        "medium",
        _code("a, b = map(int, input().split())", f"print(b // {k} - (a - 1) // {k})"),
        _code("a, b = map(int, input().split())", f"print(b // {k} - a // {k})"),
        (
            f"{k * 3 + 1} {k * 9 + 2}\n",
            f"{start} {start + r.randint(0, 10**6)}\n",
            f"1 {r.randint(10**9, 10**12)}\n",
        ),
    )


def _lcb_block(r: Rng) -> Problem:
    letters = "".join(sorted(r.sample("abcdef", r.randint(2, 3))))
    others = "".join(ch for ch in "abcdefgh" if ch not in letters)
    mixed = "".join(r.choice(letters + others) for _ in range(r.randint(8, 14)))
    ending = (
        "".join(r.choice(others) + r.choice(letters) for _ in range(3))
        + r.choice(others)
        + "".join(r.choice(letters) for _ in range(4))
    )
    return Problem(
        f"Longest block over {{{', '.join(letters)}}}",
        "Given a string s of lowercase letters, return the length of the longest contiguous block of s made only of "
        f"the letters {', '.join(letters)} (0 if there is none).",
        "hard",
        _code(
            "class Solution:",
            "    def longestBlock(self, s: str) -> int:",
            "        best = run = 0",
            "        for ch in s:",
            f"            run = run + 1 if ch in {letters!r} else 0",
            "            best = max(best, run)",
            "        return best",
        ),
        _code(
            "class Solution:",
            "    def longestBlock(self, s: str) -> int:",
            "        best = run = 0",
            "        for ch in s:",
            f"            if ch in {letters!r}:",
            "                run += 1",
            "            else:",
            "                best = max(best, run)",
            "                run = 0",
            "        return best",
        ),
        (_args(mixed), _args(ending), _args(others[:3] * 2)),
        "longestBlock",
        _starter("longestBlock(self, s: str) -> int"),
    )


def _lcb_range_sums(r: Rng) -> Problem:
    modulus = r.randint(1000, 10**6)

    def case() -> str:
        values = [r.randint(1, 10**6) for _ in range(r.randint(5, 10))]
        queries = []
        for _ in range(r.randint(2, 4)):
            left = r.randint(1, len(values))
            queries.append(f"{left} {r.randint(left, len(values))}")
        return f"{len(values)} {len(queries)}\n{_numbers(values)}\n" + "".join(
            q + "\n" for q in queries
        )

    return Problem(
        "Range sums",
        "The first line holds n and q. The second line holds n integers. Each of the next q lines holds l and r "
        f"(1 <= l <= r <= n). For each query print the sum of elements l through r (1-based, inclusive) modulo "
        f"{modulus}, one answer per line.",
        "hard",
        _code(
            "n, q = map(int, input().split())",
            "values = list(map(int, input().split()))",
            "prefix = [0]",
            "for value in values:",
            "    prefix.append(prefix[-1] + value)",
            "for _ in range(q):",
            "    left, right = map(int, input().split())",
            f"    print((prefix[right] - prefix[left - 1]) % {modulus})",
        ),
        _code(
            "n, q = map(int, input().split())",
            "values = list(map(int, input().split()))",
            "prefix = [0]",
            "for value in values:",
            "    prefix.append(prefix[-1] + value)",
            "for _ in range(q):",
            "    left, right = map(int, input().split())",
            f"    print((prefix[right - 1] - prefix[left - 1]) % {modulus})",
        ),
        (case(), case(), case()),
    )


def _lcb_rotate(r: Rng) -> Problem:
    k, right = r.randint(3, 9), r.random() < 0.5
    name = "rotateRight" if right else "rotateLeft"
    direction = "right" if right else "left"
    if right:
        body = [
            "        shift = {k} % len(nums)",
            "        return nums[-shift:] + nums[:-shift] if shift else list(nums)",
        ]
        wrong = [f"        return nums[-{k}:] + nums[:-{k}]"]
    else:
        body = ["        shift = {k} % len(nums)", "        return nums[shift:] + nums[:shift]"]
        wrong = [f"        return nums[{k}:] + nums[:{k}]"]
    head = [
        "from typing import List",
        "",
        "class Solution:",
        f"    def {name}(self, nums: List[int]) -> List[int]:",
        "        if not nums:",
        "            return nums",
    ]
    short = [r.randint(0, 9) for _ in range(r.choice([n for n in range(2, k) if k % n]))]
    return Problem(
        f"Rotate {direction} by {k}",
        f"Given a list nums, return it rotated {direction} by {k} positions (one position at a time, {k} times). "
        f"The list may be shorter than {k}; an empty list stays empty.",
        "easy",
        _code(*head, *(line.replace("{k}", str(k)) for line in body)),
        _code(*head, *wrong),
        (_args([r.randint(0, 99) for _ in range(k + r.randint(1, 5))]), _args(short), _args([])),
        name,
        _starter(f"{name}(self, nums: List[int]) -> List[int]"),
    )


LCB_FAMILIES: tuple[Callable[[Rng], Problem], ...] = (
    _lcb_multiples,
    _lcb_threshold,
    _lcb_kth_distinct,
    _lcb_recurrence,
    _lcb_window,
    _lcb_smooth,
    _lcb_digits,
    _lcb_divisible,
    _lcb_block,
    _lcb_range_sums,
    _lcb_rotate,
)


def _exec(code: str, namespace: dict[str, Any]) -> None:
    exec(compile(code, "<synthetic solution>", "exec"), namespace)


def run_stdin_solution(code: str, text: str) -> str:
    """The standard output of a generated stdin solution on ``text`` (run in this process)."""
    captured = io.StringIO()
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        with contextlib.redirect_stdout(captured):
            _exec(code, {"__name__": "__main__"})
    finally:
        sys.stdin = saved
    return captured.getvalue()


def run_function_solution(code: str, func_name: str, arguments: str) -> Any:
    """The return value of a generated functional solution on JSON-lines ``arguments``."""
    namespace: dict[str, Any] = {"__name__": "synthetic"}
    _exec(code, namespace)
    target = (
        getattr(namespace["Solution"](), func_name)
        if "Solution" in namespace
        else namespace[func_name]
    )
    return target(*[json.loads(line) for line in arguments.splitlines() if line.strip()])


def _passes(problem: Problem, code: str, tests: list[dict[str, str]]) -> bool:
    """Whether ``code`` passes every test, judged the way the livecodebench grader does."""
    from pytest_srbench.core.grading.code import outputs_match

    for test in tests:
        try:
            if problem.func_name is None:
                if not outputs_match(run_stdin_solution(code, test["input"]), test["output"]):
                    return False
            else:
                got = run_function_solution(code, problem.func_name, test["input"])
                expected = json.loads(test["output"])
                if not (got == expected or json.loads(json.dumps(got)) == expected):
                    return False
        except Exception:  # a wrong solution may crash: that is a failed test
            return False
    return True


def _lcb_row(rng: Rng, index: int) -> Row | None:
    problem = rng.choice(LCB_FAMILIES)(rng)
    tests = []
    for text in problem.inputs:
        if problem.func_name is None:
            output = run_stdin_solution(problem.reference, text)
            tests.append({"input": text, "output": output, "testtype": "stdin"})
        else:
            value = run_function_solution(problem.reference, problem.func_name, text)
            tests.append({"input": text, "output": json.dumps(value), "testtype": "functional"})
    if not _passes(problem, problem.reference, tests) or _passes(problem, problem.wrong, tests):
        return None  # the wrong solution must fail at least one test
    row: Row = {
        "difficulty": problem.difficulty,
        "platform": "synthetic",
        "question_content": problem.content,
        "question_id": _native_id(index),
        "question_title": problem.title,
        "reference_solution": problem.reference,
        "starter_code": problem.starter,
        "tests": tests,
        "wrong_solution": problem.wrong,
    }
    if problem.func_name is not None:
        row["func_name"] = problem.func_name
    return row


# scicode: parameterised three-step scientific-computing problems


@dataclass(frozen=True)
class Step:
    """One sub-step: its function, what it asks, the reference body and its assert tests."""

    header: str
    description: str
    body: tuple[str, ...]
    result: str
    tests: tuple[str, ...]

    def code(self) -> str:
        return "\n".join((self.header, *self.body, f"    return {self.result}"))


def _close(call: str, expected: float) -> str:
    return f"assert abs({call} - ({expected!r})) <= 1e-6 * max(1.0, abs({expected!r}))"


def _tenths(r: Rng, low: float, high: float) -> float:
    return r.randint(round(low * 10), round(high * 10)) / 10


def _sci_oscillator(r: Rng) -> tuple[str, list[Step]]:
    samples = [
        (_tenths(r, 0.5, 50), _tenths(r, 0.1, 20), _tenths(r, -5, 5), _tenths(r, -10, 10))
        for _ in range(2)
    ]
    k, m, x, v = samples[0]
    energy = 0.5 * k * x**2 + 0.5 * m * v**2
    return (
        "A mass m (kg) on a spring of stiffness k (N/m) moves along a line; x is its displacement from rest (m) and "
        "v its velocity (m/s). Build the energy bookkeeping of this harmonic oscillator step by step. For example, "
        f"with k = {k}, m = {m}, x = {x} and v = {v} the total mechanical energy is {energy:.6g} J.",
        [
            Step(
                "def spring_force(k, x):",
                "Return the restoring force of the spring on the mass (Hooke's law).",
                ("    force = -k * x",),
                "force",
                tuple(_close(f"spring_force({k}, {x})", -k * x) for k, _, x, _ in samples),
            ),
            Step(
                "def potential_energy(k, x):",
                "Return the potential energy stored in the spring.",
                ("    energy = 0.5 * k * x ** 2",),
                "energy",
                tuple(
                    _close(f"potential_energy({k}, {x})", 0.5 * k * x**2) for k, _, x, _ in samples
                ),
            ),
            Step(
                "def total_energy(k, m, x, v):",
                "Return the total mechanical energy (potential plus kinetic).",
                ("    energy = potential_energy(k, x) + 0.5 * m * v ** 2",),
                "energy",
                tuple(
                    _close(f"total_energy({k}, {m}, {x}, {v})", 0.5 * k * x**2 + 0.5 * m * v**2)
                    for k, m, x, v in samples
                ),
            ),
        ],
    )


_GRAVITY = (("Earth", 9.81), ("the Moon", 1.62), ("Mars", 3.71), ("a test planet", 5.0))


def _sci_projectile(r: Rng) -> tuple[str, list[Step]]:
    place, g = r.choice(_GRAVITY)
    samples = [(_tenths(r, 1, 80), float(r.randint(5, 85))) for _ in range(2)]

    def parts(speed: float, angle: float) -> tuple[float, float]:
        return speed * math.cos(math.radians(angle)), speed * math.sin(math.radians(angle))

    def duration(speed: float, angle: float) -> float:
        return 2 * parts(speed, angle)[1] / g

    speed, angle = samples[0]
    return (
        f"A projectile is launched from flat ground on {place} (g = {g} m/s^2) with speed v0 (m/s) at angle_deg "
        "degrees above the horizontal; air resistance is neglected. Compute its flight step by step. For example, "
        f"launched at {speed} m/s and {angle:g} degrees it lands {parts(speed, angle)[0] * duration(speed, angle):.6g} m away.",
        [
            Step(
                "def launch_components(speed, angle_deg):",
                "Return the tuple (vx, vy) of the initial horizontal and vertical velocity.",
                (
                    "    vx = speed * np.cos(np.radians(angle_deg))",
                    "    vy = speed * np.sin(np.radians(angle_deg))",
                    "    components = (vx, vy)",
                ),
                "components",
                tuple(
                    _close(f"launch_components({s}, {a})[{i}]", parts(s, a)[i])
                    for s, a in samples
                    for i in (0, 1)
                ),
            ),
            Step(
                "def flight_time(speed, angle_deg):",
                f"Return the time (s) until the projectile lands again, with g = {g} m/s^2.",
                ("    vy = launch_components(speed, angle_deg)[1]", f"    duration = 2 * vy / {g}"),
                "duration",
                tuple(_close(f"flight_time({s}, {a})", duration(s, a)) for s, a in samples),
            ),
            Step(
                "def horizontal_range(speed, angle_deg):",
                "Return the horizontal distance (m) covered before landing.",
                (
                    "    vx = launch_components(speed, angle_deg)[0]",
                    "    distance = vx * flight_time(speed, angle_deg)",
                ),
                "distance",
                tuple(
                    _close(f"horizontal_range({s}, {a})", parts(s, a)[0] * duration(s, a))
                    for s, a in samples
                ),
            ),
        ],
    )


def _sci_decay(r: Rng) -> tuple[str, list[Step]]:
    samples = [
        (float(r.randint(100, 10**6)), _tenths(r, 0.5, 500), _tenths(r, 0, 800)) for _ in range(2)
    ]

    def rate(half_life: float) -> float:
        return math.log(2) / half_life

    def left(n0: float, half_life: float, t: float) -> float:
        return n0 * math.exp(-rate(half_life) * t)

    n0, half_life, t = samples[0]
    return (
        "A radioactive sample starts with n0 nuclei of an isotope whose half-life is half_life (in any time unit, "
        "the same for t). Describe its decay step by step. For example, with n0 = "
        f"{n0:g}, half_life = {half_life} and t = {t}, about {left(n0, half_life, t):.6g} nuclei remain.",
        [
            Step(
                "def decay_constant(half_life):",
                "Return the decay constant (per time unit).",
                ("    rate = np.log(2) / half_life",),
                "rate",
                tuple(_close(f"decay_constant({h})", rate(h)) for _, h, _ in samples),
            ),
            Step(
                "def remaining_nuclei(n0, half_life, t):",
                "Return the expected number of nuclei left at time t.",
                ("    count = n0 * np.exp(-decay_constant(half_life) * t)",),
                "count",
                tuple(
                    _close(f"remaining_nuclei({n}, {h}, {t})", left(n, h, t)) for n, h, t in samples
                ),
            ),
            Step(
                "def activity(n0, half_life, t):",
                "Return the activity (decays per time unit) at time t.",
                ("    decays = decay_constant(half_life) * remaining_nuclei(n0, half_life, t)",),
                "decays",
                tuple(
                    _close(f"activity({n}, {h}, {t})", rate(h) * left(n, h, t))
                    for n, h, t in samples
                ),
            ),
        ],
    )


def _sci_rc(r: Rng) -> tuple[str, list[Step]]:
    samples = [
        (
            _tenths(r, 1, 24),
            float(r.randint(100, 100_000)),
            r.randint(1, 999) * 1e-6,
            r.randint(1, 400) * 1e-3,
        )
        for _ in range(2)
    ]

    def voltage(v0: float, res: float, cap: float, t: float) -> float:
        return v0 * (1 - math.exp(-t / (res * cap)))

    v0, res, cap, t = samples[0]
    return (
        "A capacitor of capacitance c (F), initially uncharged, is charged through a resistor r (ohm) from a source "
        f"of voltage v0 (V). Describe the charging step by step. For example, with v0 = {v0}, r = {res:g}, "
        f"c = {cap!r} and t = {t!r} s the capacitor holds {voltage(v0, res, cap, t):.6g} V.",
        [
            Step(
                "def time_constant(r, c):",
                "Return the circuit's time constant (s).",
                ("    tau = r * c",),
                "tau",
                tuple(
                    _close(f"time_constant({res!r}, {cap!r})", res * cap)
                    for _, res, cap, _ in samples
                ),
            ),
            Step(
                "def capacitor_voltage(v0, r, c, t):",
                "Return the capacitor's voltage at time t.",
                ("    voltage = v0 * (1 - np.exp(-t / time_constant(r, c)))",),
                "voltage",
                tuple(
                    _close(
                        f"capacitor_voltage({v!r}, {res!r}, {cap!r}, {t!r})",
                        voltage(v, res, cap, t),
                    )
                    for v, res, cap, t in samples
                ),
            ),
            Step(
                "def charging_current(v0, r, c, t):",
                "Return the current (A) through the resistor at time t.",
                ("    current = (v0 - capacitor_voltage(v0, r, c, t)) / r",),
                "current",
                tuple(
                    _close(
                        f"charging_current({v!r}, {res!r}, {cap!r}, {t!r})",
                        (v - voltage(v, res, cap, t)) / res,
                    )
                    for v, res, cap, t in samples
                ),
            ),
        ],
    )


def _sci_gas(r: Rng) -> tuple[str, list[Step]]:
    samples = [
        (_tenths(r, 0.1, 10), float(r.randint(150, 900)), _tenths(r, 0.1, 5), _tenths(r, 5.1, 20))
        for _ in range(2)
    ]
    constant = 8.314

    def work(n: float, temperature: float, v1: float, v2: float) -> float:
        return n * constant * temperature * math.log(v2 / v1)

    n, temperature, v1, v2 = samples[0]
    return (
        "n moles of an ideal gas at temperature T (K) occupy a volume V (m^3); use R = 8.314 J/(mol K). Analyse an "
        f"isothermal expansion step by step. For example, {n} mol at {temperature:g} K expanding from {v1} to {v2} "
        f"m^3 does {work(n, temperature, v1, v2):.6g} J of work.",
        [
            Step(
                "def gas_pressure(n, temperature, volume):",
                "Return the pressure (Pa) from the ideal gas law.",
                ("    pressure = n * 8.314 * temperature / volume",),
                "pressure",
                tuple(
                    _close(f"gas_pressure({n}, {t}, {v})", n * constant * t / v)
                    for n, t, v, _ in samples
                ),
            ),
            Step(
                "def isothermal_work(n, temperature, v1, v2):",
                "Return the work (J) done by the gas expanding isothermally from v1 to v2.",
                ("    work = n * 8.314 * temperature * np.log(v2 / v1)",),
                "work",
                tuple(
                    _close(f"isothermal_work({n}, {t}, {a}, {b})", work(n, t, a, b))
                    for n, t, a, b in samples
                ),
            ),
            Step(
                "def heat_absorbed(n, temperature, v1, v2):",
                "Return the heat (J) the gas absorbs in that isothermal expansion (its internal energy does not change).",
                ("    heat = isothermal_work(n, temperature, v1, v2)",),
                "heat",
                tuple(
                    _close(f"heat_absorbed({n}, {t}, {a}, {b})", work(n, t, a, b))
                    for n, t, a, b in samples
                ),
            ),
        ],
    )


def _sci_statistics(r: Rng) -> tuple[str, list[Step]]:
    samples = [[_tenths(r, 0, 100) for _ in range(r.randint(4, 9))] for _ in range(2)]

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    def variance(values: list[float]) -> float:
        center = mean(values)
        return sum((value - center) ** 2 for value in values) / (len(values) - 1)

    first = samples[0]
    return (
        "Repeated measurements of one quantity are given as a list of floats. Summarise them step by step. For "
        f"example, the measurements {first} have a standard error of the mean of "
        f"{math.sqrt(variance(first) / len(first)):.6g}.",
        [
            Step(
                "def sample_mean(values):",
                "Return the arithmetic mean of the measurements.",
                ("    mean = sum(values) / len(values)",),
                "mean",
                tuple(_close(f"sample_mean({s})", mean(s)) for s in samples),
            ),
            Step(
                "def sample_variance(values):",
                "Return the unbiased sample variance (divide by n - 1).",
                (
                    "    center = sample_mean(values)",
                    "    variance = sum((v - center) ** 2 for v in values) / (len(values) - 1)",
                ),
                "variance",
                tuple(_close(f"sample_variance({s})", variance(s)) for s in samples),
            ),
            Step(
                "def standard_error(values):",
                "Return the standard error of the mean.",
                ("    error = np.sqrt(sample_variance(values) / len(values))",),
                "error",
                tuple(
                    _close(f"standard_error({s})", math.sqrt(variance(s) / len(s))) for s in samples
                ),
            ),
        ],
    )


SCICODE_FAMILIES: tuple[Callable[[Rng], tuple[str, list[Step]]], ...] = (
    _sci_oscillator,
    _sci_projectile,
    _sci_decay,
    _sci_rc,
    _sci_gas,
    _sci_statistics,
)


def _scicode_row(rng: Rng, index: int) -> Row:
    description, steps = SCICODE_FAMILIES[index % len(SCICODE_FAMILIES)](rng)
    return {
        "problem_description": description,
        "problem_id": _native_id(index),
        "reference_steps": [step.code() for step in steps],
        "required_dependencies": "import numpy as np",
        "sub_steps": [
            {
                "function_header": step.header,
                "return_line": f"    return {step.result}",
                "step_description": step.description,
                "step_number": number,
                "tests": list(step.tests),
            }
            for number, step in enumerate(steps, start=1)
        ],
    }


# terminal-bench-2.1: shell tasks on generated files; the last reference command does the work

_STEMS = ("data", "records", "inventory", "visits", "samples", "orders", "readings", "entries")
_OUTPUTS = ("report.txt", "count.txt", "result.txt", "answer.txt", "out.txt")


def _expect_lines(path: str, lines: Sequence[str]) -> str:
    quoted = " ".join(f"'{line}'" for line in lines)
    return f'test -f {path} && test "$(cat {path})" = "$(printf \'%s\\n\' {quoted})"'


def _expect_value(path: str, value: str) -> str:
    return f'test -f {path} && test "$(tr -d " \\n" < {path})" = "{value}"'


def _tb_count(r: Rng) -> Row:
    name, out = f"{r.choice(_STEMS)}.csv", r.choice(_OUTPUTS)
    rows = [f"{_surname(r)},{r.randint(1, 999)}" for _ in range(r.randint(3, 40))]
    return {
        "category": "file-operations",
        "files": {name: "name,value\n" + "".join(line + "\n" for line in rows)},
        "instruction": f"The task directory holds {name} (a header line, then one record per line). Write the "
        f"number of records (not counting the header) to a new file {out}, as its only line.",
        "reference_commands": [
            f"head -n 3 {name}",
            f"tail -n +2 {name} | wc -l | tr -d ' ' > {out}",
        ],
        "verifier": _expect_value(out, str(len(rows))),
    }


def _tb_sum(r: Rng) -> Row:
    name, out = f"{r.choice(_STEMS)}.csv", r.choice(("total.txt", "sum.txt", *_OUTPUTS))
    column, field = r.choice((("quantity", 2), ("price", 3)))
    rows = [(_word(r, 2), r.randint(1, 99), r.randint(1, 500)) for _ in range(r.randint(3, 30))]
    total = sum(quantity if field == 2 else price for _, quantity, price in rows)
    return {
        "category": "data-processing",
        "files": {name: "item,quantity,price\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows)},
        "instruction": f"{name} in the task directory has the columns item, quantity and price (with a header "
        f"line). Write the sum of the {column} column, as a plain integer, to a new file {out}.",
        "reference_commands": [
            f"head -n 3 {name}",
            f"awk -F, 'NR > 1 {{ s += ${field} }} END {{ print s }}' {name} > {out}",
        ],
        "verifier": _expect_value(out, str(total)),
    }


def _tb_filter(r: Rng) -> Row | None:
    log, out = (
        r.choice(("app.log", "server.log", "events.log", "system.log")),
        r.choice(("errors.txt", "selected.txt", "matches.txt")),
    )
    level = r.choice(("INFO", "WARN", "ERROR"))
    lines = []
    for _ in range(r.randint(6, 20)):
        clock = f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
        words = " ".join(_word(r, r.randint(1, 3)) for _ in range(r.randint(2, 5)))
        lines.append(f"{clock} {r.choice(('INFO', 'WARN', 'ERROR'))} {words}")
    chosen = [line for line in lines if line.split()[1] == level]
    if not chosen:
        return None
    return {
        "category": "text-processing",
        "files": {log: "".join(line + "\n" for line in lines)},
        "instruction": f"{log} in the task directory holds one event per line (time, level, message). Copy every "
        f"line whose level is {level} into a new file {out}, unchanged and in their original order.",
        "reference_commands": [f"grep -c ' {level} ' {log}", f"grep ' {level} ' {log} > {out}"],
        "verifier": _expect_lines(out, chosen),
    }


def _tb_unique(r: Rng) -> Row:
    source, out = (
        r.choice(("words.txt", "names.txt", "tags.txt")),
        r.choice(("unique.txt", "sorted.txt", "distinct.txt")),
    )
    pool = [_word(r, r.randint(1, 3)) for _ in range(r.randint(3, 10))]
    words = [r.choice(pool) for _ in range(r.randint(8, 25))]
    return {
        "category": "text-processing",
        "files": {source: "".join(word + "\n" for word in words)},
        "instruction": f"{source} in the task directory holds one lowercase word per line, with repeats. Write each "
        f"distinct word once, sorted alphabetically, one per line, to a new file {out}.",
        "reference_commands": [f"wc -l {source}", f"sort -u {source} > {out}"],
        "verifier": _expect_lines(out, sorted(set(words))),
    }


def _tb_archive(r: Rng) -> Row | None:
    folder = r.choice(("archive", "old_logs", "logs", "backup"))
    names = list(dict.fromkeys(_word(r, 2) for _ in range(8)))
    if len(names) < 4:
        return None
    logs, keep = names[: len(names) // 2], names[len(names) // 2 :]
    files = {f"{name}.log": f"log of {name}\n" for name in logs} | {
        f"{name}.txt": f"notes on {name}\n" for name in keep
    }
    checks = [f"test -d {folder}"] + [
        f"test -f {folder}/{n}.log && test ! -e {n}.log" for n in logs
    ]
    checks += [f"test -f {n}.txt" for n in keep]
    return {
        "category": "file-operations",
        "files": files,
        "instruction": f"Move every .log file in the task directory into a new subdirectory named {folder}, and "
        "leave all other files where they are.",
        "reference_commands": ["ls", f"mkdir -p {folder} && mv *.log {folder}/"],
        "verifier": " && ".join(checks),
    }


def _tb_top(r: Rng) -> Row:
    source, out = (
        r.choice(("scores.csv", "results.csv", "points.csv")),
        r.choice(("top.txt", "winner.txt", "best.txt")),
    )
    names = list(dict.fromkeys(_surname(r) for _ in range(r.randint(4, 15))))
    scores = r.sample(range(1, 1000), len(names))
    best = names[scores.index(max(scores))]
    return {
        "category": "data-processing",
        "files": {
            source: "name,score\n"
            + "".join(f"{n},{s}\n" for n, s in zip(names, scores, strict=True))
        },
        "instruction": f"{source} in the task directory lists names and integer scores (with a header line). Write "
        f"the name with the highest score to a new file {out}, as its only line.",
        "reference_commands": [
            f"head -n 3 {source}",
            f"tail -n +2 {source} | sort -t, -k2 -n | tail -n 1 | cut -d, -f1 > {out}",
        ],
        "verifier": _expect_value(out, best),
    }


TERMINAL_FAMILIES: tuple[Callable[[Rng], Row | None], ...] = (
    _tb_count,
    _tb_sum,
    _tb_filter,
    _tb_unique,
    _tb_archive,
    _tb_top,
)


def _terminal_row(rng: Rng, index: int) -> Row | None:
    row = TERMINAL_FAMILIES[index % len(TERMINAL_FAMILIES)](rng)
    if row is None:
        return None
    return {**row, "max_steps": 10, "task_id": _native_id(index)}


# tau3: library-desk tasks on a generated database; the plan is replayed before it is written

TAU_POLICY = (
    "You are the lending desk assistant of a public library. Verify the member id before any change. "
    "Members with unpaid fines cannot borrow until the fine is paid, and you record a payment only "
    "after the member agrees to it. When no copy of a book is available, offer a hold. Tell the "
    "member the due date of every book you lend (loans last 21 days). Use the tools; never invent records."
)
TAU_TOOLS = ["get_member", "find_books", "checkout_book", "return_book", "pay_fine", "place_hold"]
STOP = "###STOP###"


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"arguments": arguments, "name": name}


def _library(rng: Rng) -> tuple[dict[str, Any], list[str], list[str]]:
    """A database of six books and three or four members, the book ids and the member ids."""
    titles = list(dict.fromkeys(_title(rng) for _ in range(12)))[:6]
    authors = [f"{rng.choice(_FIRST_NAMES)} {_surname(rng)}" for _ in range(3)]
    book_ids = [f"B{n}" for n in sorted(rng.sample(range(10, 99), len(titles)))]
    member_ids = [f"M{n}" for n in rng.sample(range(100, 999), rng.randint(3, 4))]
    names = rng.sample(_FIRST_NAMES, len(member_ids))
    books = {
        book_id: {
            "author": rng.choice(authors),
            "copies_available": rng.randint(0, 3),
            "title": title,
        }
        for book_id, title in zip(book_ids, titles, strict=True)
    }
    members = {
        member_id: {
            "fines_cents": rng.choice((0, 0, 25 * rng.randint(1, 40))),
            "loans": sorted(rng.sample(book_ids, rng.randint(0, 2))),
            "name": f"{name} {_surname(rng)}",
        }
        for member_id, name in zip(member_ids, names, strict=True)
    }
    return {"books": books, "holds": [], "members": members}, book_ids, member_ids


def _tau_task(rng: Rng) -> dict[str, Any] | None:
    db, book_ids, member_ids = _library(rng)
    me_id = member_ids[0]
    me = db["members"][me_id]
    name = me["name"]
    kind = rng.choice(
        ("borrow", "fine-first", "return-and-hold", "return", "pay", "hold", "borrow-two")
    )
    free = [b for b in book_ids if b not in me["loans"]]
    x, y = rng.sample(free, 2) if len(free) >= 2 else (None, None)
    if x is None or y is None:
        return None
    title_x, title_y = db["books"][x]["title"], db["books"][y]["title"]
    fine = 25 * rng.randint(2, 80)
    due = "21 days"
    user: list[str]
    plan: list[dict[str, Any]]
    expected: list[dict[str, Any]]
    required: list[str]
    if kind == "borrow":
        me["fines_cents"] = 0
        db["books"][x]["copies_available"] = rng.randint(1, 3)
        user = [
            f"Hi, I'm {name}, member {me_id}. I'd like to borrow {title_x}.",
            "Great, thank you!",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("find_books", query=title_x)]},
            {"tool_calls": [_call("checkout_book", book_id=x, member_id=me_id)]},
            {"say": f"Done: {title_x} is checked out to you and is due back in 21 days."},
            {"say": "You're welcome. Enjoy the book!"},
        ]
        expected, required = [_call("checkout_book", book_id=x, member_id=me_id)], [due]
        scenario = f"You are {name}, member {me_id}. You want to borrow the book {title_x}. Thank the agent when it is done."
    elif kind == "borrow-two":
        me["fines_cents"] = 0
        db["books"][x]["copies_available"] = rng.randint(1, 3)
        db["books"][y]["copies_available"] = rng.randint(1, 3)
        user = [
            f"Hello, {name} here (member {me_id}). Could I borrow both {title_x} and {title_y}?",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("get_member", member_id=me_id)]},
            {"tool_calls": [_call("checkout_book", book_id=x, member_id=me_id)]},
            {"tool_calls": [_call("checkout_book", book_id=y, member_id=me_id)]},
            {
                "say": f"Both {title_x} and {title_y} are checked out to you; each is due back in 21 days."
            },
        ]
        expected = [
            _call("checkout_book", book_id=x, member_id=me_id),
            _call("checkout_book", book_id=y, member_id=me_id),
        ]
        required = [due]
        scenario = f"You are {name}, member {me_id}. You want to borrow {title_x} and {title_y} in one visit."
    elif kind == "fine-first":
        me["fines_cents"] = fine
        db["books"][x]["copies_available"] = rng.randint(1, 3)
        user = [
            f"Hello, this is {name}, member {me_id}. Can I borrow {title_x}?",
            "Yes, please record the payment and lend me the book.",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("get_member", member_id=me_id)]},
            {
                "say": f"You have an unpaid fine of {fine} cents, which must be paid before you can borrow. Shall I record the payment?"
            },
            {"tool_calls": [_call("pay_fine", amount_cents=fine, member_id=me_id)]},
            {"tool_calls": [_call("checkout_book", book_id=x, member_id=me_id)]},
            {"say": f"Your fine is paid and {title_x} is checked out, due back in 21 days."},
        ]
        expected = [
            _call("pay_fine", amount_cents=fine, member_id=me_id),
            _call("checkout_book", book_id=x, member_id=me_id),
        ]
        required = ["fine", due]
        scenario = f"You are {name}, member {me_id}. You want to borrow {title_x}. If there is a fine, agree to pay it."
    elif kind == "pay":
        me["fines_cents"] = fine
        user = [
            f"Hi, {name}, member {me_id}. I'd like to settle my library fine.",
            "Yes, please record it.",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("get_member", member_id=me_id)]},
            {"say": f"Your fine is {fine} cents. Shall I record a payment of {fine} cents?"},
            {"tool_calls": [_call("pay_fine", amount_cents=fine, member_id=me_id)]},
            {"say": "Thank you, your fine is fully paid."},
        ]
        expected, required = [_call("pay_fine", amount_cents=fine, member_id=me_id)], ["fully paid"]
        scenario = f"You are {name}, member {me_id}. You want to pay your whole fine; agree when the agent states the amount."
    elif kind == "return":
        me["loans"] = sorted({*me["loans"], x})
        user = [f"Good morning, {name} (member {me_id}). I'm bringing back {title_x}.", STOP]
        plan = [
            {"tool_calls": [_call("get_member", member_id=me_id)]},
            {"tool_calls": [_call("return_book", book_id=x, member_id=me_id)]},
            {"say": f"Thank you, {title_x} is returned and no longer on your account."},
        ]
        expected, required = [_call("return_book", book_id=x, member_id=me_id)], ["returned"]
        scenario = f"You are {name}, member {me_id}. You are returning {title_x}."
    elif kind == "hold":
        db["books"][y]["copies_available"] = 0
        user = [
            f"Hi, I'm {name}, member {me_id}. Is {title_y} available?",
            "Yes, please place a hold.",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("find_books", query=title_y)]},
            {"say": f"{title_y} has no copy available right now; shall I place a hold for you?"},
            {"tool_calls": [_call("place_hold", book_id=y, member_id=me_id)]},
            {"say": f"Your hold on {title_y} is placed; we will let you know when it is back."},
        ]
        expected, required = [_call("place_hold", book_id=y, member_id=me_id)], ["hold"]
        scenario = f"You are {name}, member {me_id}. You would like {title_y}; a hold is fine if it is not available."
    else:  # return-and-hold
        me["loans"] = sorted({*me["loans"], x})
        db["books"][y]["copies_available"] = 0
        user = [
            f"Hi, {name} here, member {me_id}. I'm returning {title_x}, and I'd like {title_y}.",
            "Yes, a hold is fine.",
            STOP,
        ]
        plan = [
            {"tool_calls": [_call("return_book", book_id=x, member_id=me_id)]},
            {"tool_calls": [_call("find_books", query=title_y)]},
            {
                "say": f"I've taken back {title_x}. {title_y} has no copy available right now; shall I place a hold for you?"
            },
            {"tool_calls": [_call("place_hold", book_id=y, member_id=me_id)]},
            {"say": f"Your hold on {title_y} is placed; we will let you know when it is back."},
        ]
        expected = [
            _call("return_book", book_id=x, member_id=me_id),
            _call("place_hold", book_id=y, member_id=me_id),
        ]
        required = ["hold"]
        scenario = f"You are {name}, member {me_id}. You are returning {title_x} and would like {title_y}; a hold is fine if it is not available."
    _check_tau_plan(db, plan, expected, required)
    return {
        "domain": "library",
        "expected_actions": expected,
        "initial_db": db,
        "policy": TAU_POLICY,
        "reference_dialogue": {"agent": plan, "user": user},
        "required_outputs": required,
        "tools": list(TAU_TOOLS),
        "user_scenario": scenario,
    }


def _check_tau_plan(
    db: dict[str, Any],
    plan: list[dict[str, Any]],
    expected: list[dict[str, Any]],
    required: list[str],
) -> None:
    """Every planned tool call succeeds, the plan ends in the expected database, every required
    output is said, and dropping the last tool step (how the simulator plays a wrong agent) does
    change the final database."""
    from pytest_srbench.benchmarks.tau_library import LibraryState

    def final(steps: list[dict[str, Any]]) -> dict[str, Any]:
        state = LibraryState(copy.deepcopy(db))
        for step in steps:
            for call in step.get("tool_calls") or []:
                ok, text = state.call(call["name"], dict(call["arguments"]))
                if not ok:
                    raise SynthError(f"internal: tau plan step {call} fails: {text}")
        return state.snapshot()

    target = final([{"tool_calls": expected}])
    if final(plan) != target:
        raise SynthError("internal: the tau reference plan does not reach the expected database")
    said = " ".join(str(step.get("say", "")) for step in plan).lower()
    if any(text.lower() not in said for text in required):
        raise SynthError("internal: the tau reference plan does not say every required output")
    last = max(i for i, step in enumerate(plan) if step.get("tool_calls"))
    if final(plan[:last] + plan[last + 1 :]) == target:
        raise SynthError("internal: the tau plan's last tool step does not change the database")


def _tau_row(rng: Rng, index: int) -> Row | None:
    task = _tau_task(rng)
    return None if task is None else {**task, "task_id": _native_id(index)}


# --------------------------------------------------------------------------- suites


def _keys_of(*fields: str) -> Callable[[Row], list[str]]:
    return lambda row: [canonical_json([row[name] for name in fields])]


BUILDERS: dict[str, tuple[Callable[[Rng, int], Row | None], Callable[[Row], list[str]]]] = {
    "mmlu-pro": (_mmlu_row, _keys_of("question")),
    "gpqa-diamond": (_gpqa_row, _keys_of("question")),
    "hle": (_hle_row, _keys_of("question")),
    "simpleqa-verified": (_simpleqa_row, _keys_of("problem")),
    "arc-agi-2": (_arc_row, _keys_of("train", "test")),
    "livecodebench": (_lcb_row, _keys_of("question_title", "question_content")),
    "scicode": (_scicode_row, _keys_of("problem_description")),
    "terminal-bench-2.1": (_terminal_row, _keys_of("instruction")),
    "tau3": (
        _tau_row,
        lambda row: [
            canonical_json(["scenario", row["user_scenario"]]),
            canonical_json(["opening", row["reference_dialogue"]["user"][0]]),
        ],
    ),
}


def synth_count(benchmark: str, profile: str) -> int:
    """Rows a synthetic suite needs: the quick count, or quick plus standard (standard selects
    the block after the quick cases)."""
    if benchmark not in PROFILE_COUNTS:
        raise SynthError(f"unknown benchmark {benchmark!r} (known: {', '.join(SYNTH_BENCHMARKS)})")
    if profile not in SYNTH_PROFILES:
        raise SynthError(f"unknown profile {profile!r} (choose {' or '.join(SYNTH_PROFILES)})")
    counts = PROFILE_COUNTS[benchmark]
    return counts["quick"] + (counts["standard"] if profile == "standard" else 0)


def synth_rows(benchmark: str, count: int, seed: int = DEFAULT_SEED) -> list[Row]:
    """``count`` distinct rows of ``benchmark``, a pure function of the seed."""
    if benchmark not in BUILDERS:
        raise SynthError(f"unknown benchmark {benchmark!r} (known: {', '.join(SYNTH_BENCHMARKS)})")
    make, keys = BUILDERS[benchmark]
    rng = _rng(seed, benchmark)
    return _distinct(count, lambda index: make(rng, index), keys, benchmark)


def source_text(benchmark: str) -> str:
    return (
        f"synthetic: items procedurally generated by pytest-srbench (`srbench datasets synth`, "
        f"{GENERATOR}) in the {benchmark} row format, to exercise the harness offline; not "
        f"{benchmark} data, and scores on them do not measure {benchmark} ability"
    )


def synth_files(benchmark: str, profile: str, seed: int = DEFAULT_SEED) -> dict[str, bytes]:
    """The bytes of ``cases.jsonl`` and ``suite.json`` for one synthetic suite."""
    rows = synth_rows(benchmark, synth_count(benchmark, profile), seed)
    body = "".join(canonical_json(row) + "\n" for row in rows).encode("utf-8")
    meta = {
        "benchmark": benchmark,
        "count": len(rows),
        "license": LICENSE,
        "revision": f"synthetic-{seed}",
        "sha256": hashlib.sha256(body).hexdigest(),
        "source": source_text(benchmark),
        "synthetic": {"generator": GENERATOR, "profile": profile, "seed": seed},
        "version": SUITE_VERSION,
    }
    text = json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return {SUITE_CASES: body, SUITE_META: text.encode("utf-8")}


@dataclass(frozen=True)
class SynthSummary:
    """What one synthetic suite holds and where it was written."""

    benchmark: str
    profile: str
    seed: int
    folder: Path
    count: int
    sha256: str


def write_synthetic_suites(
    output_root: Path,
    *,
    profile: str,
    seed: int = DEFAULT_SEED,
    benchmarks: Sequence[str] | None = None,
    force: bool = False,
) -> list[SynthSummary]:
    """Write ``<output_root>/<benchmark>/`` for each benchmark (default: all nine). An existing
    folder is an error unless ``force`` (then it is replaced atomically); nothing is written
    when any folder is refused."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SynthError(f"the seed must be an integer, got {seed!r}")
    chosen = list(dict.fromkeys(benchmarks or SYNTH_BENCHMARKS))
    for benchmark in chosen:
        synth_count(benchmark, profile)
    root = Path(output_root)
    existing = [b for b in chosen if (root / b).exists() or (root / b).is_symlink()]
    if existing and not force:
        raise SynthError(
            f"{root}: refusing to overwrite existing suite folder(s) {', '.join(existing)}; "
            "pass --force to replace them"
        )
    summaries = []
    for benchmark in chosen:
        files = synth_files(benchmark, profile, seed)
        folder = root / benchmark
        publish(folder, files)
        meta = json.loads(files[SUITE_META])
        summaries.append(
            SynthSummary(benchmark, profile, seed, folder, int(meta["count"]), str(meta["sha256"]))
        )
    return summaries
