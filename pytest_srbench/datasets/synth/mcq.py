"""Numeric multiple-choice items (mmlu-pro, gpqa-diamond): an integer answer and distinct wrong options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_srbench.datasets.synth.common import Rng, SynthError


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


def draw_options(rng: Rng, item: Numeric, n: int) -> tuple[list[str], int]:
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


def parallel_pair(rng: Rng, high: int) -> tuple[int, int, int]:
    """Integers ``(combined, a, b)`` with 1/combined = 1/a + 1/b (resistors in parallel, springs
    in series); ``high`` bounds how large they are drawn."""
    t = rng.randint(1, 4)
    combined = t * rng.randint(2, high)
    return combined, combined * (t + 1), combined * (t + 1) // t
