"""The report sections of the Benchmark Service kinds (pure): ``rag`` — the RAG metrics of
every retrieval target per mode, and of every ``python`` target whose test bodies return ranked
results, over all its planned samples (failed, unknown and pending samples count as zero and
stay in the denominator) — and ``agent`` — the rule-judged outcomes of every agent benchmark
per target; each with its config snapshot."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.core.models import Case, Manifest, Target
from pytest_srbench.core.report.agent_metrics import aggregate_agent
from pytest_srbench.core.report.rag_metrics import RagSample, aggregate_rag

Row = Mapping[str, Any]
DEFAULT_TOP_K = 5


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
    cases = {case.id: case for case in manifest.cases}
    grouped: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for case_id, target_id in manifest.planned_keys():
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


def rag_section(
    manifest: Manifest,
    results: Sequence[Row],
    runner: Mapping[str, Any] | None,
    indexes: Mapping[str, Mapping[str, Any]],
) -> dict[str, Any] | None:
    """Per (RAG benchmark, target): the metrics of its mode (``rag_mode``); and the snapshot.
    A ``python`` target's samples are the ranked results its test bodies returned."""
    kinds = suite_kinds(manifest)
    grouped = _planned(manifest, kinds, "rag")
    if not grouped:
        return None
    targets = manifest.target_inventory()
    by_cell = {(r["case_id"], r["target_id"]): r for r in results}
    rows = []
    sources: Counter[str] = Counter()
    for (benchmark, target_id), cases in grouped.items():
        target = targets[target_id]
        samples = [rag_sample(case, target, by_cell.get((case.id, target_id))) for case in cases]
        for case in cases:
            row = by_cell.get((case.id, target_id)) or {}
            embedding = (((row.get("details") or {}).get("rag") or {}).get("embedding")) or {}
            if embedding.get("source"):
                sources[str(embedding["source"])] += 1
        mode, top_k = rag_mode(target)
        (metrics,) = aggregate_rag(samples, [mode])
        rows.append({"benchmark": benchmark, "target_id": target_id, "top_k": top_k, **metrics})
    services = sorted({t for _, t in grouped if targets[t].kind == "retrieval"})
    snapshot = {
        "datasets": _datasets(manifest, "rag"),
        "modes": sorted({str(targets[t].retrieval.get("mode")) for t in services}),
        "retrieval": {t: dict(targets[t].retrieval) for t in services},
        "reranker": {t: targets[t].retrieval.get("reranker") for t in services},
        # the user's own pipelines: ranked results returned by test bodies, mode = target id
        "python_targets": sorted({t for _, t in grouped if t not in services}),
        "index": {t: dict(indexes[t]) for _, t in grouped if t in indexes},
        "embedding": {"policy": "per_case", "sources": dict(sorted(sources.items()))},
        **_runtime(runner),
    }
    return {"rows": rows, "config_snapshot": snapshot}


def agent_section(
    manifest: Manifest, results: Sequence[Row], runner: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Per (agent benchmark, target): the rule-judged outcomes; and the snapshot."""
    kinds = suite_kinds(manifest)
    grouped = _planned(manifest, kinds, "agent")
    if not grouped:
        return None
    by_cell = {(r["case_id"], r["target_id"]): r for r in results}
    rows = []
    for (benchmark, target_id), cases in grouped.items():
        judged = []
        for case in cases:
            row = by_cell.get((case.id, target_id)) or {}
            agent = (row.get("details") or {}).get("agent")
            if row.get("status") == "completed" and isinstance(agent, Mapping):
                judged.append(agent)
        rows.append({"benchmark": benchmark, "target_id": target_id,
                     **aggregate_agent(judged, len(cases))})  # fmt: skip
    snapshot = {
        "datasets": _datasets(manifest, "agent"),
        "targets": sorted({t for _, t in grouped}),
        "tools": ["search_notes", "read_note", "create_task"],
        "judge": "rules (no LLM judge)",
        **_runtime(runner),
    }
    return {"rows": rows, "config_snapshot": snapshot}
