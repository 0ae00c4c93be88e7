"""Writing a report or artifact file the user named: atomically, and with one clear line
(``OutputError``) instead of a traceback when the path cannot be written."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from pytest_srbench.core.errors import InputError


class OutputError(InputError):
    """A file the user asked for cannot be written; ``str()`` is one line naming the path."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(f"cannot write {path}: {reason}")
        self.path = str(path)
        self.reason = reason


def check_output_file(path: Path | str) -> None:
    """An existing directory (``--srbench-json /``), or a path ending in a separator, is not
    a file path."""
    text = str(path)
    if text.endswith(("/", os.sep)) or Path(path).is_dir():
        raise OutputError(text, "it is a directory; give a file path")


def output_reason(path: Path, error: OSError) -> str:
    """Why ``path`` cannot be written, in words: a parent that is a file says so."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is a file, not a folder"
            break
    return error.strerror or type(error).__name__


def write_output(path: Path | str, data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically (a reader never sees half a file), creating its
    folder; any failure is an ``OutputError`` and leaves no temporary file behind."""
    write_output_chunks(path, [data])


def write_output_chunks(path: Path | str, chunks: Iterable[str | bytes]) -> None:
    """``write_output`` of text produced a piece at a time (never held whole)."""
    check_output_file(path)
    path = Path(path)
    temporary = path.with_name(path.name + f".tmp-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("wb") as handle:
            for chunk in chunks:
                handle.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        temporary.replace(path)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise OutputError(path, output_reason(path, error)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
