"""The full-denominator run report, built from a frozen manifest and the store's rows.

This is the only place metrics are computed: the terminal, JSON and HTML renderers, the CLI
and the service all read the dict this module returns (validated by ``ReportModel``).


Why one long module: it is the only place metrics are computed, on purpose."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pytest_srbench.core.calls.failures import summarize_failure
from pytest_srbench.core.calls.recipes import recipe_summary
from pytest_srbench.core.calls.routing import decision_breakdown, preview_distributions
from pytest_srbench.core.calls.usage import cache_neutral_cost, sum_cost
from pytest_srbench.core.models import FAILED_CELL_STATUSES, Manifest, Run, Target
from pytest_srbench.core.offline.reconcile import correction_summary, effective_calls
from pytest_srbench.core.plan.srbench import SR_BENCH_BENCHMARKS
from pytest_srbench.core.report.explain import (
    answer_outcomes,
    explanation_limitations,
    proxy_provenance,
)
from pytest_srbench.core.report.frontier import (
    frontier,
    frontier_point,
    macro_interval,
    macro_worst_coverage,
)
from pytest_srbench.core.report.metrics import Row, answer_latency, target_metric
from pytest_srbench.core.report.sources import (
    data_sources,
    plan_sources,
    score_scope,
    suite_origins,
)
from pytest_srbench.core.report.tasks import (
    agent_section,
    cell_embedding,
    rag_section,
    suite_kinds,
)

REPORT_VERSION = "pytest-srbench-report-1"

FIXED_LIMITATIONS = (
    "Scores measure this frozen protocol (prompts, graders, limits, sampling) only; they are not "
    "a general model ranking.",
    "Smoke and quick profiles draw from the development split; only the standard profile is a "
    "holdout measurement.",
    "Costs use the frozen prices in the plan; self-hosted or simulated targets have no billed "
    "spend unless their prices say so.",
    "Wilson intervals describe sampling error over the planned cases, not variation between "
    "repeated runs of a nondeterministic target; their unit is the case (a case's repeats are "
    "one unit).",
)
PREVIEW_LIMITATION = (
    "Preview run: routing decisions only; no answers were generated, so accuracy is null by design."
)
PREVIEW_NULLED = (
    "accuracy",
    "accuracy_ci95",
    "accuracy_effective_cases",
    "accuracy_ci95_worst_coverage",
    "correct",
    "macro_accuracy",
    "macro_accuracy_ci95",
    "macro_accuracy_ci95_worst_coverage",
    "sr_bench_score",
)  # and score_comparable becomes false: a preview has no score


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value)


def wall_time_s(run: Run) -> float:
    """Seconds between the run's creation and its last persisted update."""
    return (_parse_time(run.updated_at) - _parse_time(run.created_at)).total_seconds()


class _Pricing:
    """Resolves the target whose frozen prices apply to a call (subject or auxiliary)."""

    def __init__(self, manifest: Manifest) -> None:
        self.inventory = manifest.target_inventory()
        self.options = manifest.benchmark_options
        self.benchmark_of = {case.id: case.benchmark for case in manifest.cases}

    def target_for(self, call: Row) -> Target | None:
        if call.get("role") == "subject":
            return self.inventory.get(call.get("target_id", ""))
        benchmark = self.benchmark_of.get(call.get("case_id", ""))
        bound = (self.options.get(benchmark or "") or {}).get(call.get("role", ""))
        return self.inventory.get(bound) if bound else None

    def neutral_cost(self, call: Row) -> float | None:
        """§2.6: null when the call's usage is unknown (an incomplete router receipt too,
        even if some of its segments are known), its target or any part's price is missing."""
        try:
            target = self.target_for(call)
            if target is None or call.get("usage") is None:
                return None
            prices = {model: price.model_dump() for model, price in target.prices.items()}
            parts = call.get("model_usage") or [call]
            total = 0.0
            for part in parts:
                model = part.get("selected_model") or part.get("model")
                value = cache_neutral_cost(part.get("usage"), model, prices)
                if value is None:
                    return None
                total += value
            return total
        except (KeyError, TypeError, ValueError):
            return None


def macro_and_score(
    manifest: Manifest, target_rows: Sequence[Mapping[str, Any]], complete: bool, present: set[str]
) -> dict[str, Any]:
    """Renormalised macro accuracy, the full-set score (or null), its scope label and whether
    it is an sr-bench 1.0 score (``score_comparable``: over sr-bench data, ``sources``).

    The score keeps its number whenever all nine benchmarks are present, complete and not a
    recovery child — over any data — but only sr-bench data makes it comparable: otherwise the
    scope says "macro score over <kind> data — not comparable with sr-bench 1.0"."""
    weights = manifest.benchmark_weights
    num = math.fsum(weights[row["benchmark"]] * (row["accuracy"] or 0.0) for row in target_rows)
    den = math.fsum(weights[row["benchmark"]] for row in target_rows)
    macro = num / den if den else None
    benchmarks = {row["benchmark"] for row in target_rows}
    full = benchmarks == set(SR_BENCH_BENCHMARKS)
    scope, comparable = score_scope(manifest, benchmarks, present)
    score = macro if full and complete and manifest.recovery is None else None
    return {
        "macro_accuracy": macro,
        "sr_bench_score": score,
        "score_scope": scope,
        "score_comparable": comparable and score is not None,
    }


def apply_preview_overrides(item: dict[str, Any], results: Sequence[Row]) -> None:
    """§4.3 preview: routing counters from the result rows replace the call-based ones, and
    every accuracy-like key the item has becomes null (no answers were generated), the
    continuity block's switched / unswitched accuracy included."""
    item.update(preview_distributions(results))
    for key in PREVIEW_NULLED:
        if key in item:
            item[key] = None
    if "score_comparable" in item:
        item["score_comparable"] = False
    item["continuity"] = {
        **item["continuity"],
        "switched_accuracy": None,
        "unswitched_accuracy": None,
    }


FAILURE_OBSERVED = "failure_observed"  # the one event kind a report reads


def _failure(events: Sequence[Row], results: Sequence[Row]) -> dict[str, Any] | None:
    for event in events:
        if event.get("kind") == FAILURE_OBSERVED:
            return dict(event.get("data") or {})
    failed = [
        r for r in results if r.get("status") not in ("running", "completed") and r.get("error")
    ]
    if not failed:
        return None
    first = min(failed, key=lambda r: r.get("finished_at") or "")
    return {
        "case_id": first["case_id"],
        "target_id": first["target_id"],
        "reason": summarize_failure(str(first["error"])),
        "inferred_from_saved_results": True,
    }


def _limitations(
    manifest: Manifest,
    run: Run,
    targets: Sequence[Mapping[str, Any]],
    runner: Mapping[str, Any] | None,
) -> list[str]:
    lines = list(FIXED_LIMITATIONS)
    if manifest.mode == "preview":
        lines.append(PREVIEW_LIMITATION)
    simulated = [t.id for t in manifest.targets if t.simulated]
    if simulated:
        lines.append(
            "Simulated targets (" + ", ".join(simulated) + ") answer from the built-in simulator: "
            "their accuracy, latency and cost are synthetic and measure the harness, not a model."
        )
    if any(t["total_spend_usd"] is None for t in targets):
        lines.append(
            "Some subject or auxiliary call costs are unknown; spend totals are null and "
            "known_cost_usd is only a lower bound."
        )
    if run.status != "completed":
        lines.append(
            f"Run is incomplete (status {run.status}): failed, cancelled and pending cells count "
            "as incorrect in every accuracy."
        )
    if manifest.recovery is not None:
        lines.append(
            "This is a recovery subset of another run; it never yields a full sr-bench score."
        )
    if manifest.cost_policy == "capability_only":
        lines.append("cost_policy capability_only: no cost budget was enforced.")
    lines.append(
        "Budget reservations bound spend before each priced call; a stopped run may have reserved "
        "more than it spent."
    )
    lines.extend(manifest.limitations)
    if runner is None:
        lines.append("runner provenance not captured")
    if any(case.benchmark == "gpqa-diamond" for case in manifest.cases):
        lines.append(
            "gpqa-diamond is widely published; treat its items as possibly seen by the model "
            "(a retest, not a blind measurement)."
        )
    return lines


def cell_outcomes(manifest: Manifest, results: Sequence[Row]) -> list[dict[str, Any]]:
    """Every planned cell with its outcome (pending when no row exists), in planned order."""
    by_cell = {(r["case_id"], r["target_id"]): r for r in results}
    benchmark_of = {case.id: case.benchmark for case in manifest.cases}
    rag = {b for b, kind in suite_kinds(manifest).items() if kind == "rag"}
    target_kind = {t.id: t.kind for t in manifest.target_inventory().values()}
    cells = []
    for cell in manifest.planned_cells():
        row = by_cell.get((cell.case_id, cell.target_id))
        details = (row or {}).get("details") or {}
        latency = None if row is None else answer_latency(row)
        cells.append(
            {
                "case_id": cell.case_id,
                "target_id": cell.target_id,
                "benchmark": benchmark_of[cell.case_id],
                "status": row["status"] if row else "pending",
                "correct": row.get("correct") if row else None,
                "answer": row.get("answer") if row else None,
                "answer_status": details.get("answer_status"),
                "error": summarize_failure(str(row["error"])) if row and row.get("error") else None,
                "latency_s": latency,
                "ttft_s": row.get("ttft_s") if row else None,
                "cost_usd": row.get("cost_usd") if row else None,
                "embedding": cell_embedding(row, target_kind.get(cell.target_id))
                if benchmark_of[cell.case_id] in rag
                else None,
            }
        )
    return cells


NOT_GRADED = FAILED_CELL_STATUSES | {"pending", "running"}
HISTOGRAM_BINS = 20


def failure_groups(cells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Cells without a graded outcome, grouped by reason (most frequent first)."""
    groups: dict[str, dict[str, Any]] = {}
    for cell in cells:
        status = cell["status"]
        if status not in NOT_GRADED:
            continue
        reason = cell["error"] or {
            "pending": "never dispatched (pending)",
            "running": "still running when the report was built",
        }.get(status, status)
        group = groups.setdefault(
            reason, {"reason": reason, "count": 0, "statuses": {}, "targets": {}, "cells": []}
        )
        group["count"] += 1
        group["statuses"][status] = group["statuses"].get(status, 0) + 1
        group["targets"][cell["target_id"]] = group["targets"].get(cell["target_id"], 0) + 1
        if len(group["cells"]) < 20:
            group["cells"].append({"case_id": cell["case_id"], "target_id": cell["target_id"]})
    return sorted(groups.values(), key=lambda g: (-g["count"], g["reason"]))


def distributions(cells: Sequence[Mapping[str, Any]], target_ids: Sequence[str]) -> dict[str, Any]:
    """Histograms of per-cell TTFT and latency (completed cells), shared edges per measure."""
    out: dict[str, Any] = {}
    for measure in ("ttft_s", "latency_s"):
        values = {
            t: [float(c[measure]) for c in cells if c["target_id"] == t and c["status"] == "completed"
                and c[measure] is not None]
            for t in target_ids
        }  # fmt: skip
        top = max((v for vs in values.values() for v in vs), default=0.0)
        width = top / HISTOGRAM_BINS if top > 0 else 1.0
        edges = [round(i * width, 9) for i in range(HISTOGRAM_BINS + 1)]
        counts = {}
        for target_id, vs in values.items():
            bins = [0] * HISTOGRAM_BINS
            for v in vs:
                bins[min(int(v / width), HISTOGRAM_BINS - 1)] += 1
            counts[target_id] = bins
        out[measure] = {"edges": edges, "counts": counts}
    return out


def plan_identity(manifest: Manifest) -> dict[str, Any]:
    """What a comparison needs of the frozen plan, without case content or endpoints."""

    def public(target: Target) -> dict[str, Any]:
        return target.model_dump(mode="json", exclude={"base_url", "api_key_env", "managed"})

    return {
        "plan_sha256": manifest.plan_sha256,
        "case_sha256": manifest.case_sha256,
        "mode": manifest.mode,
        "profile": manifest.profile,
        "seed": manifest.seed,
        "cost_policy": manifest.cost_policy,
        "output_policy": manifest.output_policy,
        "repeats": manifest.repeats,
        "data_sources": plan_sources(manifest),
        "sampling": manifest.sampling,
        "benchmark_weights": manifest.benchmark_weights,
        "benchmark_options": manifest.benchmark_options,
        "adapter_versions": manifest.adapter_versions,
        "limits": manifest.limits.model_dump(mode="json"),
        "targets": [public(t) for t in manifest.targets],
        "auxiliary_targets": {k: public(t) for k, t in manifest.auxiliary_targets.items()},
        "execution_cells": None
        if manifest.execution_cells is None
        else [cell.model_dump(mode="json") for cell in manifest.execution_cells],
        "cases": [
            {
                "id": case.id,
                "benchmark": case.benchmark,
                "repeat_of": case.metadata.get("repeat_of"),
            }
            for case in manifest.cases
        ],
    }


def repeat_agreement(
    manifest: Manifest, cells: Sequence[Mapping[str, Any]]
) -> dict[str, Any] | None:
    """Per-case agreement across repeats and per-target flip rates; ``None`` without repeats.

    A repeat's outcome is known once its cell is completed (its ``correct``) or failed
    (incorrect); other repeats are left out of the case's agreement.
    """
    if manifest.repeats == 1:
        return None
    original = {case.id: case.metadata.get("repeat_of") or case.id for case in manifest.cases}
    outcomes: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for cell in cells:
        key = (cell["target_id"], original[cell["case_id"]])
        if cell["status"] == "completed" and isinstance(cell["correct"], bool):
            outcomes[key].append(cell["correct"])
        elif cell["status"] == "failed":
            outcomes[key].append(False)
        else:
            outcomes.setdefault(key, [])
    cases: list[dict[str, Any]] = []
    for (target_id, case_id), values in outcomes.items():
        m = len(values)
        right = sum(values)
        cases.append(
            {
                "case_id": case_id,
                "target_id": target_id,
                "observed": m,
                "correct": right,
                "agreement": max(right, m - right) / m if m else None,
                "pairwise_disagreement": 2 * right * (m - right) / (m * (m - 1)) if m > 1 else None,
            }
        )
    targets = []
    for target in manifest.targets:
        own = [c for c in cases if c["target_id"] == target.id]
        full = [c for c in own if c["observed"] == manifest.repeats]
        flips = [c for c in full if c["agreement"] != 1]
        targets.append(
            {
                "target_id": target.id,
                "cases": len(own),
                "fully_observed_cases": len(full),
                "flipped_cases": len(flips),
                "flip_rate": len(flips) / len(full) if full else None,
                "mean_agreement": math.fsum(c["agreement"] for c in full) / len(full)
                if full
                else None,
                "pairwise_disagreement": math.fsum(c["pairwise_disagreement"] for c in full)
                / len(full)
                if full
                else None,
            }
        )
    return {"repeats": manifest.repeats, "targets": targets, "cases": cases}


def build_report(
    manifest: Manifest,
    run: Run,
    results: Sequence[Row],
    calls: Sequence[Row],
    events: Sequence[Row] = (),
    *,
    runner: Mapping[str, Any] | None = None,
    child_attempts: Sequence[Mapping[str, Any]] = (),
    correction: Mapping[str, Any] | None = None,
    recipes: Mapping[str, dict[str, Any]] | None = None,
    indexes: Mapping[str, dict[str, Any]] | None = None,
    local_embedding: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Compute the whole report dict (validated later by ``ReportModel``).

    ``recipes`` are the run's router recipe snapshots by target id; a router target without
    one is reported "unavailable" (never borrowed from another run). ``local_embedding`` is
    the local embedding baseline a RAG snapshot records (``rag_config``).

    With an accounting ``correction`` every call is read through it (``effective_calls``)
    before any metric; the original receipts are not touched.
    """
    calls = effective_calls(calls, correction)
    pricing = _Pricing(manifest)
    planned: dict[str, list[str]] = defaultdict(list)
    for cell in manifest.planned_cells():
        planned[cell.target_id].append(cell.case_id)
    rows_by_target: dict[str, list[Row]] = defaultdict(list)
    for row in results:
        rows_by_target[row["target_id"]].append(row)
    calls_by_target: dict[str, list[Row]] = defaultdict(list)
    for call in calls:
        calls_by_target[call["target_id"]].append(call)
    benchmark_of = {case.id: case.benchmark for case in manifest.cases}
    # the unit of every accuracy interval: a repeat's cell belongs to its original case
    case_of = {case.id: case.metadata.get("repeat_of") or case.id for case in manifest.cases}
    all_benchmarks = sorted(set(benchmark_of.values()))
    present = {benchmark_of[cell.case_id] for cell in manifest.planned_cells()}
    preview = manifest.mode == "preview"
    origins = suite_origins(manifest)

    summary_targets: list[dict[str, Any]] = []
    benchmark_rows: list[dict[str, Any]] = []
    for target in manifest.targets:
        ids = planned[target.id]
        id_set = set(ids)
        rows = [r for r in rows_by_target[target.id] if r["case_id"] in id_set]
        target_calls = calls_by_target[target.id]
        session_mode = "stateless" if preview else target.session_mode
        metric = target_metric(
            target.id,
            rows,
            target_calls,
            len(id_set),
            id_set,
            pricing.neutral_cost,
            session_mode=session_mode,
            case_of=case_of,
        )
        own_rows = []
        own_results = []
        for benchmark in all_benchmarks:
            bench_ids = {case_id for case_id in ids if benchmark_of[case_id] == benchmark}
            if not bench_ids:
                continue
            row = {"benchmark": benchmark, "target_id": target.id}
            row["data_source"] = origins.get(benchmark)
            bench_results = [r for r in rows if r["case_id"] in bench_ids]
            row.update(
                target_metric(
                    target.id,
                    bench_results,
                    [c for c in target_calls if c.get("case_id") in bench_ids],
                    len(bench_ids),
                    bench_ids,
                    pricing.neutral_cost,
                    session_mode=session_mode,
                    case_of=case_of,
                )
            )
            own_rows.append(row)
            own_results.append(bench_results)
        metric.update(macro_and_score(manifest, own_rows, metric["complete"], present))
        metric["macro_accuracy_ci95"] = macro_interval(own_rows, manifest.benchmark_weights)
        metric["macro_accuracy_ci95_worst_coverage"] = macro_worst_coverage(own_rows)
        metric.update({"kind": target.kind, "model": target.model, "simulated": target.simulated})
        metric["decision_breakdown"] = (
            decision_breakdown(
                rows,
                [c for c in target_calls if c.get("case_id") in id_set],
                len(id_set),
                preview=preview,
                planned_ids=ids,
                case_of=case_of,
            )
            if target.kind == "mom"
            else []
        )
        if preview:
            apply_preview_overrides(metric, rows)
            for row, bench_results in zip(own_rows, own_results, strict=True):
                apply_preview_overrides(row, bench_results)
        summary_targets.append(metric)
        benchmark_rows.extend(own_rows)

    totals_known = all(t["total_spend_usd"] is not None for t in summary_targets)
    cells = cell_outcomes(manifest, results)
    limitations = _limitations(manifest, run, summary_targets, runner)
    sources = data_sources(manifest, present)
    if not sources["comparable"]:
        limitations.append(
            f"Where the cases came from: {sources['label']} (each benchmark's data_source says "
            "which data it is)."
        )
    proxies = proxy_provenance(manifest, calls)
    limitations += explanation_limitations(manifest, proxies)
    if correction is not None:
        limitations.append(
            f"Usage and cost are read through accounting correction {correction.get('id')} "
            "(offline re-verification of the saved streams); calls it could not verify count "
            "as unknown. The original call receipts are preserved."
        )
    return {
        "version": REPORT_VERSION,
        "protocol": manifest.version,
        "run_id": run.id,
        "status": run.status,
        "error": run.error,
        "mode": manifest.mode,
        "cost_policy": manifest.cost_policy,
        "profile": manifest.profile,
        "seed": manifest.seed,
        "plan_sha256": manifest.plan_sha256,
        "case_sha256": manifest.case_sha256,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "failure": _failure(events, results),
        "recovery": manifest.recovery,
        "child_attempts": [dict(child) for child in child_attempts],
        "summary": {
            "targets": summary_targets,
            "planned_cells": len(manifest.planned_cells()),
            "wall_time_s": wall_time_s(run),
            "total_spend_usd": sum_cost(c.get("cost_usd") for c in calls) if totals_known else None,
        },
        "benchmarks": benchmark_rows,
        "data_sources": sources,
        "limitations": limitations,
        "rag": rag_section(manifest, results, runner, indexes or {}, local_embedding),
        "agent": agent_section(manifest, results, runner),
        "provenance": {
            "plan_sha256": manifest.plan_sha256,
            "case_sha256": manifest.case_sha256,
            "dataset": manifest.dataset.model_dump(mode="json"),
            "sampling": manifest.sampling,
            "adapter_versions": manifest.adapter_versions,
            "benchmark_weights": manifest.benchmark_weights,
            "custom_subset": manifest.execution_cells is not None or manifest.dataset.custom_subset,
            "target_profiles": [
                {
                    "id": t.id,
                    "model": t.model,
                    "kind": t.kind,
                    "simulated": t.simulated,
                    "request_params": t.request_params,
                    "config_hash": t.config_hash,
                }
                for t in manifest.targets
            ],
            "profile": manifest.profile,
            "seed": manifest.seed,
            "runner": dict(runner) if runner is not None else None,
            "recipes": [
                recipe_summary(t, (recipes or {}).get(t.id))
                for t in manifest.targets
                if t.kind == "mom"
            ],
            "accounting_correction": correction_summary(correction)
            if correction is not None
            else None,
        },
        "failure_groups": failure_groups(cells),
        "outcomes": answer_outcomes(manifest, cells, calls),
        "proxies": proxies,
        "distributions": distributions(cells, [t.id for t in manifest.targets]),
        "plan": plan_identity(manifest),
        "repeats": repeat_agreement(manifest, cells),
        "frontier": frontier(
            # a preview has no quality: its targets are listed apart (unplaced)
            frontier_point(run.id, t, [] if preview else benchmark_rows, manifest.benchmark_weights)
            for t in summary_targets
        ),
        "cells": cells,
    }
