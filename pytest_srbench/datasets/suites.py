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
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

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
    rows: tuple[tuple[int, dict[str, Any]], ...]

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


def load_suite(folder: Path) -> Suite:
    """Load and verify one suite folder."""
    meta_path = folder / SUITE_META
    cases_path = folder / SUITE_CASES
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
    # read line by line, hashed as read: the file, its lines and its rows are never all held
    # at once (a 100,000-row suite is ~60 MB of bytes and line copies beside its rows)
    hasher = hashlib.sha256()
    rows: list[tuple[int, dict[str, Any]]] = []
    problem: str | None = None  # the first bad row, reported once the file's hash is right
    try:
        with open(cases_path, "rb") as lines:
            for number, raw in enumerate(lines, start=1):
                hasher.update(raw)
                if problem is None and raw.strip():
                    problem = _read_row(raw, number, rows)
    except FileNotFoundError:
        raise SuiteError(f"{cases_path}: missing") from None
    actual = hasher.hexdigest()
    if actual != meta["sha256"]:
        raise SuiteError(
            f"{cases_path}: sha256 mismatch (suite.json says {meta['sha256']}, the file is {actual}); "
            "the cases changed after the suite was frozen"
        )
    if problem is not None:
        raise SuiteError(f"{cases_path} line {problem}")
    if not rows:
        raise SuiteError(f"{cases_path}: holds no cases")
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
    return Suite(benchmark=str(meta["benchmark"]), path=folder, meta=meta, rows=tuple(rows))


def _read_row(raw: bytes, number: int, rows: list[tuple[int, dict[str, Any]]]) -> str | None:
    """Add one line's row to ``rows``; what is wrong with it (after its number) otherwise."""
    try:
        row = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return f"{number}: not valid UTF-8"
    except json.JSONDecodeError as error:
        return f"{number}: invalid JSON ({error.msg})"
    if not isinstance(row, dict):
        return f"{number}: each line must be a JSON object"
    rows.append((number, row))
    return None


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
