"""Terminal-Bench 2 task folders to normalised ``terminal-bench-2.1`` rows.

A task folder holds ``instruction.md``, ``task.toml`` (optional ``[metadata]`` difficulty,
category, tags), ``tests/test.sh`` (the verifier) and optionally ``environment/``, whose text
files (the Dockerfile and docker-compose files excepted) are seeded into the task directory.
Other files under ``tests/`` that the verifier uses go to ``metadata.verifier_files``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pytest_srbench.datasets.formats._common import (
    Conversion,
    DatasetError,
    Row,
    decode,
    read_raw,
    read_text,
)

NOT_SEEDED = {"Dockerfile", "docker-compose.yaml", "docker-compose.yml", ".dockerignore"}


def _text_files(root: Path, skip: set[str], used: list[Path]) -> tuple[dict[str, str], list[str]]:
    """Relative path -> text for every UTF-8 file under ``root``; binary files are listed."""
    files: dict[str, str] = {}
    binary: list[str] = []
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = file.relative_to(root).as_posix()
        if relative in skip:
            continue
        data = read_raw(file)
        used.append(file)
        if b"\0" in data:
            binary.append(relative)
            continue
        try:
            files[relative] = decode(file, data)
        except DatasetError:
            binary.append(relative)
    return files, binary


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as error:
        raise DatasetError(f"{path}: invalid TOML ({error})") from None


def _task(folder: Path, used: list[Path]) -> Row:
    if (folder / "task.yaml").is_file() and not (folder / "task.toml").is_file():
        raise DatasetError(
            f"{folder}: holds task.yaml, a Terminal-Bench 1 task; the Terminal-Bench 2 layout "
            "(instruction.md, task.toml, tests/test.sh) is needed"
        )
    for required in ("instruction.md", "task.toml", "tests/test.sh"):
        if not (folder / required).is_file():
            raise DatasetError(f"{folder}: missing {required} (not a Terminal-Bench 2 task folder)")
    used.extend(folder / name for name in ("instruction.md", "task.toml"))
    instruction = read_text(folder / "instruction.md")
    if not instruction.strip():
        raise DatasetError(f"{folder / 'instruction.md'}: is empty")
    meta = _toml(folder / "task.toml").get("metadata") or {}
    if not isinstance(meta, dict):
        raise DatasetError(f"{folder / 'task.toml'}: [metadata] must be a table")
    tests, binary_tests = _text_files(folder / "tests", set(), used)
    verifier = tests.pop("test.sh", None)
    if verifier is None or not verifier.strip():
        raise DatasetError(f"{folder / 'tests' / 'test.sh'}: empty or not UTF-8 text")
    row: Row = {
        "task_id": folder.name,
        "instruction": instruction,
        "files": {},
        "verifier": verifier,
    }
    skipped: list[str] = [f"tests/{name}" for name in binary_tests]
    if (folder / "environment").is_dir():
        files, binary = _text_files(folder / "environment", NOT_SEEDED, used)
        row["files"] = files
        skipped += [f"environment/{name}" for name in binary]
    category = meta.get("category")
    if isinstance(category, str) and category.strip():
        row["category"] = category.strip()
    extra: dict[str, Any] = {}
    if isinstance(meta.get("difficulty"), str):
        extra["difficulty"] = meta["difficulty"]
    if isinstance(meta.get("tags"), list):
        extra["tags"] = [str(tag) for tag in meta["tags"]]
    if tests:
        extra["verifier_files"] = tests
    if skipped:
        extra["skipped_binary_files"] = skipped
    if extra:
        row["metadata"] = extra
    return row


def convert_terminal_bench(path: Path) -> Conversion:
    """``path`` is one task folder or a folder of task folders (sorted by name)."""
    if not path.is_dir():
        raise DatasetError(f"{path}: expected a folder of Terminal-Bench 2 task folders")
    used: list[Path] = []
    if (path / "instruction.md").is_file() or (path / "task.toml").is_file():
        rows = [_task(path, used)]
    else:
        folders = sorted(child for child in path.iterdir() if child.is_dir())
        if not folders:
            raise DatasetError(f"{path}: holds no task folders")
        rows = [_task(folder, used) for folder in folders if not folder.name.startswith(".")]
    return Conversion(rows, used)


def read_terminal_bench(path: Path) -> list[Row]:
    return convert_terminal_bench(path).rows
