"""Shared reading and checking helpers for the public-format converters; errors name file and line.

Parquet files (the Hugging Face Hub's format) are read with pyarrow, imported only when a
``.parquet`` file is met; each row becomes a record with the real column names and Python
values (lists stay lists, structs become objects, binary columns bytes).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_srbench.core.canonical import strict_json_loads
from pytest_srbench.core.errors import InputError

Row = dict[str, Any]


class DatasetError(InputError):
    """A source that cannot be converted or prepared; the message names the file and record."""


@dataclass
class Conversion:
    """What a converter produced: normalised rows plus what preparation needs to record."""

    rows: list[Row]
    source_files: list[Path]
    assets: dict[str, Path] = field(default_factory=dict)  # suite-relative path -> source file
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> rows left out


@dataclass(frozen=True)
class Record:
    """One source record and where it came from (``file line N`` or ``file record N``)."""

    data: Mapping[str, Any]
    where: str


def fail(where: str, message: str) -> DatasetError:
    return DatasetError(f"{where}: {message}")


def read_raw(path: Path) -> bytes:
    """A file's exact bytes, with a clear error when it cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path}: is a directory, expected a file") from None
    except OSError as error:
        raise DatasetError(f"{path}: cannot be read ({error.strerror})") from None
    return data


def read_bytes(path: Path) -> bytes:
    """A file's bytes, gunzipped when its name ends in ``.gz``."""
    data = read_raw(path)
    if path.name.endswith(".gz"):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise DatasetError(f"{path}: not a valid gzip file ({error})") from None
    return data


def decode(path: Path, data: bytes) -> str:
    """UTF-8 text (a leading BOM is dropped); a bad byte is reported with its line."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise DatasetError(
            f"{path} line {line}: not valid UTF-8 (byte 0x{data[error.start]:02x})"
        ) from None


def read_text(path: Path) -> str:
    return decode(path, read_bytes(path))


_loads = strict_json_loads


def parse_json(text: str, where: str) -> Any:
    try:
        return _loads(text)
    except json.JSONDecodeError as error:
        raise fail(where, f"invalid JSON ({error.msg} at column {error.colno})") from None
    except ValueError as error:
        raise fail(where, f"invalid JSON ({error})") from None


def read_json(path: Path) -> Any:
    """One JSON document; a syntax error names its line and column."""
    text = read_text(path)
    try:
        return _loads(text)
    except json.JSONDecodeError as error:
        raise DatasetError(
            f"{path} line {error.lineno}: invalid JSON ({error.msg} at column {error.colno})"
        ) from None
    except ValueError as error:
        raise DatasetError(f"{path}: invalid JSON ({error})") from None


def read_jsonl(path: Path) -> list[Record]:
    """One JSON object per non-blank line."""
    records = []
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        value = parse_json(line, where)
        if not isinstance(value, dict):
            raise fail(where, f"expected a JSON object, got {type_name(value)}")
        records.append(Record(value, where))
    return records


PARQUET_INSTALL = "pip install 'pytest-srbench[fetch]'"
RECORD_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".ndjson", ".parquet")


def read_parquet(path: Path) -> list[Record]:
    """The rows of a parquet file as records (``file row N``, counted from 1)."""
    try:
        import pyarrow.parquet as pq
        from pyarrow import ArrowException
    except ImportError:
        raise DatasetError(f"{path}: reading parquet needs pyarrow: {PARQUET_INSTALL}") from None
    if not path.is_file():
        read_raw(path)  # the usual "no such file" / "is a directory" message
    try:
        table = pq.read_table(path)
    except (ArrowException, OSError) as error:
        raise DatasetError(f"{path}: not a readable parquet file ({error})") from None
    return [
        Record(row, f"{path} row {number}") for number, row in enumerate(table.to_pylist(), start=1)
    ]


def read_records(path: Path) -> list[Record]:
    """Objects from a JSONL file, a JSON list (or ``{"data"|"rows": [...]}``), JSON lines or
    a parquet file."""
    if path.name.endswith(".parquet"):
        return read_parquet(path)
    if path.name.endswith((".jsonl", ".jsonl.gz", ".ndjson")):
        return read_jsonl(path)
    text = read_text(path)
    try:
        document = _loads(text)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":  # a .json file holding JSON lines
            return read_jsonl(path)
        raise DatasetError(
            f"{path} line {error.lineno}: invalid JSON ({error.msg} at column {error.colno})"
        ) from None
    except ValueError as error:
        raise DatasetError(f"{path}: invalid JSON ({error})") from None
    if isinstance(document, dict):
        inner = document.get("data", document.get("rows"))
        document = inner if isinstance(inner, list) else [document]
    if not isinstance(document, list):
        raise DatasetError(f"{path}: expected a list of records, got {type_name(document)}")
    records = []
    for index, value in enumerate(document, start=1):
        where = f"{path} record {index}"
        if not isinstance(value, dict):
            raise fail(where, f"expected a JSON object, got {type_name(value)}")
        records.append(Record(value, where))
    return records


def read_csv(path: Path, required: Iterable[str]) -> tuple[list[str], list[Record]]:
    """Rows of a CSV file with a header line; missing columns and ragged rows are errors."""
    text = read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise DatasetError(f"{path}: empty file (expected a CSV header line)") from None
    except csv.Error as error:
        raise DatasetError(f"{path} line 1: malformed CSV ({error})") from None
    header = [name.strip() for name in header]
    missing = [name for name in required if name not in header]
    if missing:
        raise DatasetError(
            f"{path} line 1: missing column(s) {', '.join(repr(m) for m in missing)} "
            f"(found: {', '.join(repr(h) for h in header)})"
        )
    records = []
    start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise DatasetError(f"{path} line {start}: malformed CSV ({error})") from None
        where = f"{path} line {start}"
        start = reader.line_num + 1
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise fail(where, f"has {len(cells)} fields, the header has {len(header)}")
        records.append(Record(dict(zip(header, cells, strict=True)), where))
    return header, records


def type_name(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return names.get(type(value), type(value).__name__)


def need(record: Record, key: str) -> Any:
    if key not in record.data or record.data[key] is None:
        raise fail(record.where, f"missing field {key!r}")
    return record.data[key]


def need_str(record: Record, key: str, *, strip: bool = False, empty: bool = False) -> str:
    value = need(record, key)
    if not isinstance(value, str):
        raise fail(record.where, f"field {key!r} must be a string, got {type_name(value)}")
    if strip:
        value = value.strip()
    if not empty and not value.strip():
        raise fail(record.where, f"field {key!r} is empty")
    return value


def need_cell(record: Record, column: str) -> str:
    """A CSV cell stripped of surrounding whitespace; an empty one is an error."""
    value = str(record.data[column]).strip()
    if not value:
        raise fail(record.where, f"column {column!r} is empty")
    return value


def need_id(record: Record, key: str) -> str:
    """An identifier given as a non-empty string or an integer; always returned as a string."""
    value = need(record, key)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise fail(
            record.where, f"field {key!r} must be a string or an integer, got {type_name(value)}"
        )
    text = str(value).strip()
    if not text:
        raise fail(record.where, f"field {key!r} is empty")
    return text


def opt_str(record: Record, key: str) -> str | None:
    value = record.data.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise fail(record.where, f"field {key!r} must be a string, got {type_name(value)}")
    return value


def need_list(record: Record, key: str) -> list[Any]:
    value = need(record, key)
    if not isinstance(value, list):
        raise fail(record.where, f"field {key!r} must be a list, got {type_name(value)}")
    return value


def need_str_list(record: Record, key: str, *, strip: bool = False) -> list[str]:
    values = need_list(record, key)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise fail(record.where, f"{key}[{index}] must be a string, got {type_name(value)}")
    return [value.strip() for value in values] if strip else list(values)


def letter_index(record: Record, key: str, letter: str, count: int) -> int:
    """The position of an answer letter among ``count`` options (A = 0)."""
    last = chr(ord("A") + count - 1)
    if len(letter) != 1 or not "A" <= letter <= last:
        raise fail(record.where, f"{key} {letter!r} is outside the {count} options (A-{last})")
    return ord(letter) - ord("A")


class UniqueIds:
    """Remembers where each id was first seen; a repeat is an error naming both places."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.seen: dict[str, str] = {}

    def add(self, native: str, where: str) -> None:
        first = self.seen.get(native)
        if first is not None:
            raise fail(where, f"duplicate {self.label} {native!r} (first seen at {first})")
        self.seen[native] = where


def source_files(path: Path, suffixes: tuple[str, ...]) -> list[Path]:
    """``path`` itself, or the matching files directly inside a directory (sorted by name)."""
    if path.is_dir():
        found = sorted(
            child for child in path.iterdir() if child.is_file() and child.name.endswith(suffixes)
        )
        if not found:
            raise DatasetError(f"{path}: holds no {' / '.join(suffixes)} files")
        return found
    if not path.exists():
        raise DatasetError(f"{path}: no such file or directory")
    return [path]


def records_from(path: Path) -> tuple[list[Path], list[Record]]:
    """All records of a JSON / JSONL / parquet file or of every such file in a directory."""
    files = source_files(path, RECORD_SUFFIXES)
    records: list[Record] = []
    for file in files:
        records.extend(read_records(file))
    if not records:
        raise DatasetError(f"{path}: holds no records")
    return files, records
