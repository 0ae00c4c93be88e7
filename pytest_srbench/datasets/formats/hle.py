"""Humanity's Last Exam rows (JSON / JSONL) to normalised text-only ``hle`` rows."""

from __future__ import annotations

from pathlib import Path

from pytest_srbench.datasets.formats._common import (
    Conversion,
    Row,
    UniqueIds,
    fail,
    need_id,
    need_str,
    opt_str,
    records_from,
    type_name,
)

ANSWER_TYPES = ("exactMatch", "multipleChoice")


def convert_hle(path: Path) -> Conversion:
    """Rows whose ``image`` is non-empty are dropped (counted under ``image``)."""
    files, records = records_from(path)
    ids = UniqueIds("id")
    rows: list[Row] = []
    dropped = 0
    for record in records:
        native = need_id(record, "id")
        ids.add(native, record.where)
        image = record.data.get("image")
        if image not in (None, ""):
            if not isinstance(image, str):
                raise fail(record.where, f"field 'image' must be a string, got {type_name(image)}")
            dropped += 1
            continue
        answer_type = need_str(record, "answer_type", strip=True)
        if answer_type not in ANSWER_TYPES:
            raise fail(
                record.where,
                f"answer_type {answer_type!r} is not one of {', '.join(ANSWER_TYPES)}",
            )
        row: Row = {
            "id": native,
            "question": need_str(record, "question"),
            "answer": need_str(record, "answer", strip=True),
            "answer_type": answer_type,
        }
        category = opt_str(record, "category")
        if category and category.strip():
            row["category"] = category.strip()
        raw_subject = opt_str(record, "raw_subject")
        if raw_subject:
            row["metadata"] = {"raw_subject": raw_subject}
        rows.append(row)
    return Conversion(rows, files, dropped={"image": dropped} if dropped else {})


def read_hle(path: Path) -> list[Row]:
    return convert_hle(path).rows
