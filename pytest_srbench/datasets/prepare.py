"""Dataset preparation: public release -> normalised rows -> seeded selection -> frozen suite folder.

``prepare`` converts a source, orders its rows per stratum with the plan's selection
(``stratified_order``, round-robin for tau3), takes the profile's block with
``select_for_profile`` and writes ``<output-root>/<benchmark>.<profile>/`` atomically: the
folder is staged under ``<output-root>/.staging/`` and renamed into place. ``write_full_suite``
writes every converted row to ``<output-root>/<benchmark>/`` instead (a run selects from it).

``suite.json`` records where the rows came from in ``origin``: ``{"kind": "released",
"source", "revision", "files": {path in source: sha256}, "license", "via"}`` for a fetched
release or a registry package, ``{"kind": "user", "source": <the given file or folder name>,
"files": {...}}`` for files a user supplied (which nothing here can verify).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pytest_srbench.core.canonical import canonical_json
from pytest_srbench.core.plan.choices import DEFAULT_SEED, PROFILES
from pytest_srbench.core.plan.selection import SelectionError, select_for_profile, stratified_order
from pytest_srbench.core.plan.srbench import PROFILE_COUNTS, PROFILE_SPLIT
from pytest_srbench.datasets.formats import FORMATS, Format
from pytest_srbench.datasets.formats._common import Conversion, DatasetError, read_raw
from pytest_srbench.datasets.suites import Suite, load_suite

__all__ = [
    "DatasetError",
    "PrepareSummary",
    "load_prepared",
    "prepare",
    "prepare_conversion",
    "profile_counts",
    "write_full_suite",
]

SUITE_VERSION = "1"
EXTENSION_COUNTS: dict[str, dict[str, int]] = {
    "mmlu": {"smoke": 10, "quick": 100, "standard": 500},
    "humaneval": {"smoke": 5, "quick": 40, "standard": 100},
}
OPTIONS: dict[str, tuple[str, ...]] = {"arc-agi-2": ("split",), "tau3": ("tools_source",)}
STAGING = ".staging"


@dataclass(frozen=True)
class PrepareSummary:
    """What one preparation wrote."""

    benchmark: str
    profile: str
    seed: int
    folder: Path
    count: int
    sha256: str
    revision: str
    source_rows: int
    split: str
    custom_subset: bool
    dropped: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["folder"] = str(self.folder)
        return data


def format_for(benchmark: str) -> Format:
    try:
        return FORMATS[benchmark]
    except KeyError:
        raise DatasetError(
            f"unknown benchmark {benchmark!r} (known: {', '.join(sorted(FORMATS))})"
        ) from None


def profile_counts(benchmark: str) -> dict[str, int]:
    """The smoke / quick / standard sizes (sr-bench's, or this project's for extensions)."""
    counts = PROFILE_COUNTS.get(benchmark) or EXTENSION_COUNTS.get(benchmark)
    if counts is None:
        raise DatasetError(f"no profile sizes are defined for {benchmark!r}")
    return dict(counts)


def prepare(
    benchmark: str,
    source_path: Path,
    *,
    revision: str,
    profile: str,
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    output_root: Path = Path("suites"),
    source: str | None = None,
    license: str | None = None,
    **options: Any,
) -> PrepareSummary:
    """Convert ``source_path`` (a file or folder in the benchmark's public format) and write it.

    ``options``: ``split`` for arc-agi-2 (a group of a split-keyed file), ``tools_source`` for
    tau3 (the domain's tool module, parsed not imported).
    """
    fmt = format_for(benchmark)
    given = {key: value for key, value in options.items() if value is not None}
    unknown = sorted(set(given) - set(OPTIONS.get(benchmark, ())))
    if unknown:
        raise DatasetError(f"{benchmark}: option(s) {', '.join(unknown)} do not apply")
    _check_request(benchmark, profile, revision, limit)
    source_path = Path(source_path)
    if not source_path.exists():
        raise DatasetError(f"{source_path}: no such file or directory")
    conversion = fmt.convert(source_path, **given)
    base = source_path if source_path.is_dir() else source_path.parent
    files = source_file_entries(conversion.source_files, base)
    return prepare_conversion(
        benchmark,
        conversion,
        source=source or f"{fmt.description}: {source_path.name}",
        revision=revision,
        profile=profile,
        seed=seed,
        limit=limit,
        output_root=output_root,
        license=license or fmt.license,
        origin={
            "kind": "user",
            "source": source_path.resolve().name,
            "files": {entry["name"]: entry["sha256"] for entry in files},
        },
        source_files=files,
    )


def _check_request(benchmark: str, profile: str, revision: str, limit: int | None) -> None:
    counts = profile_counts(benchmark)
    if profile not in PROFILES:
        raise DatasetError(f"unknown profile {profile!r} (known: {', '.join(PROFILES)})")
    if not revision or not revision.strip():
        raise DatasetError("a source revision is required (the pinned commit or version)")
    if limit is not None and not 1 <= limit <= counts[profile]:
        raise DatasetError(
            f"--limit must be between 1 and {counts[profile]} (the {profile} count of "
            f"{benchmark}), got {limit}"
        )


def _stratum(fmt: Format, row: Mapping[str, Any]) -> str:
    if fmt.stratum_field is None:
        return ""
    return str(row.get(fmt.stratum_field) or "")


def select_rows(
    benchmark: str, rows: list[dict[str, Any]], *, profile: str, seed: int, limit: int | None,
    source: str, dropped: Mapping[str, int],
) -> list[dict[str, Any]]:  # fmt: skip
    """The profile's rows in selection order; a shortfall names what is needed and available."""
    fmt = format_for(benchmark)
    counts = profile_counts(benchmark)
    by_case: dict[str, dict[str, Any]] = {}
    for row in rows:
        case_id = f"{benchmark}/{row[fmt.id_field]}"
        if case_id in by_case:
            raise DatasetError(f"{source}: duplicate case id {case_id!r}")
        by_case[case_id] = row
    ordered = stratified_order(
        [(case_id, _stratum(fmt, row)) for case_id, row in by_case.items()],
        seed,
        round_robin=fmt.round_robin,
    )
    wanted = limit if limit is not None else counts[profile]
    start = counts["quick"] if profile == "standard" else 0
    if len(ordered) < start + wanted:
        left_out = "".join(f", {n} dropped ({reason})" for reason, n in sorted(dropped.items()))
        block = f"the {start} quick rows, then {wanted}" if start else str(wanted)
        room = len(ordered) - start
        hint = f"pass --limit K with K <= {room} for a custom subset, or " if room > 0 else ""
        raise DatasetError(
            f"{benchmark}: profile {profile!r} needs {start + wanted} rows ({block}) but "
            f"{source} has {len(ordered)} usable{left_out}; {hint}use a larger source"
        )
    try:
        chosen = select_for_profile(
            ordered, profile, {**counts, profile: wanted}, benchmark=benchmark
        )
    except SelectionError as error:
        raise DatasetError(str(error)) from None
    return [by_case[case_id] for case_id in chosen]


def prepare_conversion(
    benchmark: str,
    conversion: Conversion,
    *,
    source: str,
    revision: str,
    profile: str,
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    output_root: Path = Path("suites"),
    license: str | None = None,
    base: Path | None = None,
    origin: Mapping[str, Any] | None = None,
    source_files: list[dict[str, str]] | None = None,
    extra_files: Mapping[str, bytes] | None = None,
) -> PrepareSummary:
    """Select and write already converted rows. ``source_files`` (``[{name, sha256}]``) is
    recorded as given, else computed from the conversion's files with names relative to
    ``base``; ``origin`` goes to suite.json as it is; ``extra_files`` are written beside."""
    fmt = format_for(benchmark)
    _check_request(benchmark, profile, revision, limit)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise DatasetError(f"the seed must be an integer, got {seed!r}")
    selected = select_rows(
        benchmark, conversion.rows, profile=profile, seed=seed, limit=limit, source=source,
        dropped=conversion.dropped,
    )  # fmt: skip
    body = _body(selected, source)
    files, assets = _with_assets(body, conversion)
    meta: dict[str, Any] = {
        "benchmark": benchmark,
        "version": SUITE_VERSION,
        "source": source,
        "revision": revision,
        "sha256": hashlib.sha256(body).hexdigest(),
        "count": len(selected),
        "profiles": {profile: len(selected)},
        "prepared": {
            "profile": profile,
            "seed": seed,
            "selection": "round-robin-v1" if fmt.round_robin else "stratified-hash-v1",
            "limit": limit,
            "custom_subset": limit is not None,
            "split": PROFILE_SPLIT[profile],
            "source_rows": len(conversion.rows),
            "dropped": dict(sorted(conversion.dropped.items())),
            "source_files": source_files
            if source_files is not None
            else source_file_entries(conversion.source_files, base),
        },
    }
    folder = Path(output_root) / f"{benchmark}.{profile}"
    _finish(folder, meta, files, assets, license, origin, extra_files)
    return PrepareSummary(
        benchmark=benchmark,
        profile=profile,
        seed=seed,
        folder=folder,
        count=len(selected),
        sha256=meta["sha256"],
        revision=revision,
        source_rows=len(conversion.rows),
        split=PROFILE_SPLIT[profile],
        custom_subset=limit is not None,
        dropped=dict(conversion.dropped),
    )


def write_full_suite(
    benchmark: str,
    conversion: Conversion,
    *,
    source: str,
    revision: str,
    output_root: Path = Path("suites"),
    license: str | None = None,
    origin: Mapping[str, Any] | None = None,
    extra_files: Mapping[str, bytes] | None = None,
) -> tuple[Path, int, str]:
    """Write every converted row (release order) to ``<output_root>/<benchmark>/``, from which
    a run of any profile selects; returns the folder, the row count and the rows' sha256."""
    fmt = format_for(benchmark)
    if not revision or not revision.strip():
        raise DatasetError("a source revision is required (the pinned commit or version)")
    seen: set[str] = set()
    for row in conversion.rows:
        case_id = f"{benchmark}/{row[fmt.id_field]}"
        if case_id in seen:
            raise DatasetError(f"{source}: duplicate case id {case_id!r}")
        seen.add(case_id)
    if not conversion.rows:
        raise DatasetError(f"{source}: holds no usable rows")
    body = _body(conversion.rows, source)
    files, assets = _with_assets(body, conversion)
    meta: dict[str, Any] = {
        "benchmark": benchmark,
        "version": SUITE_VERSION,
        "source": source,
        "revision": revision,
        "sha256": hashlib.sha256(body).hexdigest(),
        "count": len(conversion.rows),
    }
    if conversion.dropped:
        meta["dropped"] = dict(sorted(conversion.dropped.items()))
    folder = Path(output_root) / benchmark
    _finish(folder, meta, files, assets, license, origin, extra_files)
    return folder, len(conversion.rows), meta["sha256"]


def _body(rows: list[dict[str, Any]], source: str) -> bytes:
    try:
        return "".join(canonical_json(row) + "\n" for row in rows).encode("utf-8")
    except (TypeError, ValueError) as error:
        raise DatasetError(
            f"{source}: a row cannot be written as canonical JSON ({error})"
        ) from None


def _with_assets(body: bytes, conversion: Conversion) -> tuple[dict[str, bytes], dict[str, str]]:
    files: dict[str, bytes] = {"cases.jsonl": body}
    assets: dict[str, str] = {}
    for relative, path in sorted(conversion.assets.items()):
        files[relative] = read_raw(path)
        assets[relative] = hashlib.sha256(files[relative]).hexdigest()
    return files, assets


def _finish(
    folder: Path,
    meta: dict[str, Any],
    files: dict[str, bytes],
    assets: Mapping[str, str],
    license: str | None,
    origin: Mapping[str, Any] | None,
    extra_files: Mapping[str, bytes] | None,
) -> None:
    if license:
        meta["license"] = license
    if assets:
        meta["assets"] = dict(assets)
    if origin is not None:
        meta["origin"] = dict(origin)
    text = json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    files["suite.json"] = text.encode("utf-8")
    for name, data in (extra_files or {}).items():
        if name in files:
            raise DatasetError(f"{folder}: {name} would be written twice")
        files[name] = data
    publish(folder, files)


def source_file_entries(paths: list[Path], base: Path | None) -> list[dict[str, str]]:
    unique = sorted({path.resolve() for path in paths})
    if not unique:
        return []
    anchor = Path(os.path.commonpath([p.parent for p in unique]))
    if base is not None and all(p.is_relative_to(base.resolve()) for p in unique):
        anchor = base.resolve()
    return [
        {"name": path.relative_to(anchor).as_posix(),
         "sha256": hashlib.sha256(read_raw(path)).hexdigest()}
        for path in unique
    ]  # fmt: skip


def publish(folder: Path, files: Mapping[str, bytes]) -> None:
    """Write ``files`` into a staging folder, then rename it to ``folder`` (replacing it)."""
    root = folder.parent
    staging = root / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f"{folder.name}.", dir=staging))
    previous: Path | None = None
    try:
        for relative, data in files.items():
            path = stage / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        stage.chmod(0o755)
        if folder.exists():
            previous = Path(tempfile.mkdtemp(prefix=f"{folder.name}.old.", dir=staging))
            os.replace(folder, previous / folder.name)
        os.replace(stage, folder)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        if previous is not None and not folder.exists():
            os.replace(previous / folder.name, folder)
        raise
    finally:
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
        with contextlib.suppress(OSError):
            staging.rmdir()  # only when no other preparation is staging


def load_prepared(folder: Path) -> Suite:
    """Load and verify a (prepared or raw) suite folder, assets included."""
    return load_suite(folder)
