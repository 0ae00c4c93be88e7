"""Reading suite folders: ``<dir>/<benchmark>/cases.jsonl`` plus ``suite.json`` metadata.

A suite's ``suite.json`` records the benchmark, version, source, revision, licence and the
SHA-256 of the exact ``cases.jsonl`` bytes, and may say its data origin (``origin``: released,
original, synthetic or user; ``core.origins``); a mismatch, a malformed origin or a corrupt
line is an error that names the file and line. Shipped suites install with the package; a project's own
``suites/`` folder adds benchmarks or replaces a shipped one.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from pytest_srbench.core.canonical import StrictJsonError, json_loads_checked
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.origins import OriginError, check_origin, data_origin

SUITE_META = "suite.json"
SUITE_CASES = "cases.jsonl"
PREPARED_SUFFIXES = ("smoke", "quick", "standard")
REQUIRED_META = ("benchmark", "version", "source", "revision", "sha256")


class SuiteError(InputError):
    """A suite folder that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Suite:
    """One benchmark's frozen rows and their provenance."""

    benchmark: str
    path: Path
    meta: dict[str, Any]
    rows: Collection[tuple[int, dict[str, Any]]]  # (line number, row); see ``SuiteRows``

    @property
    def location(self) -> str:
        """``shipped`` (installed with the package) or ``project``."""
        return "shipped" if is_shipped(self.path) else "project"

    def origin(self) -> dict[str, Any]:
        """Where the cases came from (``core.origins.data_origin``)."""
        rows_file = self.path.name if self.path.suffix == ".json" else SUITE_CASES
        return data_origin(self.meta, self.location, rows_file)

    def provenance(self) -> dict[str, Any]:
        """What a plan records about this suite (its origin included, so a report built
        later knows it without reading the suite again)."""
        return {
            "benchmark": self.benchmark,
            "version": self.meta["version"],
            "source": self.meta["source"],
            "revision": self.meta["revision"],
            "sha256": self.meta["sha256"],
            "rows": len(self.rows),
            "location": self.location,
            "prepared": self.meta.get("prepared"),
            "assets": self.meta.get("assets"),
            "reveal_answers": self.meta.get("reveal_answers"),
            "kind": self.meta.get("kind"),
            "origin": self.origin(),
        }


def shipped_suites_dir() -> Path:
    """The suites that install with pytest-srbench."""
    return Path(str(files("pytest_srbench") / "suites"))


def is_shipped(path: Path) -> bool:
    try:
        path.resolve().relative_to(shipped_suites_dir().resolve())
    except ValueError:
        return False
    return True


def _suite_meta(folder: Path) -> dict[str, Any]:
    """A suite folder's verified ``suite.json``."""
    meta_path = folder / SUITE_META
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SuiteError(f"{meta_path}: missing (every suite folder needs {SUITE_META})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SuiteError(f"{meta_path}: not valid JSON ({error})") from None
    if not isinstance(meta, dict):
        raise SuiteError(f"{meta_path}: the top level must be a JSON object")
    missing = [key for key in REQUIRED_META if not meta.get(key)]
    if missing:
        raise SuiteError(f"{meta_path}: missing field(s) {', '.join(missing)}")
    if meta.get("origin") is not None:
        try:
            check_origin(meta["origin"])
        except OriginError as error:
            raise SuiteError(f"{meta_path}: origin: {error}") from None
    prepared = meta.get("prepared") if isinstance(meta.get("prepared"), dict) else None
    allowed = {meta["benchmark"]} | (
        {f"{meta['benchmark']}.{prepared.get('profile')}"} if prepared else set()
    )
    if folder.name not in allowed:
        raise SuiteError(
            f"{meta_path}: benchmark {meta['benchmark']!r} differs from the folder name {folder.name!r}"
        )
    return meta


def _check_assets(folder: Path, meta: dict[str, Any]) -> None:
    for relative, expected in sorted((meta.get("assets") or {}).items()):
        asset = folder / relative
        try:
            actual = hashlib.sha256(asset.read_bytes()).hexdigest()
        except OSError:
            raise SuiteError(f"{asset}: missing (listed in suite.json assets)") from None
        if actual != expected:
            raise SuiteError(
                f"{asset}: sha256 mismatch (suite.json says {expected}, the file is {actual})"
            )


def _rows_of(path: Path, sha256: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """A suite file's rows, parsed one at a time as the file is read and hashed: no copy of
    the file, its lines or its other rows is held. Once the file has been read, a hash other
    than ``sha256`` raises (before the first bad row, which is raised otherwise)."""
    hasher = hashlib.sha256()
    problem: str | None = None  # the first bad row, reported once the file's hash is right
    try:
        with open(path, "rb") as lines:
            for number, raw in enumerate(lines, start=1):
                hasher.update(raw)
                if problem is None and raw.strip():
                    row, problem = _read_row(raw, number)
                    if row is not None:
                        yield number, row
    except FileNotFoundError:
        raise SuiteError(f"{path}: missing") from None
    _check_hash(path, sha256, hasher.hexdigest())
    if problem is not None:
        raise SuiteError(f"{path} line {problem}")


def _check_hash(path: Path, expected: str, actual: str) -> None:
    if actual != expected:
        raise SuiteError(
            f"{path}: sha256 mismatch (suite.json says {expected}, the file is {actual}); "
            "the cases changed after the suite was frozen"
        )


class SuiteRows(Collection[tuple[int, dict[str, Any]]]):
    """A suite file's rows read from the file on each pass, one at a time (``_rows_of``): a
    plan renders each row once and keeps only its case, so a 100,000-row suite's parsed rows
    (about 1 kB each) are never all held. The file was hashed when the suite was opened;
    each pass hashes it again and raises if it changed since."""

    def __init__(self, path: Path, sha256: str, count: int) -> None:
        self.path = path
        self.sha256 = sha256
        self.count = count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        return _rows_of(self.path, self.sha256)

    def __contains__(self, item: object) -> bool:
        return any(item == row for row in self)


def load_suite(folder: Path) -> Suite:
    """Load and verify one suite folder, its rows read into memory."""
    meta = _suite_meta(folder)
    cases_path = folder / SUITE_CASES
    rows = tuple(_rows_of(cases_path, meta["sha256"]))
    if not rows:
        raise SuiteError(f"{cases_path}: holds no cases")
    _check_assets(folder, meta)
    return Suite(benchmark=str(meta["benchmark"]), path=folder, meta=meta, rows=rows)


def open_suite(folder: Path) -> Suite:
    """Verify one suite folder (its file hashed, its rows counted, not parsed) whose rows are
    then read from the file as they are used (``SuiteRows``; a bad row is named then)."""
    meta = _suite_meta(folder)
    cases_path = folder / SUITE_CASES
    hasher = hashlib.sha256()
    count = 0
    try:
        with open(cases_path, "rb") as lines:
            for raw in lines:
                hasher.update(raw)
                count += 1 if raw.strip() else 0
    except FileNotFoundError:
        raise SuiteError(f"{cases_path}: missing") from None
    _check_hash(cases_path, meta["sha256"], hasher.hexdigest())
    if not count:
        raise SuiteError(f"{cases_path}: holds no cases")
    _check_assets(folder, meta)
    rows = SuiteRows(cases_path, meta["sha256"], count)
    return Suite(benchmark=str(meta["benchmark"]), path=folder, meta=meta, rows=rows)


def _read_row(raw: bytes, number: int) -> tuple[dict[str, Any] | None, str | None]:
    """One line's row, or what is wrong with it (after its number)."""
    try:
        row = json_loads_checked(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, f"{number}: not valid UTF-8"
    except json.JSONDecodeError as error:
        return None, f"{number}: invalid JSON ({error.msg})"
    except StrictJsonError as error:
        return None, f"{number}: invalid JSON ({error})"
    if not isinstance(row, dict):
        return None, f"{number}: each line must be a JSON object"
    return row, None


def data_kind(folder: Path) -> str | None:
    """``origin.kind`` of a suite folder's suite.json (``synthetic`` also for the synthetic
    suites that predate ``origin``: their revision is ``synthetic-<seed>``); None if unknown."""
    try:
        meta = json.loads((folder / SUITE_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(meta, dict):
        return None
    origin = meta.get("origin")
    if isinstance(origin, dict) and isinstance(origin.get("kind"), str):
        return str(origin["kind"])
    return "synthetic" if str(meta.get("revision", "")).startswith("synthetic-") else None


def discover_suites(search: list[Path], profile: str | None = None) -> dict[str, Path]:
    """Suite folders by benchmark. A suite prepared for ``profile`` (``<benchmark>.<profile>``)
    replaces a raw one (``<benchmark>``); among raw suites a later search folder replaces an
    earlier one's, except that a synthetic suite never replaces released data."""
    raw: dict[str, Path] = {}
    prepared: dict[str, Path] = {}
    for root in search:
        if not root.is_dir():
            continue
        for child in sorted(root.iterdir()):
            if not child.is_dir() or not (child / SUITE_META).is_file():
                continue
            name, _, suffix = child.name.rpartition(".")
            if suffix not in PREPARED_SUFFIXES:
                earlier = raw.get(child.name)
                if (
                    earlier is not None
                    and data_kind(earlier) == "released"
                    and data_kind(child) == "synthetic"
                ):
                    continue
                raw[child.name] = child
            elif profile is not None and suffix == profile:
                prepared[name] = child
    return {**raw, **prepared}
