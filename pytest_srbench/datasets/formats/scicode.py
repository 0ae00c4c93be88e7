"""SciCode problem rows (JSON / JSONL) to normalised ``scicode`` rows."""

from __future__ import annotations

from pathlib import Path

from pytest_srbench.datasets.formats._common import (
    Conversion,
    Record,
    Row,
    UniqueIds,
    fail,
    need_id,
    need_list,
    need_str,
    opt_str,
    records_from,
    type_name,
)


def _step(record: Record, index: int, value: object) -> Row:
    where = f"{record.where} sub_steps[{index}]"
    if not isinstance(value, dict):
        raise fail(where, f"must be an object, got {type_name(value)}")
    step = Record(value, where)
    tests = need_list(step, "test_cases")
    for number, test in enumerate(tests):
        if not isinstance(test, str):
            raise fail(where, f"test_cases[{number}] must be a string, got {type_name(test)}")
    out: Row = {
        "step_number": need_id(step, "step_number"),
        "step_description": need_str(step, "step_description_prompt"),
        "function_header": need_str(step, "function_header"),
        "tests": list(tests),
    }
    return_line = opt_str(step, "return_line")
    if return_line and return_line.strip():
        out["return_line"] = return_line
    return out


def convert_scicode(path: Path) -> Conversion:
    """``required_dependencies`` stays the release's string of import lines."""
    files, records = records_from(path)
    ids = UniqueIds("problem_id")
    rows: list[Row] = []
    for record in records:
        native = need_id(record, "problem_id")
        ids.add(native, record.where)
        steps = need_list(record, "sub_steps")
        if not steps:
            raise fail(record.where, "sub_steps is empty")
        row: Row = {
            "problem_id": native,
            "problem_description": need_str(record, "problem_description_main"),
            "required_dependencies": need_str(record, "required_dependencies", empty=True)
            if record.data.get("required_dependencies") is not None
            else "",
            "sub_steps": [_step(record, index, step) for index, step in enumerate(steps)],
        }
        name = opt_str(record, "problem_name")
        if name:
            row["metadata"] = {"problem_name": name}
        rows.append(row)
    return Conversion(rows, files)


def read_scicode(path: Path) -> list[Row]:
    return convert_scicode(path).rows
