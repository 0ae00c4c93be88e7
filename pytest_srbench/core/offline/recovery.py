"""Explicit recovery (run-lifecycle.md §8), pure: which cells of a terminal parent run may be
attempted again, the reviewed plan document, and the child manifest over exactly the selected
cells. Nothing here sends a request; a child is a new run, the parent is never modified.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from pytest_srbench.core.canonical import digest
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import TERMINAL_RUN_STATUSES, Cell, Manifest, PlanOutline, Run
from pytest_srbench.core.plan.build import seal
from pytest_srbench.core.plan.choices import RECOVERY_MODES

MODES = RECOVERY_MODES
ALLOWED_FINISH = frozenset({"stop", "tool_calls", "function_call", "length"})
SETTLED_CALLS = frozenset({"completed", "failed", "cancelled"})
SCOPE = (
    "A recovery child re-attempts only the listed cells of its parent; its own report covers "
    "those cells, the parent is never modified, and a child never yields a full sr-bench score."
)


class RecoveryError(InputError):
    """A recovery request cannot proceed; ``code`` names the rule (e.g. recovery_plan_required)."""

    def __init__(self, message: str, code: str = "recovery_rejected") -> None:
        super().__init__(message)
        self.code = code


class CallFacts(NamedTuple):
    """What recovery needs to know of one call (read through the accounting view)."""

    case_id: str
    target_id: str
    status: str
    usage_known: bool
    cost_known: bool
    finish_reason: str | None
    cost_usd: float | None


def _cell_key(cell: Mapping[str, Any] | Cell) -> tuple[str, str]:
    if isinstance(cell, Cell):
        return cell.case_id, cell.target_id
    return str(cell["case_id"]), str(cell["target_id"])


def exclusion(
    mode: str,
    result_status: str | None,
    claimed: bool,
    calls: Sequence[CallFacts],
) -> str | None:
    """The first matching exclusion reason of §8.1 for one parent cell, or None (eligible)."""
    if result_status == "completed":
        return "completed_evidence_is_preserved"
    if claimed:
        return "already_claimed_by_child_attempt"
    if any(call.status in ("sent", "sent_unknown") for call in calls):
        return "ambiguous_dispatch_requires_reconciliation"
    if result_status == "sent_unknown":
        return "ambiguous_saved_result_requires_reconciliation"
    if mode == "undispatched" and calls:
        return "already_dispatched_requires_explicit_new_attempt"
    if mode == "failed" and not calls:
        return "never_dispatched_use_undispatched_mode"
    if mode == "failed" and any(
        not call.usage_known
        or not call.cost_known
        or call.finish_reason not in ALLOWED_FINISH
        or call.status not in SETTLED_CALLS
        for call in calls
    ):
        return "unfinished_or_unknown_accounting_requires_reconciliation"
    return None


def recovery_plan(
    outline: PlanOutline,
    run: Run,
    result_statuses: Mapping[tuple[str, str], str],
    calls: Iterable[CallFacts],
    claimed: set[tuple[str, str]],
    mode: str = "undispatched",
    correction_id: str | None = None,
) -> dict[str, Any]:
    """The read-only recovery plan of §8.1 with its own ``plan_sha256``."""
    if mode not in MODES:
        raise RecoveryError(f"Unknown recovery mode {mode!r}; use one of {', '.join(MODES)}")
    if run.status not in TERMINAL_RUN_STATUSES or outline.mode != "live":
        raise RecoveryError("Recovery requires a terminal live parent attempt")
    by_cell: dict[tuple[str, str], list[CallFacts]] = {}
    spend = 0.0
    spend_complete = True
    for call in calls:
        key = (call.case_id, call.target_id)
        found = by_cell.get(key)
        if found is None:
            by_cell[key] = [call]
        else:
            found.append(call)
        if call.cost_usd is None:
            spend_complete = False
        else:
            spend += call.cost_usd
    eligible: list[dict[str, str]] = []
    excluded: list[dict[str, str]] = []
    planned = outline.cells
    status_of, calls_of, no_calls = result_statuses.get, by_cell.get, list[CallFacts]()
    for key in planned:
        reason = exclusion(mode, status_of(key), key in claimed, calls_of(key, no_calls))
        if reason is None:
            eligible.append({"case_id": key[0], "target_id": key[1]})
        else:
            excluded.append({"case_id": key[0], "target_id": key[1], "reason": reason})
    statuses = list(result_statuses.values())
    completed = statuses.count("completed")
    running = statuses.count("running")
    snapshot: dict[str, Any] = {
        "status": run.status,
        "progress": {
            "total": len(planned),
            "completed": completed,
            "running": running,
            "failed": len(statuses) - completed - running,
            "pending": len(planned) - len(statuses),
        },
        "known_spend_usd": spend,
        "spend_complete": spend_complete,
        "plan_sha256": outline.plan_sha256,
    }
    if correction_id is not None:
        snapshot["accounting_correction"] = correction_id
    body: dict[str, Any] = {
        "parent_run_id": run.id,
        "mode": mode,
        "eligible_cells": eligible,
        "excluded": excluded,
        "counts": {"eligible": len(eligible), "excluded": len(excluded)},
        "parent_snapshot": snapshot,
        "new_attempt_budget_usd": outline.max_cost_usd,
        "requires_new_attempt_acknowledgment": mode == "failed",
        "scope": SCOPE,
    }
    return {**body, "plan_sha256": digest(body)}


def selected_cells(plan: Mapping[str, Any]) -> list[dict[str, str]]:
    """A reviewer's ``selected_cells`` when present, else every eligible cell."""
    cells = plan.get("selected_cells")
    if cells is None:
        cells = plan.get("eligible_cells") or []
    return [{"case_id": str(c["case_id"]), "target_id": str(c["target_id"])} for c in cells]


def check_request(
    *,
    plan: Mapping[str, Any],
    parent_run_id: str,
    cells: Sequence[Mapping[str, Any]],
    idempotency_key: str | None,
    acknowledge_new_attempt: bool,
) -> list[tuple[str, str]]:
    """The request's own checks of §8.2, in order (before idempotency and eligibility)."""
    if plan.get("parent_run_id") != parent_run_id:
        raise RecoveryError("Recovery plan belongs to another parent run")
    if not idempotency_key or not idempotency_key.strip():
        raise RecoveryError("An idempotency key is required for recovery")
    keys = []
    for cell in cells:
        if not isinstance(cell, Mapping) or set(cell) != {"case_id", "target_id"}:
            raise RecoveryError("Each selected cell must be exactly {case_id, target_id}")
        keys.append(_cell_key(cell))
    if not keys:
        raise RecoveryError("Select at least one cell to recover")
    if len(set(keys)) != len(keys):
        raise RecoveryError("Selected cells contain duplicates")
    if plan.get("mode") == "failed" and not acknowledge_new_attempt:
        raise RecoveryError("Failed attempts require explicit new-attempt/spend acknowledgment")
    return keys


def check_eligibility(
    plan: Mapping[str, Any], fresh: Mapping[str, Any], keys: Sequence[tuple[str, str]]
) -> None:
    """The saved plan must still be the fresh plan, and the cells among its eligible ones."""
    if plan.get("plan_sha256") != fresh["plan_sha256"]:
        raise RecoveryError(
            "Recovery eligibility changed; inspect a fresh recovery plan", "recovery_plan_required"
        )
    eligible = {_cell_key(c) for c in fresh["eligible_cells"]}
    if not set(keys) <= eligible:
        raise RecoveryError(
            "Selected cells are not eligible for this recovery mode", "recovery_plan_required"
        )


def child_manifest(
    parent: Manifest, plan: Mapping[str, Any], cells: Sequence[tuple[str, str]]
) -> Manifest:
    """The parent's frozen plan restricted to ``cells`` (in parent planned order), marked as a
    recovery subset and re-frozen with a new plan hash."""
    chosen = set(cells)
    ordered = [c for c in parent.planned_cells() if (c.case_id, c.target_id) in chosen]
    target_ids = {c.target_id for c in ordered}
    case_ids = {c.case_id for c in ordered}
    targets = [t for t in parent.targets if t.id in target_ids]
    auxiliary = dict(parent.auxiliary_targets)
    bound = {
        value
        for options in parent.benchmark_options.values()
        for role, value in options.items()
        if role in ("judge", "simulator")
    }
    for target in parent.targets:
        if target.id not in target_ids and target.id in bound:
            auxiliary[target.id] = target
    selection = [{"case_id": c.case_id, "target_id": c.target_id} for c in ordered]
    recovery = {
        "parent_run_id": plan["parent_run_id"],
        "mode": plan["mode"],
        "selected_cells": selection,
        "selected_cells_sha256": digest(selection),
        "parent_snapshot": plan["parent_snapshot"],
        "recovery_subset": True,
        "new_attempt_acknowledged": plan["mode"] == "failed",
    }
    child = parent.model_copy(
        update={
            "name": f"Recovery subset: {parent.name}",
            "targets": targets,
            "auxiliary_targets": auxiliary,
            "cases": [case for case in parent.cases if case.id in case_ids],
            "execution_cells": ordered,
            "recovery": recovery,
            "plan_sha256": "",
        }
    )
    return seal(child)


def same_attempt(
    existing: Manifest, parent_run_id: str, mode: str, cells: Sequence[tuple[str, str]]
) -> bool:
    """Whether an existing child (found by idempotency key) is this very request."""
    recovery = existing.recovery or {}
    selection = {(c["case_id"], c["target_id"]) for c in recovery.get("selected_cells") or []}
    return (
        recovery.get("parent_run_id") == parent_run_id
        and recovery.get("mode") == mode
        and selection == set(cells)
    )
