"""GPQA release CSV (e.g. ``gpqa_diamond.csv``) to normalised ``gpqa-diamond`` rows."""

from __future__ import annotations

from pathlib import Path

from pytest_srbench.datasets.formats._common import (
    Conversion,
    Row,
    UniqueIds,
    fail,
    need_cell,
    read_csv,
    source_files,
)

COLUMNS = (
    "Question",
    "Correct Answer",
    "Incorrect Answer 1",
    "Incorrect Answer 2",
    "Incorrect Answer 3",
    "Record ID",
    "High-level domain",
)


def convert_gpqa(path: Path) -> Conversion:
    """Every cell is stripped of surrounding whitespace; ``Subdomain`` goes to metadata."""
    files = source_files(path, (".csv",))
    ids = UniqueIds("Record ID")
    rows: list[Row] = []
    for file in files:
        _, records = read_csv(file, COLUMNS)
        for record in records:
            native = need_cell(record, "Record ID")
            ids.add(native, record.where)
            correct = need_cell(record, "Correct Answer")
            incorrect = [need_cell(record, f"Incorrect Answer {n}") for n in (1, 2, 3)]
            row: Row = {
                "record_id": native,
                "question": need_cell(record, "Question"),
                "correct_answer": correct,
                "incorrect_answers": incorrect,
                "domain": need_cell(record, "High-level domain"),
            }
            subdomain = str(record.data.get("Subdomain") or "").strip()
            if subdomain:
                row["metadata"] = {"subdomain": subdomain}
            rows.append(row)
    if not rows:
        raise fail(str(path), "holds no rows")
    return Conversion(rows, files)


def read_gpqa(path: Path) -> list[Row]:
    return convert_gpqa(path).rows
