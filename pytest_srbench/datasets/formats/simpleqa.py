"""SimpleQA / SimpleQA Verified CSV to normalised ``simpleqa-verified`` rows.

SimpleQA Verified has ``original_index, problem, answer, topic, answer_type, ...``; the
original SimpleQA has ``metadata`` (a Python-literal dict with ``topic``), ``problem`` and
``answer``, and its rows are numbered from 0 (the numbering ``original_index`` refers to).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from pytest_srbench.datasets.formats._common import (
    Conversion,
    Record,
    Row,
    UniqueIds,
    fail,
    need_cell,
    read_csv,
    source_files,
)


def _literal_metadata(record: Record) -> dict[str, Any]:
    text = str(record.data.get("metadata") or "").strip()
    if not text:
        return {}
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise fail(record.where, "column 'metadata' is not a Python dict literal") from None
    if not isinstance(value, dict):
        raise fail(record.where, "column 'metadata' must be a dict literal")
    return value


def convert_simpleqa(path: Path) -> Conversion:
    files = source_files(path, (".csv",))
    ids = UniqueIds("id")
    rows: list[Row] = []
    index = 0
    for file in files:
        header, records = read_csv(file, ("problem", "answer"))
        id_column = next((c for c in ("original_index", "id") if c in header), None)
        for record in records:
            native = need_cell(record, id_column) if id_column else str(index)
            index += 1
            ids.add(native, record.where)
            meta = _literal_metadata(record) if "metadata" in header else {}
            topic = str(record.data.get("topic") or meta.get("topic") or "").strip()
            answer_type = str(record.data.get("answer_type") or meta.get("answer_type") or "")
            row: Row = {
                "id": native,
                "problem": need_cell(record, "problem"),
                "answer": need_cell(record, "answer"),
            }
            if topic:
                row["topic"] = topic
            if answer_type.strip():
                row["metadata"] = {"answer_type": answer_type.strip()}
            rows.append(row)
    if not rows:
        raise fail(str(path), "holds no rows")
    return Conversion(rows, files)


def read_simpleqa(path: Path) -> list[Row]:
    return convert_simpleqa(path).rows
