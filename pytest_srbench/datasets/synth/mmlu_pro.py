"""mmlu-pro rows: ten-option numeric questions, one to four templates per MMLU-Pro category.

Why one long module: it is a table of question templates (fourteen categories), not logic."""

from __future__ import annotations

import string
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from pytest_srbench.datasets.synth.common import (
    GENERATOR,
    Rng,
    Row,
    made_up_word,
    native_id,
    ordinal,
)
from pytest_srbench.datasets.synth.mcq import Numeric, draw_options, parallel_pair

_ROMAN = (
    (1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"),
    (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I"),
)  # fmt: skip


def _roman(n: int) -> str:
    """``n`` in Roman numerals (MCMXCIV)."""
    out = []
    for value, symbol in _ROMAN:
        while n >= value:
            out.append(symbol)
            n -= value
    return "".join(out)


def _formula(parts: Sequence[tuple[str, int]]) -> str:
    """A molecular formula such as C2H6O (counts of 1 unwritten, absent elements left out)."""
    return "".join(f"{element}{n if n > 1 else ''}" for element, n in parts if n > 0)


def _shuffled(rng: Rng, values: Sequence[int]) -> tuple[int, ...]:
    """``values`` in a random order."""
    out = list(values)
    rng.shuffle(out)
    return tuple(out)


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
    result, a, b = parallel_pair(r, 40)
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
        show=lambda v: f"the {ordinal(v)} century",
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
    a, b = made_up_word(r, 2), made_up_word(r, 2)
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


def mmlu_pro_row(rng: Rng, index: int) -> Row | None:
    """Row ``index``: a ten-option item of the index's category (the categories take turns);
    None when the template gave up."""
    category = sorted(MMLU_CATEGORIES)[index % len(MMLU_CATEGORIES)]
    item = rng.choice(MMLU_CATEGORIES[category])(rng)
    if item is None:
        return None
    options, position = draw_options(rng, item, 10)
    return {
        "answer": string.ascii_uppercase[position],
        "answer_index": position,
        "category": category,
        "options": options,
        "question": item.question,
        "question_id": native_id(index),
        "src": GENERATOR,
    }
