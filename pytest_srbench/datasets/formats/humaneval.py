"""HumanEval JSONL (optionally ``.jsonl.gz``) to normalised ``humaneval`` extension rows."""

from __future__ import annotations

from pathlib import Path

from pytest_srbench.datasets.formats._common import (
    Conversion,
    Row,
    UniqueIds,
    fail,
    need_id,
    need_str,
    records_from,
)


def convert_humaneval(path: Path) -> Conversion:
    """Rows ``{task_id, prompt, entry_point, test}`` plus the optional ``canonical_solution``,
    which only the built-in simulator reads (to play the case); graders never see it."""
    files, records = records_from(path)
    ids = UniqueIds("task_id")
    rows: list[Row] = []
    for record in records:
        native = need_id(record, "task_id")
        ids.add(native, record.where)
        entry_point = need_str(record, "entry_point", strip=True)
        prompt = need_str(record, "prompt")
        test = need_str(record, "test")
        if f"def {entry_point}" not in prompt:
            raise fail(record.where, f"the prompt does not define entry_point {entry_point!r}")
        if "def check(" not in test:
            raise fail(record.where, "the test defines no check(candidate) function")
        row: Row = {"task_id": native, "prompt": prompt, "entry_point": entry_point, "test": test}
        solution = record.data.get("canonical_solution")
        if isinstance(solution, str) and solution.strip():
            row["canonical_solution"] = solution
        rows.append(row)
    return Conversion(rows, files)


def read_humaneval(path: Path) -> list[Row]:
    return convert_humaneval(path).rows
