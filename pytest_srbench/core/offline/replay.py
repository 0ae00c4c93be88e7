"""Offline replay (run-lifecycle.md §11.2), pure: whether a completed live baseline of single
models and a completed preview of a router can be combined, cell by cell, into an estimate of
the router's quality; and the replay run's manifest, results and calls. Nothing here sends a
request: each routed cell takes the answer the selected model gave in the baseline.

Every refusal is a named reason, ``replay_ineligible: <reason>``: the run-level reasons
(``RUN_REASONS``) concern the two runs, the cell-level ones (``CELL_REASONS``) one routed
cell. sr-bench 1.0 creates a replay only when every precondition holds, so one ineligible
cell refuses the whole replay; the review lists every cell with its reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import Case, Manifest, Run, Target
from pytest_srbench.core.plan.build import request_params_for, seal

REPLAY_BENCHMARKS = frozenset({"mmlu-pro", "gpqa-diamond", "arc-agi-2", "hle", "simpleqa-verified"})
DETERMINISTIC_METHODS = frozenset({"static", "single", "route_action"})
EVIDENCE_MODE = "offline_estimate"
PREFIX = "replay_ineligible: "

RUN_REASONS = {
    "baseline_not_completed": "the baseline run is not completed",
    "baseline_not_live": "the baseline is not a live run",
    "preview_not_completed": "the preview run is not completed",
    "preview_not_preview": "the preview run is not a preview (mode 'preview')",
    "baseline_targets_not_unique_singles": "the baseline's targets are not single models with "
    "unique model names",
    "preview_has_no_router": "the preview has no router (mom) target",
    "case_set_differs": "the baseline and the preview froze different cases (case_sha256)",
    "sampling_differs": "the baseline and the preview froze different sampling",
    "same_run": "the baseline and the preview are the same run",
}
CELL_REASONS = {
    "unsupported_benchmark": "only mmlu-pro, gpqa-diamond, arc-agi-2, hle and simpleqa-verified "
    "can be replayed",
    "preview_cell_not_completed": "the preview of this cell did not complete",
    "not_selected": "the router did not report selection_status 'selected'",
    "nondeterministic_selection": "the selection method is not static, single or route_action",
    "plugins": "the routing ran plugins",
    "state_dependent": "the routing depended on state (a session, a sticky model)",
    "multiple_inference_models": "the router would call several models for this request",
    "selected_model_not_in_baseline": "the selected model is not a single target of the baseline",
    "parameters_differ": "the selected model's effective parameters in the baseline differ from "
    "the router's",
    "baseline_cell_not_completed": "the baseline cell of the selected model did not complete",
    "no_completed_subject_call": "the baseline cell has no completed subject call",
    "multiple_subject_calls": "the baseline cell has more than one subject call",
    "messages_differ": "the baseline call's messages differ from the case's",
}


class ReplayError(InputError):
    """A replay cannot be created; the message names every ``replay_ineligible`` reason."""


def ineligible(reason: str) -> str:
    """``replay_ineligible: <reason>`` for a known reason."""
    assert reason in RUN_REASONS or reason in CELL_REASONS, reason
    return PREFIX + reason


def run_problems(
    baseline_run: Run,
    baseline: Manifest,
    preview_run: Run,
    preview: Manifest,
) -> list[str]:
    """The run-level reasons (names from ``RUN_REASONS``) the two runs cannot be replayed."""
    problems = []
    if baseline_run.id == preview_run.id:
        problems.append("same_run")
    if baseline_run.status != "completed":
        problems.append("baseline_not_completed")
    if baseline.mode != "live" or baseline.recovery is not None:
        problems.append("baseline_not_live")
    if preview_run.status != "completed":
        problems.append("preview_not_completed")
    if preview.mode != "preview":
        problems.append("preview_not_preview")
    models = [t.model for t in baseline.targets]
    if any(t.kind != "single" for t in baseline.targets) or len(set(models)) != len(models):
        problems.append("baseline_targets_not_unique_singles")
    if not any(t.kind == "mom" for t in preview.targets):
        problems.append("preview_has_no_router")
    if baseline.case_sha256 != preview.case_sha256:
        problems.append("case_set_differs")
    if baseline.sampling != preview.sampling:
        problems.append("sampling_differs")
    return problems


def _state_dependent(routing: Mapping[str, Any]) -> bool:
    trace = routing.get("trace")
    sticky = isinstance(trace, Mapping) and trace.get("sticky_session") is True
    return sticky or routing.get("state_dependent") is True


def routing_reason(routing: Mapping[str, Any]) -> str | None:
    """The cell-level reason a preview's routing cannot be replayed, or None."""
    if routing.get("selection_status") != "selected":
        return "not_selected"
    if routing.get("selection_method") not in DETERMINISTIC_METHODS:
        return "nondeterministic_selection"
    if routing.get("plugins"):
        return "plugins"
    if _state_dependent(routing):
        return "state_dependent"
    inference = routing.get("inference_models")
    if isinstance(inference, list) and len(inference) > 1:
        return "multiple_inference_models"
    return None


def case_messages(case: Case) -> list[dict[str, Any]]:
    """A case's messages as a request carries them."""
    return [message.as_request() for message in case.messages]


def _subject_call(
    calls: Sequence[Mapping[str, Any]],
) -> tuple[Mapping[str, Any] | None, str | None]:
    subject = [c for c in calls if c.get("role") == "subject"]
    if len(subject) > 1:
        return None, "multiple_subject_calls"
    if not subject or subject[0].get("status") != "completed":
        return None, "no_completed_subject_call"
    return subject[0], None


def review(
    baseline_run: Run,
    baseline: Manifest,
    baseline_results: Iterable[Mapping[str, Any]],
    baseline_calls: Iterable[Mapping[str, Any]],
    preview_run: Run,
    preview: Manifest,
    preview_results: Iterable[Mapping[str, Any]],
) -> dict[str, Any]:
    """The replay review: run-level problems and every routed cell of the preview with the
    baseline cell and call it would take, or its ``replay_ineligible`` reason. Zero model
    requests. ``eligible`` is true only when no problem and no ineligible cell remain."""
    problems = run_problems(baseline_run, baseline, preview_run, preview)
    by_model: dict[str, Target] = {}
    for target in baseline.targets:
        by_model.setdefault(target.model, target)
    results = {(r["case_id"], r["target_id"]): r for r in baseline_results}
    calls: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for call in baseline_calls:
        calls.setdefault((call.get("case_id") or "", call.get("target_id") or ""), []).append(call)
    previews = {(r["case_id"], r["target_id"]): r for r in preview_results}
    cases = {case.id: case for case in preview.cases}
    baseline_cases = {case.id: case for case in baseline.cases}
    routers = {t.id: t for t in preview.targets}
    cells = []
    for case_id, target_id in preview.planned_keys():
        case = cases[case_id]
        router = routers[target_id]
        row = previews.get((case_id, target_id))
        routing = ((row or {}).get("details") or {}).get("routing") or {}
        cell: dict[str, Any] = {
            "case_id": case_id,
            "target_id": target_id,
            "benchmark": case.benchmark,
            "selected_model": routing.get("selected_model"),
            "baseline_target_id": None,
            "source_call_id": None,
            "reason": None,
        }
        reason = _cell_reason(cell, case, router, row, routing, by_model, baseline, preview)
        if reason is None:
            single = by_model[str(routing["selected_model"])]
            cell["baseline_target_id"] = single.id
            result = results.get((case_id, single.id))
            if result is None or result.get("status") != "completed":
                reason = "baseline_cell_not_completed"
            else:
                source, reason = _subject_call(calls.get((case_id, single.id), []))
                if source is not None:
                    request = source.get("request") or {}
                    base_case = baseline_cases.get(case_id)
                    expected = case_messages(base_case) if base_case is not None else None
                    if request.get("messages") != expected or expected != case_messages(case):
                        reason = "messages_differ"
                    else:
                        cell["source_call_id"] = source["id"]
        if reason is not None:
            cell["reason"] = ineligible(reason)
        cells.append(cell)
    bad = [c for c in cells if c["reason"]]
    return {
        "kind": "replay-review",
        "baseline_run_id": baseline_run.id,
        "preview_run_id": preview_run.id,
        "eligible": not problems and not bad and bool(cells),
        "problems": [ineligible(p) for p in problems],
        "eligible_cells": len(cells) - len(bad),
        "ineligible_cells": len(bad),
        "cells": cells,
        "model_requests": 0,
    }


def _cell_reason(
    cell: Mapping[str, Any],
    case: Case,
    router: Target,
    row: Mapping[str, Any] | None,
    routing: Mapping[str, Any],
    by_model: Mapping[str, Target],
    baseline: Manifest,
    preview: Manifest,
) -> str | None:
    if case.benchmark not in REPLAY_BENCHMARKS:
        return "unsupported_benchmark"
    if row is None or row.get("status") != "completed" or not routing:
        return "preview_cell_not_completed"
    reason = routing_reason(routing)
    if reason is not None:
        return reason
    single = by_model.get(str(cell["selected_model"]))
    if single is None:
        return "selected_model_not_in_baseline"
    if request_params_for(baseline, single) != request_params_for(preview, router):
        return "parameters_differ"
    return None


def refusal(review_doc: Mapping[str, Any]) -> str:
    """One line naming every reason a review refuses the replay (run-level, then per cell)."""
    parts = list(review_doc["problems"])
    bad = [c for c in review_doc["cells"] if c["reason"]]
    for cell in bad[:20]:
        parts.append(f"{cell['target_id']} × {cell['case_id']}: {cell['reason']}")
    if len(bad) > 20:
        parts.append(f"… and {len(bad) - 20} more ineligible cells")
    if not review_doc["cells"]:
        parts.append("the preview has no routed cells")
    return (
        f"cannot replay preview {review_doc['preview_run_id']} on baseline "
        f"{review_doc['baseline_run_id']}: " + "; ".join(parts)
    )


def replay_manifest(preview: Manifest, baseline_run_id: str, preview_run_id: str) -> Manifest:
    """The replay run's frozen plan: the preview's cases, targets and sampling, mode
    ``replay`` with its sources, named "Offline replay: …"."""
    routers = ", ".join(t.id for t in preview.targets)
    return seal(
        preview.model_copy(
            update={
                "mode": "replay",
                "name": f"Offline replay: {routers} on {baseline_run_id} via {preview_run_id}",
                "preview_context": None,
                "replay_sources": {
                    "baseline_run_id": baseline_run_id,
                    "preview_run_id": preview_run_id,
                },
                "plan_sha256": "",
            }
        )
    )


def replayed_call(
    source: Mapping[str, Any], call_id: str, target_id: str, routing: Mapping[str, Any]
) -> dict[str, Any]:
    """The receipt of a replayed call: the source call's answer and accounting (estimates in a
    replay report), status ``replayed``, ``source_call_id`` naming it, the router's routing."""
    call = {k: v for k, v in source.items() if not k.startswith("_")}
    call.pop("session_id", None)
    decision = routing.get("decision_result")
    call.update(
        {
            "id": call_id,
            "target_id": target_id,
            "status": "replayed",
            "source_call_id": source["id"],
            "selected_model": routing.get("selected_model"),
            "decision": decision.get("decision_name") if isinstance(decision, Mapping) else None,
        }
    )
    return call


def replayed_result(
    source: Mapping[str, Any],
    target_id: str,
    routing: Mapping[str, Any],
    baseline_target_id: str,
    source_call_id: str,
) -> dict[str, Any]:
    """The result row of a replayed cell: the baseline cell's graded outcome under the router's
    id, ``details.evidence_mode`` ``offline_estimate`` and the preview's routing."""
    row = {k: v for k, v in source.items() if not k.startswith("_")}
    row["target_id"] = target_id
    row["call_count"] = 1
    row["details"] = {
        **(source.get("details") or {}),
        "routing": dict(routing),
        "evidence_mode": EVIDENCE_MODE,
        "replay": {"baseline_target_id": baseline_target_id, "source_call_id": source_call_id},
    }
    return row
