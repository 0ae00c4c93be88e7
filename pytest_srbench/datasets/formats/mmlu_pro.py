"""MMLU-Pro release rows (JSON / JSONL) to normalised ``mmlu-pro`` rows."""

from __future__ import annotations

from pathlib import Path

from pytest_srbench.datasets.formats._common import (
    Conversion,
    Row,
    UniqueIds,
    fail,
    letter_index,
    need,
    need_id,
    need_str,
    need_str_list,
    opt_str,
    records_from,
    type_name,
)


def convert_mmlu_pro(path: Path) -> Conversion:
    """Fields: question_id, question, options, answer, answer_index, cot_content, category, src."""
    files, records = records_from(path)
    ids = UniqueIds("question_id")
    rows: list[Row] = []
    for record in records:
        native = need_id(record, "question_id")
        ids.add(native, record.where)
        options = need_str_list(record, "options")
        if not 2 <= len(options) <= 10:
            raise fail(record.where, f"options must hold 2-10 strings, got {len(options)}")
        answer = need_str(record, "answer", strip=True)
        index = letter_index(record, "answer", answer, len(options))
        if record.data.get("answer_index") is not None:
            given = need(record, "answer_index")
            if isinstance(given, bool) or not isinstance(given, int):
                raise fail(
                    record.where, f"field 'answer_index' must be an integer, got {type_name(given)}"
                )
            if given != index:
                raise fail(
                    record.where,
                    f"answer {answer!r} and answer_index {given} disagree "
                    f"({answer!r} is index {index})",
                )
        row: Row = {
            "question_id": native,
            "question": need_str(record, "question"),
            "options": options,
            "answer": answer,
            "category": need_str(record, "category", strip=True),
        }
        src = opt_str(record, "src")
        if src:
            row["metadata"] = {"src": src}
        rows.append(row)
    return Conversion(rows, files)


def read_mmlu_pro(path: Path) -> list[Row]:
    return convert_mmlu_pro(path).rows
