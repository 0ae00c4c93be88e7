"""What explains a score: how each target's answers ended per benchmark, and what a proxy in
front of a model did (pure functions of the plan, the cells and the call receipts).

Answer outcomes put every planned cell in one class — ``correct``; ``wrong`` (graded, not
correct); ``unparsed`` (no answer could be read from the text); ``ambiguous`` (several
answers); ``failed`` (no graded outcome: failed, cancelled, unknown); ``pending`` (never
finished) — with its share of the planned cells. When ``unparsed`` is the largest class, one
raw answer of the model (the first such cell's last subject reply, at most ``EXAMPLE_CHARS``
characters) shows what it wrote instead.

Proxy provenance reads LiteLLM's receipts (``core.calls.receipts.proxy_of``): per target, the
backend model and the model group behind each call, fallbacks (calls that fell back, and how
many times in all), retries, and calls whose usage the proxy estimated because its backend
sent none (their cost is unknown; the price of the estimate is shown apart).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.core.calls.receipts import proxy_of
from pytest_srbench.core.models import FAILED_CELL_STATUSES, Manifest

OUTCOME_CLASSES = ("correct", "wrong", "unparsed", "ambiguous", "failed", "pending")
EXAMPLE_CHARS = 240
Row = Mapping[str, Any]


def outcome_class(cell: Row) -> str:
    """The one class of a planned cell (see the module docstring)."""
    status = cell.get("status")
    if status in FAILED_CELL_STATUSES:
        return "failed"
    if status != "completed":
        return "pending"
    if cell.get("correct") is True:
        return "correct"
    if cell.get("answer_status") in ("unparsed", "ambiguous"):
        return str(cell["answer_status"])
    return "wrong"


def raw_answer(text: str, limit: int = EXAMPLE_CHARS) -> dict[str, Any]:
    """A model's reply, cut to ``limit`` characters (renderers escape it)."""
    return {"text": text[:limit], "chars": len(text), "truncated": len(text) > limit}


def _last_replies(calls: Sequence[Row]) -> dict[tuple[str, str], str]:
    """The last subject reply text of every (case, target), in stored order."""
    replies: dict[tuple[str, str], str] = {}
    for call in calls:
        if call.get("role") == "subject" and isinstance(call.get("final"), str):
            replies[(call["case_id"], call["target_id"])] = call["final"]
    return replies


def answer_outcomes(
    manifest: Manifest, cells: Sequence[Row], calls: Sequence[Row]
) -> list[dict[str, Any]]:
    """Per target and benchmark (the report's order): each class's count and share of the
    planned cells, the largest class, and a raw answer when ``unparsed`` is the largest."""
    replies = _last_replies(calls)
    groups: dict[tuple[str, str], list[Row]] = {}
    for cell in cells:
        groups.setdefault((cell["target_id"], cell["benchmark"]), []).append(cell)
    rows = []
    for target in manifest.targets:
        for benchmark in sorted({b for t, b in groups if t == target.id}):
            members = groups[(target.id, benchmark)]
            counts = Counter(outcome_class(cell) for cell in members)
            total = len(members)
            ordered = {name: counts.get(name, 0) for name in OUTCOME_CLASSES}
            largest = max(ordered.values())
            dominant = next(name for name, n in ordered.items() if n == largest)
            example = None
            if ordered["unparsed"] == largest > 0:
                for cell in members:
                    text = replies.get((cell["case_id"], cell["target_id"]))
                    if outcome_class(cell) == "unparsed" and text is not None:
                        example = {"case_id": cell["case_id"], **raw_answer(text)}
                        break
            rows.append(
                {
                    "target_id": target.id,
                    "benchmark": benchmark,
                    "cells": total,
                    "counts": ordered,
                    "shares": {name: n / total for name, n in ordered.items()},
                    "dominant": dominant,
                    "example": example,
                }
            )
    return rows


def proxy_provenance(manifest: Manifest, calls: Sequence[Row]) -> list[dict[str, Any]]:
    """Per target whose subject calls went through a proxy: what the proxy did (see the module
    docstring); ``calls`` lists each proxied call's backend model, group and fallbacks."""
    rows = []
    for target in manifest.targets:
        proxied = []
        for call in calls:
            if call.get("target_id") != target.id or call.get("role") != "subject":
                continue
            proxy = call.get("proxy") or proxy_of(call.get("router") or {})
            if proxy is not None:
                proxied.append((call, proxy))
        if not proxied:
            continue
        estimated = [call for call, _ in proxied if call.get("usage_estimated")]
        estimates = [call.get("estimated_cost_usd") for call in estimated]
        known = [float(v) for v in estimates if isinstance(v, int | float)]
        fallbacks = [proxy.get("attempted_fallbacks") or 0 for _, proxy in proxied]
        rows.append(
            {
                "target_id": target.id,
                "proxy": sorted({str(proxy.get("name")) for _, proxy in proxied}),
                "versions": sorted({str(p["version"]) for _, p in proxied if p.get("version")}),
                "call_count": len(proxied),
                "backend_models": dict(
                    Counter(str(proxy.get("backend_model")) for _, proxy in proxied)
                ),
                "model_groups": dict(
                    Counter(str(proxy.get("model_group")) for _, proxy in proxied)
                ),
                "fallback_calls": sum(1 for n in fallbacks if n > 0),
                "fallbacks": sum(fallbacks),
                "retries": sum(proxy.get("attempted_retries") or 0 for _, proxy in proxied),
                "estimated_usage_calls": len(estimated),
                "estimated_cost_usd": math.fsum(known)
                if estimated and len(known) == len(estimates)
                else None,
                "calls": [
                    {
                        "case_id": call.get("case_id"),
                        "backend_model": proxy.get("backend_model"),
                        "model_group": proxy.get("model_group"),
                        "attempted_fallbacks": proxy.get("attempted_fallbacks"),
                        "usage_estimated": bool(call.get("usage_estimated")),
                        "status": call.get("status"),
                    }
                    for call, proxy in proxied
                ],
            }
        )
    return rows


def explanation_limitations(manifest: Manifest, proxies: Sequence[Row]) -> list[str]:
    """Caveats these sections bring: simulated judges or users of real targets, and usage a
    proxy estimated."""
    lines = []
    simulated = sorted(
        target_id for target_id, target in manifest.auxiliary_targets.items() if target.simulated
    )
    if simulated and not all(t.simulated for t in manifest.targets):
        lines.append(
            "Judge / user-simulator targets " + ", ".join(simulated) + " are simulated: the "
            "built-in simulator answers them (a deterministic reference-match rule for "
            "judges, scripted turns for users), their receipts say simulated, and their cost "
            "is synthetic."
        )
    for row in proxies:
        if row["estimated_usage_calls"]:
            lines.append(
                f"{row['estimated_usage_calls']} of {row['call_count']} proxied calls of "
                f"{row['target_id']} carry usage the proxy ({', '.join(row['proxy'])}) "
                "estimated because its backend sent none: those tokens are the proxy's count "
                "and their cost is unknown."
            )
    return lines
