"""A run's lineage and accounting correction in words, as the text and HTML reports print
them (docs/durability.md): a recovery child names its parent and the parent's known spend,
a parent lists its child attempts, a correction gives its hash, time, verified and changed
call counts and the known spend before and after. Pure formatting of the report's fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _usd(value: Any) -> str:
    return "unknown" if value is None else f"${float(value):.6f}"


def recovery_line(report: Mapping[str, Any]) -> str | None:
    """What a recovery child is a subset of, and what its parent had already spent."""
    recovery = report.get("recovery")
    if not recovery:
        return None
    snapshot = recovery.get("parent_snapshot") or {}
    cells = len(recovery.get("selected_cells") or [])
    mode = recovery.get("mode")
    scope = "undispatched cells" if mode == "undispatched" else "known failed cells, new attempts"
    return (
        f"Recovery subset of run {recovery.get('parent_run_id')} ({cells} cells; {scope}). "
        f"The parent's known spend {_usd(snapshot.get('known_spend_usd'))} is its own and is "
        "not in this run's cost; this run's denominators, progress and cost cover only the "
        "selected cells, and its completion does not complete the parent's benchmarks."
    )


def children_line(report: Mapping[str, Any]) -> str | None:
    """The recovery children of a parent run, oldest first."""
    children = report.get("child_attempts") or []
    if not children:
        return None
    listed = "; ".join(
        f"{child.get('run_id')} ({child.get('status')}, {child.get('mode')}, "
        f"{child.get('cells')} cells)"
        for child in children
    )
    return (
        f"Recovery children ({len(children)}): {listed}. Each is a separate run with its own cost."
    )


def correction_line(report: Mapping[str, Any]) -> str | None:
    """The accounting correction the report reads its costs through."""
    correction = (report.get("provenance") or {}).get("accounting_correction")
    if not correction:
        return None
    when = correction.get("created_at") or "time not recorded"
    return (
        f"Accounting correction {correction.get('id')} (evidence sha256 "
        f"{str(correction.get('evidence_sha256') or '')[:16]}, {when}): "
        f"{correction.get('verified_call_count')} calls verified, "
        f"{correction.get('corrected_call_count')} changed, "
        f"{correction.get('unverifiable_call_count')} unverifiable; known spend "
        f"{_usd(correction.get('original_known_spend_usd'))} before, "
        f"{_usd(correction.get('corrected_known_spend_usd'))} after. Costs here read the "
        "corrected accounting; the original receipts are kept."
    )


def lineage_lines(report: Mapping[str, Any]) -> list[str]:
    """Every lineage and correction sentence that applies to the report, in that order."""
    return [
        line
        for line in (recovery_line(report), children_line(report), correction_line(report))
        if line
    ]
