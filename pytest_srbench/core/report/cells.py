"""The report's per-cell parts (pure): each planned cell's outcome (``cells``), and the
sections read from those outcomes in planned order — failure groups, latency histograms and
the agreement across repeats. Each section is a runner fed one outcome at a time."""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.core.calls.failures import failure_reason, summarize_failure
from pytest_srbench.core.models import FAILED_CELL_STATUSES, Manifest
from pytest_srbench.core.report.metrics import Row, answer_latency
from pytest_srbench.core.report.tasks import cell_embedding

NOT_GRADED = FAILED_CELL_STATUSES | {"pending", "running"}
HISTOGRAM_BINS = 20
GROUP_EXAMPLES = 20
GROUP_REASONS = 20  # distinct specific reasons listed per group (the rest are counted)
PENDING = "never dispatched (pending)"


def cell_outcome(
    case_id: str,
    target_id: str,
    benchmark: str,
    row: Row | None,
    *,
    rag: bool = False,
    target_kind: str | None = None,
    pending_reason: str | None = None,
) -> dict[str, Any]:
    """One planned cell with its outcome (pending when it has no result row); ``rag``: the
    cell's benchmark is a RAG dataset (its embedding record is kept). ``error`` is the
    failure's specific reason (``failure_reason``); a pending cell's is ``pending_reason``
    when the run knows why it was never dispatched (its target's fixture failed)."""
    if row:  # (the common case, each field read once)
        get = row.get
        details = get("details")
        error = get("error")
        return {
            "case_id": case_id,
            "target_id": target_id,
            "benchmark": benchmark,
            "status": row["status"],
            "correct": get("correct"),
            "answer": get("answer"),
            "answer_status": details.get("answer_status") if details else None,
            "error": failure_reason(str(error)) if error else None,
            "latency_s": answer_latency(row),
            "ttft_s": get("ttft_s"),
            "cost_usd": get("cost_usd"),
            "embedding": cell_embedding(row, target_kind) if rag else None,
        }
    details = (row or {}).get("details") or {}
    if row is None:
        error = pending_reason
    else:
        error = failure_reason(str(row["error"])) if row.get("error") else None
    return {
        "case_id": case_id,
        "target_id": target_id,
        "benchmark": benchmark,
        "status": row["status"] if row else "pending",
        "correct": row.get("correct") if row else None,
        "answer": row.get("answer") if row else None,
        "answer_status": details.get("answer_status"),
        "error": error,
        "latency_s": None if row is None else answer_latency(row),
        "ttft_s": row.get("ttft_s") if row else None,
        "cost_usd": row.get("cost_usd") if row else None,
        "embedding": cell_embedding(row, target_kind) if rag else None,
    }


class FailureGroups:
    """Cells without a graded outcome, grouped by the coarse summary of their reason (most
    frequent first); each group lists its distinct specific reasons (the cells' ``error``)
    with their counts, at most ``GROUP_REASONS`` of them (``other_reasons`` counts the rest)."""

    def __init__(self) -> None:
        self.groups: dict[str, dict[str, Any]] = {}

    def add(self, cell: Mapping[str, Any]) -> None:
        status = cell["status"]
        if status not in NOT_GRADED:
            return
        unreached = {
            "pending": PENDING,
            "running": "still running when the report was built",
        }.get(status)
        specific = cell["error"] or unreached or status
        if unreached is not None:
            reason = unreached
        else:
            reason = summarize_failure(cell["error"]) if cell["error"] else status
        group = self.groups.get(reason)
        if group is None:
            group = self.groups[reason] = {
                "reason": reason, "count": 0, "statuses": {}, "targets": {}, "cells": [],
                "reasons": {}, "other_reasons": 0,
            }  # fmt: skip
        group["count"] += 1
        reasons = group["reasons"]
        if specific in reasons or len(reasons) < GROUP_REASONS:
            reasons[specific] = reasons.get(specific, 0) + 1
        else:
            group["other_reasons"] += 1
        group["statuses"][status] = group["statuses"].get(status, 0) + 1
        group["targets"][cell["target_id"]] = group["targets"].get(cell["target_id"], 0) + 1
        if len(group["cells"]) < GROUP_EXAMPLES:
            group["cells"].append({"case_id": cell["case_id"], "target_id": cell["target_id"]})

    def rows(self) -> list[dict[str, Any]]:
        rows = []
        for group in sorted(self.groups.values(), key=lambda g: (-g["count"], g["reason"])):
            reasons = sorted(group["reasons"].items(), key=lambda item: (-item[1], item[0]))
            rows.append({**group, "reasons": [{"reason": r, "count": n} for r, n in reasons]})
        return rows


class Distributions:
    """Histograms of per-cell TTFT and latency (completed cells), shared edges per measure;
    one float per completed cell and measure is kept until the edges are known."""

    MEASURES = ("ttft_s", "latency_s")

    def __init__(self, target_ids: Sequence[str]) -> None:
        self.values = {m: {t: array("d") for t in target_ids} for m in self.MEASURES}

    def add(self, cell: Mapping[str, Any]) -> None:
        if cell["status"] != "completed":
            return
        for measure in self.MEASURES:
            values = self.values[measure].get(cell["target_id"])
            if values is not None and cell[measure] is not None:
                values.append(float(cell[measure]))

    def histograms(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for measure, by_target in self.values.items():
            top = max((max(vs) for vs in by_target.values() if vs), default=0.0)
            width = top / HISTOGRAM_BINS if top > 0 else 1.0
            edges = [round(i * width, 9) for i in range(HISTOGRAM_BINS + 1)]
            counts = {}
            for target_id, vs in by_target.items():
                bins = [0] * HISTOGRAM_BINS
                for v in vs:
                    bins[min(int(v / width), HISTOGRAM_BINS - 1)] += 1
                counts[target_id] = bins
            out[measure] = {"edges": edges, "counts": counts}
        return out


class RepeatAgreement:
    """Per-case agreement across repeats and per-target flip rates.

    A repeat's outcome is known once its cell is completed (its ``correct``) or failed
    (incorrect); other repeats are left out of the case's agreement. Keeps (observed, correct)
    per (target, original case): the cases the section lists.
    """

    def __init__(self, manifest: Manifest) -> None:
        self.manifest = manifest
        self.original = {
            case.id: case.metadata.get("repeat_of") or case.id for case in manifest.cases
        }
        self.outcomes: dict[tuple[str, str], list[int]] = {}

    def add(self, cell: Mapping[str, Any]) -> None:
        key = (cell["target_id"], self.original[cell["case_id"]])
        counts = self.outcomes.get(key)
        if counts is None:
            counts = self.outcomes[key] = [0, 0]
        if cell["status"] == "completed" and isinstance(cell["correct"], bool):
            counts[0] += 1
            counts[1] += cell["correct"]
        elif cell["status"] == "failed":
            counts[0] += 1

    def section(self) -> dict[str, Any]:
        cases: list[dict[str, Any]] = []
        for (target_id, case_id), (m, right) in self.outcomes.items():
            cases.append(
                {
                    "case_id": case_id,
                    "target_id": target_id,
                    "observed": m,
                    "correct": right,
                    "agreement": max(right, m - right) / m if m else None,
                    "pairwise_disagreement": 2 * right * (m - right) / (m * (m - 1))
                    if m > 1
                    else None,
                }
            )
        repeats = self.manifest.repeats
        targets = []
        for target in self.manifest.targets:
            own = [c for c in cases if c["target_id"] == target.id]
            full = [c for c in own if c["observed"] == repeats]
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
        return {"repeats": repeats, "targets": targets, "cases": cases}
