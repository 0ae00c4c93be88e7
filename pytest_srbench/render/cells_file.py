"""A report's cells kept outside memory: each cell is validated and rendered once to its JSON
text (as the report file holds it) and appended to an anonymous temporary file, with one
8-byte offset per cell in memory. To the JSON writer it hands that text back unchanged; to any
other reader (the gate, a comparison, the HTML page) it is a read-only sequence of cell dicts,
read from the file one page at a time. The file disappears when the object is dropped."""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import IO, Any, overload

import orjson

from pytest_srbench.render.json_report import cell_text

READ_CELLS = 500  # cells read from the file per system call


class CellsFile(Sequence[dict[str, Any]]):
    """A report's ``cells``: append while the report is built, then read (many times)."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="srbench-cells-")  # noqa: SIM115
        self._offsets = array("q", [0])
        self._unflushed = False
        self._closer = weakref.finalize(self, self._file.close)  # closed (and gone) with self

    @classmethod
    def saved(cls, path: os.PathLike[str] | str, offsets: array[int]) -> CellsFile | None:
        """Cells saved by ``copy_to`` (read-only; appending to them is an error); None when
        the offsets do not describe the file (a torn or foreign save)."""
        handle = open(path, "rb")  # noqa: SIM115 - kept open, closed with the object
        size = os.fstat(handle.fileno()).st_size
        if not offsets or offsets[0] != 0 or offsets[-1] != size:
            handle.close()
            return None
        cells = cls.__new__(cls)
        cells._file = handle
        cells._offsets = offsets
        cells._unflushed = False
        cells._closer = weakref.finalize(cells, handle.close)
        return cells

    def copy_to(self, out: IO[bytes]) -> array[int]:
        """Write every cell's text to ``out``; the offsets that ``saved`` reads it back with."""
        for _, data in self._chunks():
            out.write(data)
        return array("q", self._offsets)

    def append(self, cell: Mapping[str, Any]) -> None:
        data = cell_text(cell).encode("utf-8")
        self._file.write(data)
        self._offsets.append(self._offsets[-1] + len(data))
        self._unflushed = True

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def _read(self, start: int, stop: int) -> bytes:
        if self._unflushed:
            self._file.flush()
            self._unflushed = False
        offset = self._offsets[start]
        return os.pread(self._file.fileno(), self._offsets[stop] - offset, offset)

    def _chunks(self) -> Iterator[tuple[int, bytes]]:
        """(first cell index, bytes of up to READ_CELLS cells)."""
        for start in range(0, len(self), READ_CELLS):
            yield start, self._read(start, min(start + READ_CELLS, len(self)))

    def _raw(self) -> Iterator[bytes]:
        for start, data in self._chunks():
            base = self._offsets[start]
            for index in range(start, start + READ_CELLS):
                if index >= len(self):
                    break
                yield data[self._offsets[index] - base : self._offsets[index + 1] - base]

    def texts(self) -> Iterator[str]:
        """Each cell's JSON text, as the report file holds it."""
        for raw in self._raw():
            yield raw.decode("utf-8")

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for raw in self._raw():
            yield orjson.loads(raw)

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("cell index out of range")
        cell: dict[str, Any] = orjson.loads(self._read(index, index + 1))
        return cell

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def close(self) -> None:
        self._closer()
