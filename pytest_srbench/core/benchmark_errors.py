"""The Benchmark Service's error type: one stable code and a safe, bounded message (pure).

Codes:

- ``BENCHMARK_DATASET_NOT_FOUND``: no controlled dataset has that id (or the id is not an id).
- ``BENCHMARK_DATASET_INVALID``: the requested dataset file is corrupt or breaks the schema.
- ``BENCHMARK_INDEX_INCOMPATIBLE``: the search index cannot serve the dataset's corpus.
- ``BENCHMARK_CASE_EVALUATION_FAILED``: one case could not be evaluated.

The message is made safe here: control characters become spaces and it is cut to
``MAX_MESSAGE_CHARS``, so a hostile file or id cannot flood or forge log lines.
"""

from __future__ import annotations

import re
from typing import Final, Literal, get_args

from pytest_srbench.core.errors import InputError

BenchmarkErrorCode = Literal[
    "BENCHMARK_DATASET_NOT_FOUND",
    "BENCHMARK_DATASET_INVALID",
    "BENCHMARK_INDEX_INCOMPATIBLE",
    "BENCHMARK_CASE_EVALUATION_FAILED",
]
ERROR_CODES: Final[tuple[str, ...]] = get_args(BenchmarkErrorCode)
MAX_MESSAGE_CHARS: Final = 600


_ABSOLUTE_PATH = re.compile(r"(?<![\w.~:/])(?:/[^\s/'\"()\[\],;:]+)+/?")


def without_paths(text: str) -> str:
    """``text`` with every absolute path cut to its last part (``…/pyproject.toml``): a public
    message names the file, never where the server keeps it."""

    def last_part(match: re.Match[str]) -> str:
        parts = [part for part in match.group(0).split("/") if part]
        return "…/" + parts[-1] if parts else match.group(0)

    return _ABSOLUTE_PATH.sub(last_part, text)


def safe_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` on one line (control characters as spaces), cut to ``limit`` characters."""
    cleaned = "".join(" " if ord(ch) < 32 or ord(ch) == 127 else ch for ch in text).strip()
    if len(cleaned) > limit:
        cleaned = cleaned[: limit - 1] + "…"
    return cleaned


class BenchmarkError(InputError):
    """A benchmark failure with a stable ``code``; ``str(error)`` is ``"{code}: {message}"``."""

    code: BenchmarkErrorCode
    message: str

    def __init__(self, code: BenchmarkErrorCode, message: str) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown benchmark error code {code!r}")
        self.code = code
        self.message = safe_message(message)
        super().__init__(f"{code}: {self.message}")

    def to_dict(self) -> dict[str, str]:
        """``{"code", "message"}``, for JSON answers and problem lists."""
        return {"code": self.code, "message": self.message}


RUN_FAILED: Final = "BENCHMARK_RUN_FAILED"
FAILED_RUN_STATUSES: Final = frozenset({"failed", "interrupted"})


def run_error(status: str, error: str | None) -> tuple[str | None, str | None]:
    """A run's public ``(error_code, error)``: ``BENCHMARK_RUN_FAILED`` for a failed or
    interrupted run (else None), and its error as a safe message without server paths."""
    code = RUN_FAILED if status in FAILED_RUN_STATUSES else None
    return code, safe_message(without_paths(error)) if error else None
