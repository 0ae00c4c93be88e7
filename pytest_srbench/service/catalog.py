"""What a project can run, as the service shows it: suites (shipped and the project's suite
folders, raw and prepared), RAG and agent datasets, their cases and the configured targets.

Cases are rendered through their benchmark's adapter and only public fields leave: id,
benchmark, the first user message (a RAG case: its query), group and tags — never the
reference answer, hidden tests, expected ids or anything else a case carries.
"""

from __future__ import annotations

import json
import math
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pytest_srbench.app.config import ConfigError, SrbenchConfig, load_config
from pytest_srbench.app.planning import render_suite, suite_search_path
from pytest_srbench.benchmarks.agent_bench import AgentAdapter
from pytest_srbench.benchmarks.base import Adapter, one_list_profiles
from pytest_srbench.benchmarks.rag import RagAdapter
from pytest_srbench.benchmarks.registry import AdapterRegistry, default_registry
from pytest_srbench.core.benchmark_errors import BenchmarkError, safe_message, without_paths
from pytest_srbench.core.models import Case
from pytest_srbench.core.origins import OriginError, data_origin
from pytest_srbench.datasets.controlled import DatasetDirectory, is_dataset_id
from pytest_srbench.datasets.suites import (
    SUITE_CASES,
    SUITE_META,
    Suite,
    SuiteError,
    is_shipped,
    load_suite,
    shipped_suites_dir,
)
from pytest_srbench.service.worker import ServiceError

PAGE_SIZE = 25
PROMPT_CHARS = 2000
CACHED_DATASETS = 8


@dataclass
class Rendered:
    """A dataset's cases as the API shows them, with its detail."""

    detail: dict[str, Any]
    cases: list[dict[str, Any]] = field(default_factory=list)
    search: list[str] = field(default_factory=list)


@lru_cache(maxsize=1)
def registry() -> AdapterRegistry:
    """The adapters (built-ins and entry points), loaded once per process."""
    return default_registry()


def invalid(message: str) -> ServiceError:
    return ServiceError("BENCHMARK_DATASET_INVALID", 422, safe_message(message, 400))


def not_found(dataset_id: str) -> ServiceError:
    return ServiceError(
        "BENCHMARK_DATASET_NOT_FOUND", 404, safe_message(f"no dataset {dataset_id!r}", 200)
    )


def coverage(adapter: Adapter | None, meta: dict[str, Any], rows: int) -> dict[str, dict[str, int]]:
    """Per profile: the cases it selects and how many of those the dataset holds."""
    prepared = meta.get("prepared")
    if isinstance(prepared, dict):
        return {str(prepared.get("profile")): {"needed": rows, "available": rows}}
    if adapter is None:
        return {}
    try:
        counts = adapter.profile_counts(meta)
    except (TypeError, ValueError):
        return {}
    found = {}
    for profile, needed in counts.items():
        start = counts.get("quick", 0) if profile == "standard" else 0
        found[profile] = {"needed": needed, "available": min(needed, max(0, rows - start))}
    return found


def profiles(cover: dict[str, dict[str, int]]) -> dict[str, int]:
    """Cases a run of each profile takes; 0 when the dataset is too small for it."""
    return {p: c["needed"] if c["available"] >= c["needed"] else 0 for p, c in cover.items()}


def prompt_of(case: Case) -> str:
    """The first user message (text parts joined), else a RAG case's query."""
    content = next((m.content for m in case.messages if m.role == "user"), None)
    if content is None:
        content = case.metadata.get("query", "")
    if isinstance(content, list):
        content = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def case_view(case: Case, group: str) -> dict[str, Any]:
    tags = case.metadata.get("tags")
    return {
        "id": case.id,
        "benchmark": case.benchmark,
        "prompt": prompt_of(case)[:PROMPT_CHARS],
        "group": group,
        "tags": [str(tag) for tag in tags] if isinstance(tags, list) else [],
    }


def _read_meta(folder: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((folder / SUITE_META).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return meta if isinstance(meta, dict) and isinstance(meta.get("benchmark"), str) else None


def _row_count(folder: Path, meta: dict[str, Any]) -> int:
    if isinstance(meta.get("count"), int):
        return int(meta["count"])
    try:
        return sum(1 for line in (folder / SUITE_CASES).read_bytes().split(b"\n") if line.strip())
    except OSError:
        return 0


class Catalog:
    """The datasets and targets of one project (read fresh on each request, rendered cases
    cached by file identity)."""

    def __init__(self, project_root: Path) -> None:
        self.root = project_root
        self._lock = threading.Lock()
        self._rendered: OrderedDict[tuple[Any, ...], Rendered] = OrderedDict()

    def config(self) -> SrbenchConfig:
        try:
            return load_config(self.root)
        except ConfigError as error:
            raise ServiceError("BENCHMARK_PLAN_INVALID", 422, self.public(str(error))) from None

    def public(self, text: str) -> str:
        """A message without the server's folders."""
        for folder in (str(self.root) + "/", str(shipped_suites_dir()) + "/"):
            text = text.replace(folder, "")
        return safe_message(text, 400)

    def targets(self) -> list[dict[str, Any]]:
        return [
            {"id": t.id, "kind": t.kind, "model": t.model, "simulated": t.simulated,
             "session_mode": t.session_mode, "priced": bool(t.prices)}
            for t in self.config().all_targets().values()
        ]  # fmt: skip

    # -- listing ---------------------------------------------------------------------------
    def _suite_folders(self, search: list[Path]) -> dict[str, Path]:
        """Suite folders by name; a later search folder replaces an earlier one's."""
        found: dict[str, Path] = {}
        for root in search:
            if not root.is_dir():
                continue
            for child in sorted(root.iterdir()):
                if (
                    child.is_dir()
                    and not child.name.startswith(".")
                    and (child / SUITE_META).is_file()
                ):
                    found[child.name] = child
        return found

    def _suite_view(self, name: str, folder: Path, meta: dict[str, Any]) -> dict[str, Any]:
        benchmark = str(meta["benchmark"])
        adapter = registry().get(benchmark) if benchmark in registry() else None
        rows = _row_count(folder, meta)
        location = "shipped" if is_shipped(folder) else "project"
        return {
            "id": name,
            "kind": "suite",
            "benchmark": benchmark,
            "version": str(meta.get("version", "")),
            "source": str(meta.get("source", "")),
            "cases": rows,
            "profiles": profiles(coverage(adapter, meta, rows)),
            "location": location,
            "data": data_origin(meta, location)["kind"],
            "description": meta.get("description") if isinstance(meta.get("description"), str) else None,
        }  # fmt: skip

    def _dataset_view(self, item: dict[str, Any]) -> dict[str, Any]:
        count = int(item["cases"])
        kind: Literal["rag", "agent"] = "rag" if item["kind"] == "rag" else "agent"
        location = "shipped" if is_shipped(Path(item["location"])) else "project"
        return {
            "id": item["dataset_id"],
            "kind": kind,
            "benchmark": item["dataset_id"],
            "version": str(item["version"]),
            "source": f"dataset {item['dataset_id']}",
            "cases": count,
            "profiles": one_list_profiles(count),
            "location": location,
            "data": data_origin({"kind": kind}, location)["kind"],
            "description": item.get("description"),
        }

    def datasets(self) -> list[dict[str, Any]]:
        """Every usable dataset, suites first, each sorted by id (a corrupt one is skipped)."""
        search = suite_search_path(self.config(), self.root)
        listed = []
        for name, folder in sorted(self._suite_folders(search).items()):
            meta = _read_meta(folder)
            if meta is None:
                continue
            try:
                listed.append(self._suite_view(name, folder, meta))
            except OriginError:  # a malformed origin: as corrupt as a broken suite.json
                continue
        taken = {view["id"] for view in listed}
        listed += [
            self._dataset_view(item)
            for item in DatasetDirectory(search).list()
            if item["dataset_id"] not in taken
        ]
        return listed

    def dataset_notes(self) -> list[dict[str, str]]:
        """The dataset files that were skipped, each with why (no server path)."""
        search = suite_search_path(self.config(), self.root)
        notes = []
        for problem in DatasetDirectory(search).problems():
            stem = problem["dataset_id"]
            message = without_paths(str(problem["message"]))
            if not is_dataset_id(stem):
                message = (
                    f"the file name {stem + '.json'!r} is not a dataset id (1-128 ASCII letters, "
                    "digits, '.', '_' or '-', starting with a letter or digit), so it is not "
                    "listed and cannot be loaded; rename the file to use it"
                )
            notes.append({"file": stem + ".json", "code": str(problem["code"]),
                          "message": safe_message(message, 400)})  # fmt: skip
        return notes

    # -- one dataset -----------------------------------------------------------------------
    def _load(self, dataset_id: str) -> tuple[Suite, Adapter, dict[str, Any], tuple[Any, ...]]:
        """The dataset as a suite with its adapter, its listed view and a cache key."""
        if not is_dataset_id(dataset_id):
            raise not_found(dataset_id)
        config = self.config()
        search = suite_search_path(config, self.root)
        folder = self._suite_folders(search).get(dataset_id)
        if folder is not None:
            try:
                suite = load_suite(folder)
            except SuiteError as error:
                raise invalid(self.public(str(error))) from None
            if suite.benchmark not in registry():
                raise invalid(f"no adapter for benchmark {suite.benchmark!r}")
            view = self._suite_view(dataset_id, folder, suite.meta)
            stamp = (folder / SUITE_CASES).stat()
            key: tuple[Any, ...] = (str(folder), stamp.st_mtime_ns, stamp.st_size, config.seed)
            return suite, registry().get(suite.benchmark), view, key
        try:
            loaded = DatasetDirectory(search).load(dataset_id)
        except BenchmarkError as error:
            if error.code == "BENCHMARK_DATASET_NOT_FOUND":
                raise not_found(dataset_id) from None
            raise ServiceError(error.code, 422, self.public(error.message)) from None
        dataset = loaded.dataset
        adapter_class = RagAdapter if dataset.kind == "rag" else AgentAdapter
        rows = [case.model_dump(mode="json") for case in dataset.cases]
        meta = {"benchmark": dataset_id, "version": dataset.version, "count": len(rows)}
        suite = Suite(dataset_id, loaded.path, meta, tuple(enumerate(rows, start=1)))
        view = self._dataset_view({
            "dataset_id": dataset_id, "kind": dataset.kind, "version": dataset.version,
            "cases": len(rows), "location": str(loaded.path), "description": dataset.description,
        })  # fmt: skip
        key = (str(loaded.path), loaded.sha256, config.seed)
        return suite, adapter_class.for_dataset(dataset_id), view, key

    def rendered(self, dataset_id: str) -> Rendered:
        suite, adapter, view, key = self._load(dataset_id)
        with self._lock:
            cached = self._rendered.get(key)
            if cached is not None:
                self._rendered.move_to_end(key)
                return cached
        try:
            cases = render_suite(suite, adapter, self.config().seed)
        except SuiteError as error:
            raise invalid(self.public(str(error))) from None
        groups = Counter(stratum for _, stratum in cases if stratum)
        benchmarks = Counter(case.benchmark for case, _ in cases)
        cover = coverage(adapter, suite.meta, len(suite.rows))
        if view["kind"] == "suite":
            view = {**view, "profiles": profiles(cover)}
        result = Rendered(
            detail={
                **view,
                "coverage": cover,
                "groups": [{"group": g, "cases": n} for g, n in sorted(groups.items())],
                "benchmarks": [{"benchmark": b, "cases": n} for b, n in sorted(benchmarks.items())],
            },
            cases=[case_view(case, stratum) for case, stratum in cases],
            search=[(case.id + "\n" + prompt_of(case)).casefold() for case, _ in cases],
        )
        with self._lock:
            self._rendered[key] = result
            while len(self._rendered) > CACHED_DATASETS:
                self._rendered.popitem(last=False)
        return result

    def case_page(
        self,
        dataset_id: str,
        page: int,
        q: str | None,
        benchmark: str | None = None,
        group: str | None = None,
    ) -> dict[str, Any]:
        """25 cases a page: ``q`` searches ids and prompts, ``benchmark`` and ``group`` (the
        subject) match exactly."""
        rendered = self.rendered(dataset_id)
        needle = (q or "").casefold()
        matching = [
            case
            for case, text in zip(rendered.cases, rendered.search, strict=True)
            if needle in text
            and (benchmark is None or case["benchmark"] == benchmark)
            and (group is None or case["group"] == group)
        ]
        start = (page - 1) * PAGE_SIZE
        return {
            "cases": matching[start : start + PAGE_SIZE],
            "page": page,
            "pages": math.ceil(len(matching) / PAGE_SIZE),
            "total": len(matching),
        }
