"""ARC-AGI grid answers: the final text must parse as a JSON list of rectangular integer grids
with values 0–9; correct only on an exact match with every expected test output."""

from __future__ import annotations

import json
import re
from typing import Any

Grid = list[list[int]]
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def is_grid(value: Any) -> bool:
    """A non-empty rectangular list of lists of ints 0–9 (bools are not ints here)."""
    if not isinstance(value, list) or not value:
        return False
    width = None
    for row in value:
        if not isinstance(row, list) or not row:
            return False
        if width is None:
            width = len(row)
        if len(row) != width:
            return False
        for cell in row:
            if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell <= 9:
                return False
    return True


def parse_grids(text: str) -> list[Grid] | None:
    """The answer's grids, or None when the text is not a JSON list of valid grids.

    A single grid is accepted as a one-element answer; a fenced ```json block is unwrapped.
    """
    candidate = text.strip()
    fenced = _FENCE.findall(candidate)
    if fenced:
        candidate = fenced[-1].strip()
    try:
        value = json.loads(candidate)
    except ValueError:
        return None
    if is_grid(value):
        return [value]
    if isinstance(value, list) and value and all(is_grid(grid) for grid in value):
        return list(value)
    return None


def grade_grids(text: str, expected: list[Grid]) -> tuple[bool, bool, list[Grid] | None]:
    """(correct, valid_grid, parsed)."""
    parsed = parse_grids(text)
    if parsed is None:
        return (False, False, None)
    return (parsed == expected, True, parsed)


def grid_prompt(train: list[dict[str, Grid]], tests: list[Grid]) -> str:
    """The instruction plus compact JSON of the training pairs and the test inputs."""
    compact = json.dumps(
        {"train": train, "test": [{"input": grid} for grid in tests]}, separators=(",", ":")
    )
    return (
        "Each example maps an input grid to an output grid by one hidden rule. Infer the rule "
        "from the training pairs and apply it to every test input.\n\n"
        f"{compact}\n\n"
        "Answer with only a JSON list that holds one output grid per test input, in order "
        "(for example [[[0,1],[1,0]]]). Grids are lists of rows of integers 0-9."
    )
