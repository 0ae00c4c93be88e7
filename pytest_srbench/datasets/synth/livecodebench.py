"""livecodebench rows: templated problems whose expected outputs come from the reference solution.

Why one long module: it is a table of problem templates, each a few lines; splitting the
table would only scatter it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_srbench.datasets.synth.common import Rng, Row, native_id, ordinal
from pytest_srbench.datasets.synth.solutions import (
    passes_tests,
    run_function_solution,
    run_stdin_solution,
)


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


def _method(signature: str, *body: str) -> str:
    """A ``class Solution`` whose one method has ``signature`` and ``body`` (after ``from typing
    import List`` when the signature uses it)."""
    typing = ("from typing import List", "") if "List[" in signature else ()
    return _code(*typing, "class Solution:", f"    def {signature}:", *body)


def _starter(signature: str) -> str:
    """The starter code of a functional problem: the method header, body left to fill in."""
    return f"class Solution:\n    def {signature}:\n        "


def _numbers(values: Sequence[int]) -> str:
    """Integers as one space-separated stdin line."""
    return " ".join(map(str, values))


def _args(*values: Any) -> str:
    """Arguments of a functional test, one JSON value per line."""
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
        f"The {ordinal(k)} largest distinct value",
        "The first line holds n (1 <= n <= 10^5); the second holds n integers. Print the "
        f"{ordinal(k)} largest distinct value among them, or {missing} if there are fewer than {k} distinct values.",
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
    signature = f"{name}(self, nums: List[int]) -> int"
    tail = [r.randint(60, 99) if largest else r.randint(-99, -60) for _ in range(k)]
    ending = [r.randint(-20, 20) for _ in range(r.randint(k + 2, k + 6))] + tail
    return Problem(
        f"{word.capitalize()} window of {k}",
        f"Given a list of integers nums with at least {k} elements, return the {word} sum of {k} consecutive elements.",
        "medium",
        _method(
            signature,
            f"        window = sum(nums[:{k}])",
            "        best = window",
            f"        for i in range({k}, len(nums)):",
            f"            window += nums[i] - nums[i - {k}]",
            f"            best = {pick}(best, window)",
            "        return best",
        ),
        _method(
            signature,
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
        _starter(signature),
    )


def _lcb_smooth(r: Rng) -> Problem:
    d = r.randint(1, 25)
    gaps = [r.randint(-(d - 1), d - 1) for _ in range(r.randint(4, 7))]
    gaps.insert(r.randint(0, len(gaps)), r.choice((-d, d)))  # exactly one gap of d
    edge = [r.randint(0, 100)]
    for gap in gaps:
        edge.append(edge[-1] + gap)
    rough = [0, d + r.randint(1, 9)]
    signature = "isSmooth(self, nums: List[int]) -> bool"
    return Problem(
        f"Steps of at most {d}",
        f"Given a list of integers nums, return True if every two adjacent elements differ by at most {d} (in "
        "absolute value), otherwise False. A list with fewer than two elements qualifies.",
        "easy",
        _method(
            signature, f"        return all(abs(b - a) <= {d} for a, b in zip(nums, nums[1:]))"
        ),
        _method(signature, f"        return all(abs(b - a) < {d} for a, b in zip(nums, nums[1:]))"),
        (_args(rough), _args(edge), _args([r.randint(0, 9)])),
        "isSmooth",
        _starter(signature),
    )


def _lcb_digits(r: Rng) -> Problem:
    base = r.randint(2, 16)
    signature = "digitCount(self, n: int) -> int"
    return Problem(
        f"Digits in base {base}",
        f"Given an integer n (1 <= n <= 10^12), return the number of digits of n written in base {base}.",
        "easy",
        _method(
            signature,
            "        count = 0",
            "        while n > 0:",
            f"            n //= {base}",
            "            count += 1",
            "        return count",
        ),
        _method(
            signature,
            "        count = 1",
            f"        while n > {base}:",
            f"            n //= {base}",
            "            count += 1",
            "        return count",
        ),
        (_args(r.randint(2, 10**9)), _args(base ** r.randint(1, 6)), _args(1)),
        "digitCount",
        _starter(signature),
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
    signature = "longestBlock(self, s: str) -> int"
    return Problem(
        f"Longest block over {{{', '.join(letters)}}}",
        "Given a string s of lowercase letters, return the length of the longest contiguous block of s made only of "
        f"the letters {', '.join(letters)} (0 if there is none).",
        "hard",
        _method(
            signature,
            "        best = run = 0",
            "        for ch in s:",
            f"            run = run + 1 if ch in {letters!r} else 0",
            "            best = max(best, run)",
            "        return best",
        ),
        _method(
            signature,
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
        _starter(signature),
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

    prefix_sums = (
        "n, q = map(int, input().split())",
        "values = list(map(int, input().split()))",
        "prefix = [0]",
        "for value in values:",
        "    prefix.append(prefix[-1] + value)",
        "for _ in range(q):",
        "    left, right = map(int, input().split())",
    )
    return Problem(
        "Range sums",
        "The first line holds n and q. The second line holds n integers. Each of the next q lines holds l and r "
        f"(1 <= l <= r <= n). For each query print the sum of elements l through r (1-based, inclusive) modulo "
        f"{modulus}, one answer per line.",
        "hard",
        _code(*prefix_sums, f"    print((prefix[right] - prefix[left - 1]) % {modulus})"),
        _code(*prefix_sums, f"    print((prefix[right - 1] - prefix[left - 1]) % {modulus})"),
        (case(), case(), case()),
    )


def _lcb_rotate(r: Rng) -> Problem:
    k, right = r.randint(3, 9), r.random() < 0.5
    name = "rotateRight" if right else "rotateLeft"
    direction = "right" if right else "left"
    signature = f"{name}(self, nums: List[int]) -> List[int]"
    if right:
        rotate = "        return nums[-shift:] + nums[:-shift] if shift else list(nums)"
        wrong = f"        return nums[-{k}:] + nums[:-{k}]"
    else:
        rotate = "        return nums[shift:] + nums[:shift]"
        wrong = f"        return nums[{k}:] + nums[:{k}]"
    empty = ("        if not nums:", "            return nums")
    short = [r.randint(0, 9) for _ in range(r.choice([n for n in range(2, k) if k % n]))]
    return Problem(
        f"Rotate {direction} by {k}",
        f"Given a list nums, return it rotated {direction} by {k} positions (one position at a time, {k} times). "
        f"The list may be shorter than {k}; an empty list stays empty.",
        "easy",
        _method(signature, *empty, f"        shift = {k} % len(nums)", rotate),
        _method(signature, *empty, wrong),
        (_args([r.randint(0, 99) for _ in range(k + r.randint(1, 5))]), _args(short), _args([])),
        name,
        _starter(signature),
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


def livecodebench_row(rng: Rng, index: int) -> Row | None:
    """Row ``index``: a problem whose tests come from running its reference solution; None when
    the wrong solution passes them all."""
    problem = rng.choice(LCB_FAMILIES)(rng)
    tests = []
    for text in problem.inputs:
        if problem.func_name is None:
            output = run_stdin_solution(problem.reference, text)
            tests.append({"input": text, "output": output, "testtype": "stdin"})
        else:
            value = run_function_solution(problem.reference, problem.func_name, text)
            tests.append({"input": text, "output": json.dumps(value), "testtype": "functional"})
    reference_passes = passes_tests(problem.reference, problem.func_name, tests)
    if not reference_passes or passes_tests(problem.wrong, problem.func_name, tests):
        return None  # the wrong solution must fail at least one test
    row: Row = {
        "difficulty": problem.difficulty,
        "platform": "synthetic",
        "question_content": problem.content,
        "question_id": native_id(index),
        "question_title": problem.title,
        "reference_solution": problem.reference,
        "starter_code": problem.starter,
        "tests": tests,
        "wrong_solution": problem.wrong,
    }
    if problem.func_name is not None:
        row["func_name"] = problem.func_name
    return row
