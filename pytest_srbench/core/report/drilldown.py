"""What a person sees when they open one case: the prompt, each target's final answer, its
grade and its receipts — summarised (bounded text), never the raw evidence (pure).

Reference answers appear only where the suite allows it: a suite's ``reveal_answers`` says so;
without it shipped suites reveal and GPQA-Diamond and HLE (whose publishers ask that items not
be reposted) do not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.core.calls.failures import summarize_failure
from pytest_srbench.core.canonical import canonical_json
from pytest_srbench.core.models import Case, Manifest

HIDDEN_BY_DEFAULT = frozenset({"gpqa-diamond", "hle"})
TEXT_LIMIT = 1200
RECEIPT_FIELDS = (
    "role", "status", "model", "selected_model", "decision", "phase", "attempt", "usage",
    "cost_usd", "latency_s", "ttft_s", "finish_reason", "inference_call_count",
)  # fmt: skip


def clip(text: str, limit: int = TEXT_LIMIT) -> str:
    """At most ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters in the store]"


def reveals_answers(manifest: Manifest) -> dict[str, bool]:
    """Per benchmark: may the report show reference answers?"""
    allowed: dict[str, bool] = {}
    for suite in manifest.dataset.suites:
        benchmark = str(suite.get("benchmark"))
        explicit = suite.get("reveal_answers")
        if isinstance(explicit, bool):
            allowed[benchmark] = explicit
        else:
            allowed[benchmark] = (
                suite.get("location") == "shipped" or benchmark not in HIDDEN_BY_DEFAULT
            )
    return allowed


def _message_text(message: Any) -> str:
    content = message.content if hasattr(message, "content") else message.get("content")
    role = message.role if hasattr(message, "role") else message.get("role")
    text = content if isinstance(content, str) else canonical_json(content)
    return f"[{role}] {text}"


def _receipt(call: Mapping[str, Any]) -> dict[str, Any]:
    receipt = {key: call.get(key) for key in RECEIPT_FIELDS}
    if call.get("error"):
        receipt["error"] = summarize_failure(str(call["error"]))
    return receipt


def case_detail(case: Case, reveal: Mapping[str, bool], limit: int = TEXT_LIMIT) -> dict[str, Any]:
    """What the drill-down shows of one case: its prompt, and its reference when allowed."""
    allowed = reveal.get(case.benchmark, case.benchmark not in HIDDEN_BY_DEFAULT)
    prompt = "\n\n".join(_message_text(m) for m in case.messages)
    reference = case.answer if allowed else None
    return {
        "benchmark": case.benchmark,
        "prompt": clip(prompt, limit),
        "reference": None
        if reference is None
        else clip(reference if isinstance(reference, str) else canonical_json(reference), limit),
        "reference_hidden": not allowed,
    }


def cell_detail(
    row: Mapping[str, Any], calls: Sequence[Mapping[str, Any]], limit: int = TEXT_LIMIT
) -> dict[str, Any]:
    """What the drill-down shows of one cell with a result row: its final answer text, parsed
    answer, grade and its calls' receipts (``calls`` in stored order)."""
    subject = [c for c in calls if c.get("role") == "subject"]
    final = next((c.get("final") for c in reversed(subject) if c.get("final")), None)
    details = row.get("details") or {}
    answer = row.get("answer")
    return {
        "final": None if final is None else clip(str(final), limit),
        "answer": None
        if answer is None
        else clip(answer if isinstance(answer, str) else canonical_json(answer), 400),
        "answer_status": details.get("answer_status"),
        "quality_failure": details.get("quality_failure"),
        "receipts": [_receipt(call) for call in calls],
    }


def case_details(
    manifest: Manifest,
    results: Sequence[Mapping[str, Any]],
    calls: Sequence[Mapping[str, Any]],
    *,
    limit: int = TEXT_LIMIT,
) -> dict[str, Any]:
    """``cases``: prompt (and reference when allowed) once per case; ``cells``: per
    ``case|target`` the final answer text, parsed answer, grade, error and receipts."""
    reveal = reveals_answers(manifest)
    cases = {case.id: case_detail(case, reveal, limit) for case in manifest.cases}
    by_cell: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for call in calls:
        by_cell[(call.get("case_id", ""), call.get("target_id", ""))].append(call)
    cells: dict[str, Any] = {}
    for row in results:
        key = (row["case_id"], row["target_id"])
        cells[f"{key[0]}|{key[1]}"] = cell_detail(row, by_cell.get(key, []), limit)
    return {"cases": cases, "cells": cells}
