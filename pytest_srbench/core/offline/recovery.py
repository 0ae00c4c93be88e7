"""Explicit recovery (run-lifecycle.md §8), pure: which cells of a terminal parent run may be
attempted again, the reviewed plan document, and the child manifest over exactly the selected
cells. Nothing here sends a request; a child is a new run, the parent is never modified.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import orjson

from pytest_srbench.core.canonical import canonical_json, digest
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import TERMINAL_RUN_STATUSES, Cell, Manifest, PlanOutline, Run
from pytest_srbench.core.plan.build import seal
from pytest_srbench.core.plan.choices import RECOVERY_MODES

MODES = RECOVERY_MODES
ALLOWED_FINISH = frozenset({"stop", "tool_calls", "function_call", "length"})
SETTLED_CALLS = frozenset({"completed", "failed", "cancelled", "replayed"})  # replayed: cached
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
    """What recovery needs to know of one call (read through the accounting view), in the
    order of the store's columns; a cost of None is an unknown cost."""

    call_id: str
    case_id: str
    target_id: str
    status: str
    usage_known: bool
    cost_usd: float | None
    finish_reason: str | None


# One cell's calls summed up: (how many, one still sent / sent_unknown, one unsettled or without
# known usage, cost or an allowed finish reason); a plain tuple, made once per call.
CellCalls = tuple[int, bool, bool]


class CallSummary(NamedTuple):
    """Every call of a run as recovery sees it: per cell, and the run's known spend."""

    cells: dict[tuple[str, str], CellCalls]
    spend_usd: float
    spend_complete: bool


AMBIGUOUS_CALLS = frozenset({"sent", "sent_unknown"})


def known_spend(costs: Sequence[float | None]) -> tuple[float, bool]:
    """The run's known spend (the exactly rounded sum of the known costs, so neither the order
    the calls are read in nor the Python version changes it) and whether every cost is known."""
    known = [cost for cost in costs if cost is not None]
    return math.fsum(known), len(known) == len(costs)


def summarize_calls(calls: Iterable[Sequence[Any]]) -> CallSummary:
    """Sum the calls up per cell; each call is a ``CallFacts`` or a plain row of the store in
    its field order (no object per call)."""
    cells: dict[tuple[str, str], CellCalls] = {}
    costs: list[float | None] = []
    allowed, settled, ambiguous_states = ALLOWED_FINISH, SETTLED_CALLS, AMBIGUOUS_CALLS
    for _, case_id, target_id, status, usage_known, cost, finish in calls:
        costs.append(cost)
        ambiguous = status in ambiguous_states
        unaccounted = (
            not usage_known or cost is None or finish not in allowed or status not in settled
        )
        key = (case_id, target_id)
        cell = cells.get(key)
        if cell is None:
            cells[key] = (1, ambiguous, unaccounted)
        else:
            cells[key] = (cell[0] + 1, cell[1] or ambiguous, cell[2] or unaccounted)
    return CallSummary(cells, *known_spend(costs))


def summary_of_open_cells(
    open_cells: Iterable[Sequence[Any]], costs: Sequence[float | None]
) -> CallSummary:
    """The summary from the store's own sums: (case, target, calls, any ambiguous, any
    unaccounted) per cell whose result is not completed (``store.open_cell_calls``), and every
    call's cost. A completed cell is excluded whatever its calls, so leaving it out of
    ``cells`` changes no plan."""
    cells = {
        (case_id, target_id): (count, bool(ambiguous), bool(unaccounted))
        for case_id, target_id, count, ambiguous, unaccounted in open_cells
    }
    return CallSummary(cells, *known_spend(costs))


def _cell_key(cell: Mapping[str, Any] | Cell) -> tuple[str, str]:
    if isinstance(cell, Cell):
        return cell.case_id, cell.target_id
    return str(cell["case_id"]), str(cell["target_id"])


def exclusion(
    mode: str,
    result_status: str | None,
    claimed: bool,
    calls: CellCalls | None,
) -> str | None:
    """The first matching exclusion reason of §8.1 for one parent cell, or None (eligible);
    ``calls`` is None for a cell without calls."""
    if result_status == "completed":
        return "completed_evidence_is_preserved"
    if claimed:
        return "already_claimed_by_child_attempt"
    if calls is not None and calls[1]:
        return "ambiguous_dispatch_requires_reconciliation"
    if result_status == "sent_unknown":
        return "ambiguous_saved_result_requires_reconciliation"
    if mode == "undispatched" and calls is not None:
        return "already_dispatched_requires_explicit_new_attempt"
    if mode == "failed" and calls is None:
        return "never_dispatched_use_undispatched_mode"
    if mode == "failed" and calls is not None and calls[2]:
        return "unfinished_or_unknown_accounting_requires_reconciliation"
    return None


def recovery_plan(
    outline: PlanOutline,
    run: Run,
    result_statuses: Mapping[tuple[str, str], str],
    calls: CallSummary,
    claimed: set[tuple[str, str]],
    mode: str = "undispatched",
    correction_id: str | None = None,
) -> dict[str, Any]:
    """The read-only recovery plan of §8.1 with its own ``plan_sha256``."""
    if mode not in MODES:
        raise RecoveryError(f"Unknown recovery mode {mode!r}; use one of {', '.join(MODES)}")
    if run.status not in TERMINAL_RUN_STATUSES or outline.mode != "live":
        raise RecoveryError("Recovery requires a terminal live parent attempt")
    planned = outline.cells
    status_of, calls_of = result_statuses.get, calls.cells.get
    kept = "completed_evidence_is_preserved"  # the common case, decided without a call
    reasons = [
        kept
        if (status := status_of(key)) == "completed"
        else exclusion(mode, status, key in claimed, calls_of(key))
        for key in planned
    ]
    eligible = [
        {"case_id": key[0], "target_id": key[1]}
        for key, reason in zip(planned, reasons, strict=True)
        if reason is None
    ]
    excluded = [
        {"case_id": key[0], "target_id": key[1], "reason": reason}
        for key, reason in zip(planned, reasons, strict=True)
        if reason is not None
    ]
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
        "known_spend_usd": calls.spend_usd,
        "spend_complete": calls.spend_complete,
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
    return {**body, "plan_sha256": plan_digest(body)}


def plan_digest(body: dict[str, Any]) -> str:
    """``digest(body)`` of a recovery plan, made fast: orjson with sorted keys writes the same
    canonical JSON as ``canonical_json`` for strings (every code point alike), ints, booleans
    and null, but not every float (1e-05 is its 0.00001), so the plan's two amounts enter as
    the text ``canonical_json`` gives them. A 100,000-cell plan costs a tenth as much."""
    snapshot = body["parent_snapshot"]
    exact = {
        **body,
        "new_attempt_budget_usd": _number(body["new_attempt_budget_usd"]),
        "parent_snapshot": {**snapshot, "known_spend_usd": _number(snapshot["known_spend_usd"])},
    }
    return hashlib.sha256(orjson.dumps(exact, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _number(value: float | None) -> orjson.Fragment | None:
    return None if value is None else orjson.Fragment(canonical_json(value).encode("utf-8"))


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
