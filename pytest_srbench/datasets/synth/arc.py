"""arc-agi-2 rows: small colour grids transformed by one hidden rule (flip, rotate, recolour, ...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_srbench.datasets.synth.common import Rng, Row, native_id

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


def arc_row(rng: Rng, index: int) -> Row | None:
    """Row ``index``: three or four pairs under one rule, the last one the test; None when the
    rule leaves an input unchanged."""
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
    return {"id": native_id(index), "test": pairs[-1:], "train": pairs[:-1]}
