"""Benchmark datasets from controlled directories, addressed by id only (never by path).

``DatasetDirectory(roots)`` serves ``{dataset_id}.json`` files found directly in its roots
(no subfolders). The stem must equal the id exactly, compared on the directory listing so a
case-insensitive file system cannot answer ``RAG-smoke`` with ``rag-smoke.json``. When several
roots hold the same id the LAST root wins, even if its file is corrupt (no silent fallback).

``load`` validates the id before touching the file system, reads only the requested file and
raises ``BenchmarkError``: ``BENCHMARK_DATASET_NOT_FOUND`` for a non-id (paths are not
accepted) or an unknown id, ``BENCHMARK_DATASET_INVALID`` when that file is corrupt.
``list`` and ``problems`` scan every root and never raise: valid datasets are listed, other
``*.json`` files (corrupt, unrelated, badly named) are reported as problems.
"""

from __future__ import annotations

import builtins
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_srbench.core.benchmark_errors import BenchmarkError
from pytest_srbench.core.canonical import sha256_bytes
from pytest_srbench.core.plan.datasets import BenchmarkDataset, parse_dataset

DATASET_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
SUFFIX = ".json"


@dataclass(frozen=True)
class LoadedDataset:
    """A validated dataset, the file it came from and the SHA-256 of that file's bytes."""

    dataset: BenchmarkDataset
    path: Path
    sha256: str


def is_dataset_id(value: object) -> bool:
    """Whether ``value`` is a dataset id (a name, never a path)."""
    return isinstance(value, str) and DATASET_ID.fullmatch(value) is not None


class DatasetDirectory:
    """The controlled dataset roots, in increasing precedence."""

    def __init__(self, roots: Sequence[Path]) -> None:
        self._roots = tuple(Path(root) for root in roots)

    @property
    def roots(self) -> tuple[Path, ...]:
        return self._roots

    def _files(self, root: Path) -> dict[str, Path]:
        """Stem -> path of the regular ``*.json`` files directly in ``root`` ({} if unreadable)."""
        try:
            with os.scandir(root) as entries:
                return {
                    entry.name[: -len(SUFFIX)]: Path(entry.path)
                    for entry in entries
                    if entry.name.endswith(SUFFIX) and entry.is_file()
                }
        except OSError:
            return {}

    def _locate(self, dataset_id: str) -> Path | None:
        found = None
        for root in self._roots:
            found = self._files(root).get(dataset_id, found)
        return found

    def load(self, dataset_id: str) -> LoadedDataset:
        """The dataset named ``dataset_id``; raises ``BenchmarkError`` (module docstring)."""
        if not is_dataset_id(dataset_id):
            raise BenchmarkError(
                "BENCHMARK_DATASET_NOT_FOUND",
                f"{dataset_id!r:.140} is not a dataset id; datasets are addressed by id, "
                "paths are not accepted",
            )
        path = self._locate(dataset_id)
        searched = ", ".join(str(root) for root in self._roots) or "no directories"
        if path is None:
            raise BenchmarkError(
                "BENCHMARK_DATASET_NOT_FOUND",
                f"no dataset {dataset_id!r} (searched: {searched})",
            )
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise BenchmarkError(
                "BENCHMARK_DATASET_NOT_FOUND",
                f"dataset {dataset_id!r} disappeared while loading (searched: {searched})",
            ) from None
        except OSError as error:
            raise BenchmarkError(
                "BENCHMARK_DATASET_INVALID",
                f"dataset {dataset_id!r}: file could not be read ({error.strerror})",
            ) from None
        return LoadedDataset(parse_dataset(raw, dataset_id), path, sha256_bytes(raw))

    def _scan(self) -> tuple[builtins.list[dict[str, Any]], builtins.list[dict[str, str]]]:
        winners: dict[str, Path] = {}
        for root in self._roots:
            winners.update(self._files(root))
        listed: builtins.list[dict[str, Any]] = []
        problems: builtins.list[dict[str, str]] = []
        for stem in sorted(winners):
            path = winners[stem]
            if not is_dataset_id(stem):
                problems.append(
                    {
                        "dataset_id": stem,
                        "code": "BENCHMARK_DATASET_INVALID",
                        "message": "the file name is not a valid dataset id; it cannot be loaded",
                        "location": str(path),
                    }
                )
                continue
            try:
                loaded = self.load(stem)
            except BenchmarkError as error:
                problems.append({"dataset_id": stem, **error.to_dict(), "location": str(path)})
                continue
            dataset = loaded.dataset
            listed.append(
                {
                    "dataset_id": dataset.dataset_id,
                    "kind": dataset.kind,
                    "version": dataset.version,
                    "description": dataset.description,
                    "cases": len(dataset.cases),
                    "sha256": loaded.sha256,
                    "location": str(loaded.path),
                }
            )
        return listed, problems

    def problems(self) -> builtins.list[dict[str, str]]:
        """The ``*.json`` files that are not loadable datasets: ``dataset_id`` (the stem),
        ``code``, ``message`` and ``location``, sorted by id. Never raises."""
        return self._scan()[1]

    def list(self, kind: str | None = None) -> builtins.list[dict[str, Any]]:
        """Metadata of every loadable dataset (of ``kind`` when given), sorted by id:
        ``dataset_id``, ``kind``, ``version``, ``description``, ``cases`` (count), ``sha256``
        and ``location``. Never raises; see ``problems`` for what was skipped."""
        listed = self._scan()[0]
        return [item for item in listed if kind is None or item["kind"] == kind]
