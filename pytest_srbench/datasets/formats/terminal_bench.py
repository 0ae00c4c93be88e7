"""Terminal-Bench 2 task folders to normalised ``terminal-bench-2.1`` rows.

A task folder holds ``instruction.md``, ``task.toml`` (optional ``[metadata]`` difficulty,
category, tags), ``tests/test.sh`` (the verifier) and optionally ``environment/``. Other files
under ``tests/`` that the verifier uses go to ``metadata.verifier_files``.

A task that declares a container — ``[environment] docker_image`` in ``task.toml``, or an
``environment/Dockerfile`` (or docker-compose file) — gets a ``container`` object: the image
name, else the Dockerfile and every file of ``environment/`` as its build context (binary
files base64-encoded), with the ``[environment]`` limits (``cpus``, ``memory_mb``,
``allow_internet``, ``build_timeout_sec``); ``[verifier] timeout_sec`` becomes
``verifier_timeout_s``. Such a task runs only in its container. A task without one has the
text files of ``environment/`` seeded into its sandbox task directory.
"""

from __future__ import annotations

import base64
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
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml")
LIMITS = {"cpus": "cpus", "memory_mb": "memory_mb", "build_timeout_sec": "build_timeout_s"}


def _text_or_none(file: Path, data: bytes) -> str | None:
    """The file's text, or None when it is binary (a NUL byte, or not UTF-8)."""
    if b"\0" in data:
        return None
    try:
        return decode(file, data)
    except DatasetError:
        return None


def _text_files(root: Path, skip: set[str], used: list[Path]) -> tuple[dict[str, str], list[str]]:
    """Relative path -> text for every UTF-8 file under ``root``; binary files are listed."""
    files: dict[str, str] = {}
    binary: list[str] = []
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = file.relative_to(root).as_posix()
        if relative in skip:
            continue
        used.append(file)
        text = _text_or_none(file, read_raw(file))
        if text is None:
            binary.append(relative)
        else:
            files[relative] = text
    return files, binary


def _table(data: dict[str, Any], name: str, path: Path) -> dict[str, Any]:
    table = data.get(name) or {}
    if not isinstance(table, dict):
        raise DatasetError(f"{path}: [{name}] must be a table")
    return table


def _container(folder: Path, environment: dict[str, Any], used: list[Path]) -> Row | None:
    """The task's ``container`` object, or None when it declares no container."""
    where = folder / "task.toml"
    image = environment.get("docker_image")
    if image is not None and (not isinstance(image, str) or not image.strip()):
        raise DatasetError(f"{where}: [environment] docker_image must be a non-empty string")
    env_dir = folder / "environment"
    dockerfile = env_dir / "Dockerfile"
    compose = next((env_dir / n for n in COMPOSE_FILES if (env_dir / n).is_file()), None)
    if image is None and not dockerfile.is_file() and compose is None:
        return None
    container: Row = {"image": image.strip() if image else None}
    if dockerfile.is_file():
        used.append(dockerfile)
        container["dockerfile"] = read_text(dockerfile)
    if compose is not None:
        used.append(compose)
        container["compose"] = read_text(compose)
    if image is None and env_dir.is_dir():
        text: dict[str, str] = {}
        binary: dict[str, str] = {}
        for file in sorted(p for p in env_dir.rglob("*") if p.is_file()):
            relative = file.relative_to(env_dir).as_posix()
            if relative == "Dockerfile" or relative in COMPOSE_FILES:
                continue
            data = read_raw(file)
            used.append(file)
            decoded = _text_or_none(file, data)
            if decoded is None:
                binary[relative] = base64.b64encode(data).decode("ascii")
            else:
                text[relative] = decoded
        container["context"] = text
        if binary:
            container["context_base64"] = binary
    for key, field in LIMITS.items():
        value = environment.get(key)
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise DatasetError(f"{where}: [environment] {key} must be a positive number")
            container[field] = value
    internet = environment.get("allow_internet")
    if internet is not None:
        if not isinstance(internet, bool):
            raise DatasetError(f"{where}: [environment] allow_internet must be true or false")
        container["allow_internet"] = internet
    return container


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
    toml = _toml(folder / "task.toml")
    meta = _table(toml, "metadata", folder / "task.toml")
    container = _container(folder, _table(toml, "environment", folder / "task.toml"), used)
    verifier_timeout = _table(toml, "verifier", folder / "task.toml").get("timeout_sec")
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
    if container is not None:
        row["container"] = container
    elif (folder / "environment").is_dir():
        files, binary = _text_files(folder / "environment", NOT_SEEDED, used)
        row["files"] = files
        skipped += [f"environment/{name}" for name in binary]
    if verifier_timeout is not None:
        if isinstance(verifier_timeout, bool) or not isinstance(verifier_timeout, int | float):
            raise DatasetError(f"{folder / 'task.toml'}: [verifier] timeout_sec must be a number")
        row["verifier_timeout_s"] = float(verifier_timeout)
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
