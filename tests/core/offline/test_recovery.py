"""The recovery plan's rules over summed-up calls: the same reasons as judging each call one
by one, the spend summed exactly, and ``plan_sha256`` the canonical digest."""

from __future__ import annotations

import math
import random
from typing import Any

from pytest_srbench.core.canonical import digest
from pytest_srbench.core.models import PlanOutline
from pytest_srbench.core.offline.recovery import (
    ALLOWED_FINISH,
    SETTLED_CALLS,
    CallFacts,
    known_spend,
    recovery_plan,
    summarize_calls,
)
from tests.core.helpers import run

STATUSES = ["completed", "failed", "cancelled", "sent", "sent_unknown"]
FINISHES = ["stop", "length", "tool_calls", "content_filter", None]


def reference_reason(
    mode: str, result: str | None, claimed: bool, calls: list[CallFacts]
) -> str | None:
    """§8.1 judged call by call (how recovery read the calls before they were summed up)."""
    if result == "completed":
        return "completed_evidence_is_preserved"
    if claimed:
        return "already_claimed_by_child_attempt"
    if any(call.status in ("sent", "sent_unknown") for call in calls):
        return "ambiguous_dispatch_requires_reconciliation"
    if result == "sent_unknown":
        return "ambiguous_saved_result_requires_reconciliation"
    if mode == "undispatched" and calls:
        return "already_dispatched_requires_explicit_new_attempt"
    if mode == "failed" and not calls:
        return "never_dispatched_use_undispatched_mode"
    if mode == "failed" and any(
        not call.usage_known
        or call.cost_usd is None
        or call.finish_reason not in ALLOWED_FINISH
        or call.status not in SETTLED_CALLS
        for call in calls
    ):
        return "unfinished_or_unknown_accounting_requires_reconciliation"
    return None


def random_run(seed: int) -> tuple[PlanOutline, dict[tuple[str, str], str], list[CallFacts], set]:
    rng = random.Random(seed)
    cells = [(f"mmlu-pro/{i}", target) for i in range(120) for target in ("a", "b")]
    outline = PlanOutline("f" * 64, "live", "smoke", ["a", "b"], 5.0, cells)
    results = {
        cell: rng.choice(["completed", "failed", "running", "sent_unknown", "cancelled"])
        for cell in cells
        if rng.random() < 0.8
    }
    calls = [
        CallFacts(f"call-{n}", *cell, rng.choice(STATUSES), rng.random() < 0.8,
                  rng.choice([None, 1e-05, 0.1, 2.5e-07, 0.3]), rng.choice(FINISHES))
        for n, cell in enumerate(rng.choices(cells, k=300))
    ]  # fmt: skip
    claimed = set(rng.sample(cells, 10))
    return outline, results, calls, claimed


def test_summed_up_calls_give_the_reasons_of_judging_each_call():
    for seed in range(5):
        outline, results, calls, claimed = random_run(seed)
        for mode in ("undispatched", "failed"):
            plan = recovery_plan(
                outline, run("failed"), results, summarize_calls(calls), claimed, mode
            )
            expected: dict[str, list[dict[str, Any]]] = {"eligible": [], "excluded": []}
            for key in outline.cells:
                mine = [call for call in calls if (call.case_id, call.target_id) == key]
                reason = reference_reason(mode, results.get(key), key in claimed, mine)
                cell = {"case_id": key[0], "target_id": key[1]}
                if reason is None:
                    expected["eligible"].append(cell)
                else:
                    expected["excluded"].append({**cell, "reason": reason})
            assert plan["eligible_cells"] == expected["eligible"]
            assert plan["excluded"] == expected["excluded"]
            assert sorted({e["reason"] for e in plan["excluded"]}) == sorted(
                {e["reason"] for e in expected["excluded"]}
            )


def test_the_spend_is_the_exact_sum_whatever_the_order_and_plain_rows_read_like_facts():
    """Known spend is summed exactly and rounded once (as the report's ``math.fsum``), so the
    order the store hands the calls over in cannot change the plan's digest."""
    outline, _, calls, _ = random_run(7)
    summary = summarize_calls(calls)
    exact = math.fsum(call.cost_usd for call in calls if call.cost_usd is not None)
    assert summary.spend_usd == exact
    assert summary.spend_complete is False
    assert summarize_calls([tuple(call) for call in calls]) == summary
    shuffled = list(calls)
    random.Random(3).shuffle(shuffled)
    assert summarize_calls(shuffled).spend_usd == exact
    assert known_spend([0.1] * 10) == (1.0, True)  # left to right would give 0.9999999999999999
    assert known_spend([0.5, None]) == (0.5, False)
    assert known_spend([]) == (0.0, True)


def test_plan_sha256_is_the_canonical_digest_of_the_plan_even_for_tiny_amounts():
    """orjson writes 1e-05 as 0.00001: the fast digest must still be canonical JSON's."""
    cells = [('mmlu-pro/é "quoted" \\ \u2028 中', "a"), ("mmlu-pro/2", "a")]
    outline = PlanOutline("f" * 64, "live", "smoke", ["a"], 2.5e-07, cells)
    calls = [CallFacts("c1", *cells[0], "failed", True, 1e-05, "stop")]
    for mode in ("undispatched", "failed"):
        plan = recovery_plan(outline, run("failed"), {}, summarize_calls(calls), set(), mode)
        body = {key: value for key, value in plan.items() if key != "plan_sha256"}
        assert plan["parent_snapshot"]["known_spend_usd"] == 1e-05
        assert plan["plan_sha256"] == digest(body)
