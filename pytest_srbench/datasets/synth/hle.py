"""hle rows: exact-match number-theory, counting and graph questions whose answers are computed."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from pytest_srbench.datasets.synth.common import QA, Rng, Row, native_id, ordinal


@functools.cache
def _primes(limit: int = 20_000) -> tuple[int, ...]:
    """The primes up to ``limit`` (a sieve of Eratosthenes, computed once)."""
    sieve = bytearray([1]) * (limit + 1)
    sieve[0:2] = b"\x00\x00"
    for p in range(2, math.isqrt(limit) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytearray(len(range(p * p, limit + 1, p)))
    return tuple(i for i, flag in enumerate(sieve) if flag)


def _divisors(n: int) -> int:
    """How many positive divisors ``n`` has."""
    count = 0
    for d in range(1, math.isqrt(n) + 1):
        if n % d == 0:
            count += 1 if d * d == n else 2
    return count


def _legendre(n: int, p: int) -> int:
    """The exponent of the prime ``p`` in ``n!`` (Legendre's formula)."""
    total, power = 0, p
    while power <= n:
        total += n // power
        power *= p
    return total


def _hle_power_mod(r: Rng) -> QA:
    a, b, m = r.randint(2, 60), r.randint(20, 999), r.choice(_primes()[3:40])
    return (f"What is the remainder when {a}^{b} is divided by {m}?", str(pow(a, b, m)))


def _hle_divisors(r: Rng) -> QA:
    n = r.randint(100, 200_000)
    return (f"How many positive divisors does {n} have?", str(_divisors(n)))


def _hle_trailing(r: Rng) -> QA:
    n = r.randint(30, 20_000)
    return (
        f"How many trailing zeros does {n}! (n factorial) have in base 10?",
        str(_legendre(n, 5)),
    )


def _hle_factorial_power(r: Rng) -> QA:
    p, k = r.choice((2, 3, 5, 7, 11)), r.randint(3, 60)
    n = 1
    while _legendre(n, p) < k:
        n += 1
    return (
        f"What is the smallest positive integer n such that n! is divisible by {p}^{k}?",
        str(n),
    )


def _hle_kth_prime(r: Rng) -> QA:
    k = r.randint(50, 2000)
    return (f"What is the {ordinal(k)} prime number (2 is the 1st)?", str(_primes()[k - 1]))


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


def hle_row(rng: Rng, index: int) -> Row:
    """Row ``index``: an exact-match item of the index's category (the categories take turns)."""
    category = sorted(HLE_CATEGORIES)[index % len(HLE_CATEGORIES)]
    question, answer = rng.choice(HLE_CATEGORIES[category])(rng)
    return {
        "answer": answer,
        "answer_type": "exactMatch",
        "category": category,
        "id": native_id(index),
        "question": question,
    }
