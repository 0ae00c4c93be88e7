"""LiveCodeBench code-generation JSONL (``test*.jsonl``) to normalised ``livecodebench`` rows.

``public_test_cases`` is a JSON string; ``private_test_cases`` is either a JSON string or
base64 of zlib of a pickle of that JSON string. The pickle is read by an unpickler that
refuses every class, so only plain strings and containers can come out of it.
"""

from __future__ import annotations

import base64
import binascii
import io
import pickle
import zlib
from pathlib import Path
from typing import Any, NoReturn

from pytest_srbench.datasets.formats._common import (
    Conversion,
    Record,
    Row,
    UniqueIds,
    fail,
    need_id,
    need_str,
    opt_str,
    parse_json,
    records_from,
    type_name,
)

TEST_TYPES = ("stdin", "functional")


class _DataOnlyUnpickler(pickle.Unpickler):
    """Loads strings, numbers and containers; any class or function reference is refused."""

    def find_class(self, module: str, name: str) -> NoReturn:
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def _unpack(text: str, where: str) -> str:
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
        raw = zlib.decompress(packed)
    except (binascii.Error, UnicodeEncodeError, zlib.error) as error:
        raise fail(where, f"neither JSON nor base64 of zlib data ({error})") from None
    try:
        value = _DataOnlyUnpickler(io.BytesIO(raw)).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as error:
        raise fail(where, f"the compressed pickle cannot be read safely ({error})") from None
    if not isinstance(value, str):
        raise fail(where, f"the compressed pickle holds {type_name(value)}, expected a JSON string")
    return value


def _tests(record: Record, key: str) -> list[dict[str, str]]:
    value = record.data.get(key)
    where = f"{record.where} {key}"
    if value is None or value == "":
        return []
    if isinstance(value, str):
        text = value.strip()
        if not text.startswith(("[", "{")):
            text = _unpack(text, where)
        value = parse_json(text, where)
    if not isinstance(value, list):
        raise fail(where, f"must be a list of tests, got {type_name(value)}")
    tests = []
    for index, test in enumerate(value):
        at = f"{where}[{index}]"
        if not isinstance(test, dict):
            raise fail(at, f"must be an object, got {type_name(test)}")
        for field in ("input", "output"):
            if not isinstance(test.get(field), str):
                raise fail(
                    at, f"field {field!r} must be a string, got {type_name(test.get(field))}"
                )
        kind = test.get("testtype", "stdin")
        if kind not in TEST_TYPES:
            raise fail(at, f"testtype {kind!r} is not one of {', '.join(TEST_TYPES)}")
        tests.append({"input": test["input"], "output": test["output"], "testtype": kind})
    return tests


def _metadata(record: Record) -> dict[str, Any]:
    value = record.data.get("metadata")
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = parse_json(value, f"{record.where} metadata")
    if not isinstance(value, dict):
        raise fail(
            record.where, f"field 'metadata' must hold a JSON object, got {type_name(value)}"
        )
    return value


def convert_livecodebench(path: Path) -> Conversion:
    """Public tests come first, then private ones; ``func_name`` is set for functional tests."""
    files, records = records_from(path)
    ids = UniqueIds("question_id")
    rows: list[Row] = []
    for record in records:
        native = need_id(record, "question_id")
        ids.add(native, record.where)
        tests = _tests(record, "public_test_cases") + _tests(record, "private_test_cases")
        if not tests:
            raise fail(record.where, "has no test cases")
        row: Row = {
            "question_id": native,
            "question_title": need_str(record, "question_title", empty=True),
            "question_content": need_str(record, "question_content"),
            "starter_code": need_str(record, "starter_code", empty=True)
            if record.data.get("starter_code") is not None
            else "",
            "difficulty": need_str(record, "difficulty", strip=True),
            "tests": tests,
        }
        func_name = _metadata(record).get("func_name")
        if any(test["testtype"] == "functional" for test in tests):
            if not isinstance(func_name, str) or not func_name:
                raise fail(record.where, "has functional tests but metadata names no func_name")
            row["func_name"] = func_name
        platform = opt_str(record, "platform")
        if platform:
            row["platform"] = platform
        extra = {
            key: record.data[key]
            for key in ("contest_id", "contest_date")
            if isinstance(record.data.get(key), str) and record.data[key]
        }
        if extra:
            row["metadata"] = extra
        rows.append(row)
    return Conversion(rows, files)


def read_livecodebench(path: Path) -> list[Row]:
    return convert_livecodebench(path).rows
