"""The fetch lock: ``<suites>/fetch-lock.json`` pins each fetched part to a commit and hashes.

``{"version": 1, "sources": {key: {benchmark, host, repo, source, revision, files: {path:
sha256}}}}``; the key is the benchmark for its main part (``scicode-targets`` for SciCode's
numeric targets). It holds no data, so a project commits it: the next fetch of the same pins
downloads nothing when the caches hold the files, and refuses a file whose bytes changed.
The file is written atomically (a temporary file renamed over it) with sorted keys.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_srbench.datasets.formats._common import DatasetError

LOCK_NAME = "fetch-lock.json"
LOCK_VERSION = 1


@dataclass(frozen=True)
class Pin:
    """One part's recorded commit and the sha256 of every file taken from it."""

    benchmark: str
    host: str
    repo: str
    source: str
    revision: str
    files: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "host": self.host,
            "repo": self.repo,
            "source": self.source,
            "revision": self.revision,
            "files": dict(sorted(self.files.items())),
        }


def lock_path(root: Path) -> Path:
    return Path(root) / LOCK_NAME


def read_lock(path: Path) -> dict[str, Pin]:
    """The pins by key; a missing file is an empty lock, a damaged one an error naming it."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"{path}: unreadable fetch lock ({error}); fix or remove it") from None
    if not isinstance(document, dict) or document.get("version") != LOCK_VERSION:
        raise DatasetError(f"{path}: not a version {LOCK_VERSION} fetch lock")
    sources = document.get("sources")
    if not isinstance(sources, dict):
        raise DatasetError(f"{path}: 'sources' must be an object")
    pins: dict[str, Pin] = {}
    for key, entry in sources.items():
        try:
            files = entry["files"]
            if not isinstance(files, dict) or not all(
                isinstance(v, str) and len(v) == 64 for v in files.values()
            ):
                raise TypeError("files must map paths to sha256 hex digests")
            pins[key] = Pin(str(entry["benchmark"]), str(entry["host"]), str(entry["repo"]),
                            str(entry["source"]), str(entry["revision"]), dict(files))  # fmt: skip
        except (KeyError, TypeError) as error:
            raise DatasetError(f"{path}: entry {key!r} is malformed ({error})") from None
    return pins


def write_lock(path: Path, pins: dict[str, Pin]) -> None:
    """Replace the lock atomically with ``pins``."""
    body = {
        "version": LOCK_VERSION,
        "sources": {key: pin.as_dict() for key, pin in sorted(pins.items())},
    }
    text = json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
