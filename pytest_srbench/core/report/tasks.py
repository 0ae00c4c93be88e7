"""The report sections of the Benchmark Service kinds (pure): ``rag`` — the RAG metrics of
every retrieval target per mode, and of every ``python`` target whose test bodies return ranked
results, over all its planned samples (failed, unknown and pending samples count as zero and
stay in the denominator) — and ``agent`` — the rule-judged outcomes of every agent benchmark
per target; each with its config snapshot.

The static part of each snapshot (what the frozen plan says, plus the local embedding
baseline) is ``config_snapshot``, also served on the service's run record; the report adds
what only the run knows (index descriptions, embedding sources, runtime)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from pytest_srbench.core.calls.failures import summarize_failure
from pytest_srbench.core.calls.retrieval import search_params
from pytest_srbench.core.models import FAILED_CELL_STATUSES, Case, Manifest, Target
from pytest_srbench.core.report.agent_metrics import AgentTotals
from pytest_srbench.core.report.rag_metrics import ModeRunner, RagSample, SampleKeys

Row = Mapping[str, Any]
DEFAULT_TOP_K = 5
RunKind = Literal["rag", "agent", "suite", "mixed"]
EMBEDDING_FIELDS = ("source", "model_id", "dimensions", "version", "fallback_reason",
                    "route_version", "requested_route", "attempted_space")  # fmt: skip
AGENT_TOOLS = ("search_notes", "read_note", "create_task")


def rag_mode(target: Target) -> tuple[str, int]:
    """(mode, top_k) a RAG sample of ``target`` is scored under: a retrieval target's frozen
    ``retrieval.mode`` and ``top_k`` (default 5); any other target (``python``: the user's own
    pipeline, whose ranked results a test body returns) is its own mode, named by its id, and
    is scored on its first 5 results."""
    if target.kind == "retrieval":
        params = target.retrieval
        return str(params.get("mode")), int(params.get("top_k", DEFAULT_TOP_K))
    return target.id, DEFAULT_TOP_K


def suite_kinds(manifest: Manifest) -> dict[str, str]:
    """benchmark -> ``rag`` | ``agent`` for the plan's Benchmark Service datasets."""
    return {
        str(suite["benchmark"]): str(suite["kind"])
        for suite in manifest.dataset.suites
        if suite.get("kind") in ("rag", "agent")
    }


def run_kind(kinds: Iterable[str | None]) -> RunKind:
    """The kind of a run from the kinds of its plan's datasets: ``rag`` or ``agent`` when all
    are of that kind, ``suite`` when none is RAG or agent (sr-bench suites, Python-defined
    benchmarks), ``mixed`` otherwise."""
    found = {kind if kind in ("rag", "agent") else "suite" for kind in kinds}
    if len(found) > 1:
        return "mixed"
    only = next(iter(found), "suite")
    return "rag" if only == "rag" else "agent" if only == "agent" else "suite"


def manifest_kind(manifest: Manifest) -> RunKind:
    """``run_kind`` of the datasets the frozen plan selected cases from."""
    return run_kind(s.get("kind") for s in manifest.dataset.suites if s.get("selected") != 0)


def unavailable_embedding(reason: str | None) -> dict[str, Any]:
    """The embedding record of a search that made no query vector because it failed."""
    return {**dict.fromkeys(EMBEDDING_FIELDS), "source": "unavailable", "fallback_reason": reason}


def cell_embedding(row: Row | None, target_kind: str | None) -> dict[str, Any] | None:
    """A RAG cell's embedding record: the search's own, unchanged; for a retrieval target's
    cell that ended without one (its call failed, timed out, was cancelled), ``unavailable``
    with the failure's controlled summary; None when unknown (a pending cell, a pipeline of
    the user's that did not say)."""
    if not row:
        return None
    rag = (row.get("details") or {}).get("rag")
    embedding = rag.get("embedding") if isinstance(rag, Mapping) else None
    if isinstance(embedding, Mapping):
        return dict(embedding)
    if target_kind == "retrieval" and row.get("status") in FAILED_CELL_STATUSES:
        error = row.get("error")
        return unavailable_embedding(summarize_failure(str(error)) if error else None)
    return None


def rag_sample(case: Case, target: Target, row: Row | None) -> RagSample:
    """One sample: the completed search of a cell, or a failed (zero) sample."""
    meta = case.metadata
    rag = ((row or {}).get("details") or {}).get("rag") if row else None
    ok = bool(row and row.get("status") == "completed" and isinstance(rag, Mapping))
    repeat = meta.get("repeat")
    found: Mapping[str, Any] = rag if ok and isinstance(rag, Mapping) else {}
    mode, top_k = rag_mode(target)
    return RagSample(
        mode=mode,
        case_id=str(meta.get("case_id", case.id)),
        repeat=int(repeat) if isinstance(repeat, int) else 1,
        ok=ok,
        ranked_note_ids=list(found.get("ranked_note_ids") or []),
        ranked_block_ids=list(found.get("ranked_block_ids") or []),
        cited_block_ids=list(found.get("cited_block_ids") or []),
        expected_note_ids=list(meta.get("expected_note_ids") or []),
        expected_block_ids=list(meta.get("expected_block_ids") or []),
        citation_required=bool(meta.get("citation_required")),
        top_k=top_k,
        latency_ms=found.get("latency_ms"),
    )


def _planned(
    manifest: Manifest, kinds: Mapping[str, str], kind: str
) -> dict[tuple[str, str], list[Case]]:
    grouped: dict[tuple[str, str], list[Case]] = defaultdict(list)
    if kind not in kinds.values():
        return grouped  # (a run without such cells: nothing to look up)
    cases = {case.id: case for case in manifest.cases}
    for case_id, target_id in manifest.iter_planned_keys():
        case = cases[case_id]
        if kinds.get(case.benchmark) == kind:
            grouped[(case.benchmark, target_id)].append(case)
    return grouped


def _datasets(manifest: Manifest, kind: str) -> list[dict[str, Any]]:
    return [
        {"dataset_id": s["benchmark"], "version": s.get("version"), "sha256": s.get("sha256"),
         "cases": s.get("selected"), "location": s.get("location")}
        for s in manifest.dataset.suites
        if s.get("kind") == kind
    ]  # fmt: skip


def _runtime(runner: Mapping[str, Any] | None) -> dict[str, Any]:
    runner = runner or {}
    return {
        "app_version": runner.get("pytest_srbench"),
        "python": runner.get("python"),
        "environment": {"platform": runner.get("platform"), "transport": runner.get("transport")},
    }


def retrieval_settings(target: Target) -> dict[str, Any]:
    """A retrieval target's frozen parameters with the defaults its searches send filled in
    (``search_params``: top_k 5, rrf_k 60) and ``reranker`` "none" when unset."""
    settings = {**dict(target.retrieval), **search_params(target)}
    settings["reranker"] = settings.get("reranker") or "none"
    return settings


LOCAL_EMBEDDING_FIELDS = ("model_id", "version", "dimensions", "fallback_reason")


def rag_config(
    manifest: Manifest, local_embedding: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """The static RAG snapshot of a plan (None without RAG cells): datasets, modes, effective
    retrieval settings and reranker per retrieval target, the ``python`` targets, the local
    embedding baseline (null fields when unknown) and the embedding policy (``per_case``: the
    source each sample actually used is in its own record, never the baseline)."""
    grouped = _planned(manifest, suite_kinds(manifest), "rag")
    if not grouped:
        return None
    targets = manifest.target_inventory()
    services = sorted({t for _, t in grouped if targets[t].kind == "retrieval"})
    settings = {t: retrieval_settings(targets[t]) for t in services}
    baseline = local_embedding or {}
    return {
        "datasets": _datasets(manifest, "rag"),
        "modes": sorted({str(s["mode"]) for s in settings.values()}),
        "retrieval": settings,
        "reranker": {t: s["reranker"] for t, s in settings.items()},
        # the user's own pipelines: ranked results returned by test bodies, mode = target id
        "python_targets": sorted({t for _, t in grouped if t not in settings}),
        "local_embedding": {key: baseline.get(key) for key in LOCAL_EMBEDDING_FIELDS},
        "embedding": {"policy": "per_case"},
    }


def agent_config(manifest: Manifest) -> dict[str, Any] | None:
    """The static agent snapshot of a plan (None without agent cells)."""
    grouped = _planned(manifest, suite_kinds(manifest), "agent")
    if not grouped:
        return None
    return {
        "datasets": _datasets(manifest, "agent"),
        "targets": sorted({t for _, t in grouped}),
        "tools": list(AGENT_TOOLS),
        "judge": "rules (no LLM judge)",
    }


def config_snapshot(
    manifest: Manifest, local_embedding: Mapping[str, Any] | None = None
) -> dict[str, Any] | None:
    """``{"rag": …, "agent": …}`` (the kinds the plan holds) of the static snapshots, or None
    for a plan of plain suites; the report's sections hold the same and add what the run saw."""
    found = {"rag": rag_config(manifest, local_embedding), "agent": agent_config(manifest)}
    return {kind: part for kind, part in found.items() if part is not None} or None


class RagSection:
    """``rag_section`` one planned cell at a time: per (RAG benchmark, target) its mode's
    running row, and the embedding sources seen."""

    def __init__(self, manifest: Manifest) -> None:
        self.kinds = suite_kinds(manifest)
        self.targets = manifest.target_inventory()
        self.groups: dict[tuple[str, str], ModeRunner] = {}
        self.keys: dict[tuple[str, str], SampleKeys] = {}
        self.sources: Counter[str] = Counter()

    def add(self, case: Case, target_id: str, row: Row | None) -> None:
        if self.kinds.get(case.benchmark) != "rag":
            return
        target = self.targets[target_id]
        key = (case.benchmark, target_id)
        runner = self.groups.get(key)
        if runner is None:
            runner = self.groups[key] = ModeRunner(rag_mode(target)[0])
            self.keys[key] = SampleKeys()
        sample = rag_sample(case, target, row)
        self.keys[key].check(sample)
        runner.add(sample)
        embedding = cell_embedding(row, target.kind)
        if embedding and embedding.get("source"):
            self.sources[str(embedding["source"])] += 1

    def section(
        self,
        static: Mapping[str, Any] | None,
        runner: Mapping[str, Any] | None,
        indexes: Mapping[str, Mapping[str, Any]],
    ) -> dict[str, Any] | None:
        """The section, with ``static`` the plan's ``rag_config`` (None: no RAG cells)."""
        if static is None:
            return None
        rows = []
        for (benchmark, target_id), mode_runner in self.groups.items():
            top_k = rag_mode(self.targets[target_id])[1]
            rows.append({"benchmark": benchmark, "target_id": target_id, "top_k": top_k,
                         **mode_runner.row()})  # fmt: skip
        snapshot = {
            **static,
            "index": {t: dict(indexes[t]) for _, t in self.groups if t in indexes},
            "embedding": {**static["embedding"], "sources": dict(sorted(self.sources.items()))},
            **_runtime(runner),
        }
        return {"rows": rows, "config_snapshot": snapshot}


class AgentSection:
    """The agent section, fed one planned cell at a time: per (agent benchmark, target) the
    running totals of its judged cases."""

    def __init__(self, manifest: Manifest) -> None:
        self.kinds = suite_kinds(manifest)
        self.groups: dict[tuple[str, str], tuple[AgentTotals, list[int]]] = {}

    def add(self, case: Case, target_id: str, row: Row | None) -> None:
        if self.kinds.get(case.benchmark) != "agent":
            return
        key = (case.benchmark, target_id)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = (AgentTotals(), [0])
        group[1][0] += 1
        row = row or {}
        agent = (row.get("details") or {}).get("agent")
        if row.get("status") == "completed" and isinstance(agent, Mapping):
            group[0].add(agent)

    def section(
        self, static: Mapping[str, Any] | None, runner: Mapping[str, Any] | None
    ) -> dict[str, Any] | None:
        """The section, with ``static`` the plan's ``agent_config`` (None: no agent cells)."""
        if static is None:
            return None
        rows = [
            {"benchmark": benchmark, "target_id": target_id, **totals.aggregate(planned[0])}
            for (benchmark, target_id), (totals, planned) in self.groups.items()
        ]
        return {"rows": rows, "config_snapshot": {**static, **_runtime(runner)}}


def _each_planned(
    manifest: Manifest, results: Sequence[Row]
) -> Iterator[tuple[Case, str, Row | None]]:
    cases = {case.id: case for case in manifest.cases}
    by_cell = {(r["case_id"], r["target_id"]): r for r in results}
    for case_id, target_id in manifest.iter_planned_keys():
        yield cases[case_id], target_id, by_cell.get((case_id, target_id))


def rag_section(
    manifest: Manifest,
    results: Sequence[Row],
    runner: Mapping[str, Any] | None,
    indexes: Mapping[str, Mapping[str, Any]],
    local_embedding: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """Per (RAG benchmark, target): the metrics of its mode (``rag_mode``); and the snapshot.
    A ``python`` target's samples are the ranked results its test bodies returned."""
    static = rag_config(manifest, local_embedding)
    if static is None:
        return None
    section = RagSection(manifest)
    for case, target_id, row in _each_planned(manifest, results):
        section.add(case, target_id, row)
    return section.section(static, runner, indexes)
