"""Builders for the render tests: planned cases whose ids need escaping, some repeating an
earlier case."""

from __future__ import annotations

from pytest_srbench.core.models import Case, Message


def planned(count: int, repeat_every: int = 7) -> list[Case]:
    return [
        Case(id=f'b/q{i}"é\n', benchmark="b", messages=[Message(role="user", content="?")],
             metadata={"repeat_of": f"b/q{i - 1}"} if i % repeat_every == 3 else {})
        for i in range(count)
    ]  # fmt: skip
