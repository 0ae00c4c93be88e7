"""The service's RUN object: a run row with its public error code, its frozen plan facts,
its config snapshot and its live progress.

A plan never changes once frozen, so its facts (name, mode, profile, kind, targets, planned
cells) and its config snapshot are cached per run id; progress is counted from the result rows
on every request.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from pytest_srbench.app.reports import run_config_snapshot
from pytest_srbench.core.benchmark_errors import run_error
from pytest_srbench.core.models import Run
from pytest_srbench.core.progress import cell_progress
from pytest_srbench.service.worker import ServiceError
from pytest_srbench.store.base import Store
from pytest_srbench.store.run_listing import (
    PlanFacts,
    count_runs,
    plan_facts,
    run_ids,
    runner_sources,
    runs_by_id,
)

CACHED_RUNS = 50_000


def run_not_found(run_id: str) -> ServiceError:
    return ServiceError("BENCHMARK_RUN_NOT_FOUND", 404, f"no run {run_id[:200]!r}")


def require_run(store: Store, run_id: str) -> Run:
    run = store.get_run(run_id)
    if run is None:
        raise run_not_found(run_id)
    return run


def progress(counts: dict[str, int], planned: int) -> dict[str, int]:
    """Cells completed, ended otherwise (failed, cancelled, sent_unknown), running, pending."""
    cells = cell_progress(counts, planned)
    return {
        "completed": cells.completed,
        "failed": cells.failed,
        "running": cells.running,
        "pending": cells.pending,
    }


class RunViews:
    """Builds RUN objects; thread-safe (requests run in a thread pool)."""

    def __init__(self, cached: int = CACHED_RUNS) -> None:
        self._cached = cached
        self._lock = threading.Lock()
        self._facts: OrderedDict[str, PlanFacts] = OrderedDict()
        self._planned: OrderedDict[str, int] = OrderedDict()
        self._snapshots: OrderedDict[str, dict[str, Any] | None] = OrderedDict()

    def _remember(self, cache: OrderedDict[str, Any], key: str, value: Any) -> None:
        cache[key] = value
        while len(cache) > self._cached:
            cache.popitem(last=False)

    def facts(self, store: Store, ids: list[str]) -> dict[str, PlanFacts]:
        with self._lock:
            known = {i: self._facts[i] for i in ids if i in self._facts}
        missing = [i for i in ids if i not in known]
        if missing:
            fresh = plan_facts(store, missing)
            with self._lock:
                for run_id, facts in fresh.items():
                    self._remember(self._facts, run_id, facts)
            known.update(fresh)
        return known

    def planned_cells(self, store: Store, run_id: str) -> int:
        with self._lock:
            cached = self._planned.get(run_id)
        if cached is None:
            cached = len(store.plan_outline(run_id).cells)
            with self._lock:
                self._remember(self._planned, run_id, cached)
        return cached

    def snapshot(self, store: Store, run_id: str, facts: PlanFacts) -> dict[str, Any] | None:
        """The run's config snapshot (``config_snapshot`` of its frozen plan); a run of plain
        suites has none, and its manifest is not read."""
        if facts.kind == "suite":
            return None
        with self._lock:
            if run_id in self._snapshots:
                return with_index(store, run_id, self._snapshots[run_id])
        found = run_config_snapshot(store.get_manifest(run_id))
        with self._lock:
            self._remember(self._snapshots, run_id, found)
        return with_index(store, run_id, found)

    def views(self, store: Store, runs: list[Run]) -> list[dict[str, Any]]:
        ids = [run.id for run in runs]
        facts = self.facts(store, ids)
        sources = runner_sources(store, ids)
        found = []
        for run in runs:
            plan = facts[run.id]
            planned = self.planned_cells(store, run.id)
            error_code, error = run_error(run.status, run.error)
            found.append({
                "id": run.id, "name": plan.name, "status": run.status, "mode": plan.mode,
                "profile": plan.profile, "kind": plan.kind, "created_at": run.created_at,
                "updated_at": run.updated_at, "error_code": error_code, "error": error,
                "parent_run_id": run.parent_run_id, "targets": list(plan.targets),
                "planned_cells": planned,
                "progress": progress(store.status_counts(run.id), planned),
                "source": sources.get(run.id) or "pytest",
                "config_snapshot": self.snapshot(store, run.id, plan),
            })  # fmt: skip
        return found

    def one(self, store: Store, run_id: str) -> dict[str, Any]:
        run = require_run(store, run_id)
        view = self.views(store, [run])[0]
        view["metrics"] = metric_summary(store, run_id) if run.status in TERMINAL else None
        return view

    def page(
        self,
        store: Store,
        *,
        name: str | None = None,
        model: str | None = None,
        status: str | None = None,
        mode: str | None = None,
        kind: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> tuple[list[dict[str, Any]], int]:
        """A page of RUN objects newest first, and how many runs match."""
        if not (name or model or mode or kind):
            runs = store.list_runs(limit=limit, offset=offset, status=status)
            return self.views(store, runs), count_runs(store, status)
        ids = run_ids(store, status)
        facts = self.facts(store, ids)
        wanted_name, wanted_model = (name or "").casefold(), (model or "").casefold()
        matching = [
            run_id
            for run_id in ids
            if run_id in facts
            and wanted_name in facts[run_id].name.casefold()
            and (not mode or facts[run_id].mode == mode)
            and (not kind or facts[run_id].kind == kind)
            and (
                not wanted_model
                or any(
                    wanted_model in t["model"].casefold() or wanted_model in t["id"].casefold()
                    for t in facts[run_id].targets
                )
            )
        ]
        chosen = matching[offset : offset + limit]
        found = runs_by_id(store, chosen)
        return self.views(store, [found[i] for i in chosen if i in found]), len(matching)


def with_index(store: Store, run_id: str, found: dict[str, Any] | None) -> dict[str, Any] | None:
    """A RAG snapshot with the retrieval indexes' metadata the run recorded (id, corpus hash,
    counts; recorded by the process that started or adopted the run), as the report has it."""
    if not found or "rag" not in found:
        return found
    return {**found, "rag": {**found["rag"], "index": store.snapshots(run_id, "index")}}


TERMINAL = frozenset({"completed", "failed", "cancelled", "interrupted"})
TARGET_METRICS = ("id", "accuracy", "macro_accuracy", "total", "completed", "failed", "scored")


def metric_summary(store: Store, run_id: str) -> dict[str, Any] | None:
    """A finished run's metric summary, read from its saved report (None when not saved)."""
    from pytest_srbench.app.saved_reports import saved_summary  # only for one finished run

    report = saved_summary(store, run_id)
    if report is None or not isinstance(report.get("summary"), dict):
        return None
    summary = report["summary"]
    targets = [{key: t.get(key) for key in TARGET_METRICS} for t in summary.get("targets", [])]
    sections = {kind: (report.get(kind) or {}).get("rows") for kind in ("rag", "agent")}
    return {"targets": targets, "total_spend_usd": summary.get("total_spend_usd"),
            "wall_time_s": summary.get("wall_time_s"), **sections}  # fmt: skip
