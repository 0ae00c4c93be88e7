"""What explains a score: how each target's answers ended per benchmark, and what a proxy in
front of a model did (pure functions of the plan, the cells and the call receipts).

Answer outcomes put every planned cell in one class — ``correct``; ``wrong`` (graded, not
correct); ``unparsed`` (no answer could be read from the text); ``ambiguous`` (several
answers); ``failed`` (no graded outcome: failed, cancelled, unknown); ``pending`` (never
finished) — with its share of the planned cells. When ``unparsed`` is the largest class, one
raw answer of the model (the first such cell's last subject reply, at most ``EXAMPLE_CHARS``
characters) shows what it wrote instead. When unparsed cells are more than half of the
answered ones (every cell that got a reply: correct, wrong, unparsed, ambiguous), the row
names the answer forms the grader accepts (``accepted_forms``, from the unparsed cells'
``details``) and the grader's reason for the first of them (``parse_reason``).

Proxy provenance reads LiteLLM's receipts (``core.calls.receipts.proxy_of``): per target, the
backend model and the model group behind each call, fallbacks (calls that fell back, and how
many times in all), retries, and calls whose usage the proxy estimated because its backend
sent none (their cost is unknown; the price of the estimate is shown apart).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_srbench.core.calls.receipts import proxy_of
from pytest_srbench.core.models import FAILED_CELL_STATUSES, Manifest

OUTCOME_CLASSES = ("correct", "wrong", "unparsed", "ambiguous", "failed", "pending")
ANSWERED_CLASSES = ("correct", "wrong", "unparsed", "ambiguous")  # the cells that got a reply
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


def last_reply(calls: Iterable[Row]) -> str | None:
    """The last subject reply text among one cell's calls (in stored order)."""
    text = None
    for call in calls:
        if call.get("role") == "subject" and isinstance(call.get("final"), str):
            text = call["final"]
    return text


class AnswerOutcomes:
    """Answer outcomes, fed one planned cell at a time (with that cell's calls); it keeps a
    count per class and at most one example per target and benchmark."""

    def __init__(self, manifest: Manifest) -> None:
        self.target_ids = [target.id for target in manifest.targets]
        self.counts: dict[tuple[str, str], Counter[str]] = {}
        self.examples: dict[tuple[str, str], dict[str, Any]] = {}
        self.reasons: dict[tuple[str, str], tuple[str | None, str | None]] = {}

    def add(self, cell: Row, calls: Iterable[Row], details: Row | None = None) -> None:
        """One planned cell, its calls and its result's ``details`` (the grader's)."""
        key = (cell["target_id"], cell["benchmark"])
        outcome = outcome_class(cell)
        counts = self.counts.get(key)
        if counts is None:
            counts = self.counts[key] = Counter()
        counts[outcome] += 1
        if outcome == "unparsed" and key not in self.examples:
            text = last_reply(calls)
            if text is not None:
                self.examples[key] = {"case_id": cell["case_id"], **raw_answer(text)}
        if outcome == "unparsed" and key not in self.reasons and details:
            forms, reason = details.get("accepted_forms"), details.get("parse_reason")
            if isinstance(forms, str) or isinstance(reason, str):
                self.reasons[key] = (
                    forms if isinstance(forms, str) else None,
                    reason if isinstance(reason, str) else None,
                )

    def rows(self) -> list[dict[str, Any]]:
        """Per target and benchmark (the report's order): each class's count and share of the
        planned cells, the largest class, and a raw answer when ``unparsed`` is the largest."""
        rows = []
        for target_id in self.target_ids:
            for benchmark in sorted({b for t, b in self.counts if t == target_id}):
                counts = self.counts[(target_id, benchmark)]
                total = sum(counts.values())
                ordered = {name: counts.get(name, 0) for name in OUTCOME_CLASSES}
                largest = max(ordered.values())
                dominant = next(name for name, n in ordered.items() if n == largest)
                example = None
                if ordered["unparsed"] == largest > 0:
                    example = self.examples.get((target_id, benchmark))
                answered = sum(ordered[name] for name in ANSWERED_CLASSES)
                forms = reason = None
                if ordered["unparsed"] * 2 > answered:
                    forms, reason = self.reasons.get((target_id, benchmark), (None, None))
                rows.append(
                    {
                        "target_id": target_id,
                        "benchmark": benchmark,
                        "cells": total,
                        "counts": ordered,
                        "shares": {name: n / total for name, n in ordered.items()},
                        "dominant": dominant,
                        "example": example,
                        "accepted_forms": forms,
                        "parse_reason": reason if forms is not None else None,
                    }
                )
        return rows


class ProxyProvenance:
    """Proxy provenance, fed one call at a time."""

    def __init__(self, manifest: Manifest) -> None:
        self.target_ids = [target.id for target in manifest.targets]
        self.proxied: dict[str, list[tuple[Row, Row]]] = {}

    def add(self, call: Row) -> None:
        if call.get("role") != "subject":
            return
        proxy = call.get("proxy")
        if not proxy:  # (headers of no proxy: proxy_of({}) is None)
            router = call.get("router")
            proxy = proxy_of(router) if router else None
        if proxy is not None:
            self.proxied.setdefault(str(call.get("target_id")), []).append((call, proxy))

    def rows(self) -> list[dict[str, Any]]:
        """Per target whose subject calls went through a proxy: what the proxy did (see the
        module docstring); ``calls`` lists each proxied call's backend model, group and
        fallbacks."""
        return [
            _proxy_row(target_id, self.proxied[target_id])
            for target_id in self.target_ids
            if self.proxied.get(target_id)
        ]


def _proxy_row(target_id: str, proxied: Sequence[tuple[Row, Row]]) -> dict[str, Any]:
    estimated = [call for call, _ in proxied if call.get("usage_estimated")]
    estimates = [call.get("estimated_cost_usd") for call in estimated]
    known = [float(v) for v in estimates if isinstance(v, int | float)]
    fallbacks = [proxy.get("attempted_fallbacks") or 0 for _, proxy in proxied]
    return {
        "target_id": target_id,
        "proxy": sorted({str(proxy.get("name")) for _, proxy in proxied}),
        "versions": sorted({str(p["version"]) for _, p in proxied if p.get("version")}),
        "call_count": len(proxied),
        "backend_models": dict(Counter(str(proxy.get("backend_model")) for _, proxy in proxied)),
        "model_groups": dict(Counter(str(proxy.get("model_group")) for _, proxy in proxied)),
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
