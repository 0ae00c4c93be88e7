"""The store's own sums for a recovery plan (``open_cell_calls``, ``call_costs``), on both
backends, against summing the journal's calls up in Python: the same cells, the same flags,
the same spend — and so the same plan, byte for byte."""

from __future__ import annotations

import random

import pytest

from pytest_srbench.app.recovery import plan_for
from pytest_srbench.core.models import PlanOutline
from pytest_srbench.core.offline.recovery import recovery_plan, summarize_calls
from pytest_srbench.store import open_store
from pytest_srbench.store.writes import FinishCall, InsertCall, UpsertResult
from tests.core.helpers import case, manifest, target

CALL_STATUSES = ["completed", "failed", "cancelled", "sent", "sent_unknown", "replayed"]
FINISHES = ["stop", "length", "tool_calls", "function_call", "content_filter", None]
RESULTS = ["completed", "failed", "running", "sent_unknown", "cancelled", None]


def random_run(store, seed: int) -> str:
    """A terminal run over 40 cases × 2 targets with random results and calls (several per
    cell, some for cells without a result, every accounting combination)."""
    rng = random.Random(seed)
    plan = manifest([case("mmlu-pro", str(i)) for i in range(40)], [target("a"), target("b")])
    run_id = f"run-{seed}"
    store.create_run(run_id, plan, status="running")
    cells = [(c.id, t.id) for c in plan.cases for t in plan.targets]
    writes = []
    for case_id, target_id in cells:
        status = rng.choice(RESULTS)
        if status is not None:
            writes.append(UpsertResult(run_id, {"case_id": case_id, "target_id": target_id,
                                                "benchmark": "mmlu-pro", "status": status}))  # fmt: skip
    for n in range(150):
        case_id, target_id = rng.choice(cells)
        call = {"id": f"{run_id}-call-{n}", "case_id": case_id, "target_id": target_id,
                "role": "subject", "status": "sent"}  # fmt: skip
        writes.append(InsertCall(run_id, dict(call)))
        status = rng.choice(CALL_STATUSES)
        if status != "sent":
            finished = {**call, "status": status, "finish_reason": rng.choice(FINISHES),
                        "cost_usd": rng.choice([None, 0.1, 1e-05, 2.5e-07, 0.3, 0])}  # fmt: skip
            if rng.random() < 0.8:
                finished["usage"] = {"input_tokens": 3, "output_tokens": 1}
            writes.append(FinishCall(run_id, finished))
    with store.transaction():
        store.write_batch(writes)
    store.set_run_status(run_id, "interrupted", "test")
    return run_id


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_stores_sums_are_the_journal_summed_up(store_location, seed):
    store = open_store(store_location)
    run_id = random_run(store, seed)
    python = summarize_calls(store.call_facts(run_id))
    statuses = store.result_statuses(run_id)
    open_cells = {
        (case_id, target_id): (count, bool(ambiguous), bool(unaccounted))
        for case_id, target_id, count, ambiguous, unaccounted in store.open_cell_calls(run_id)
    }
    expected = {key: sums for key, sums in python.cells.items() if statuses.get(key) != "completed"}
    assert open_cells == expected
    assert any(flags[1] for flags in expected.values())  # the data exercises every flag
    assert any(flags[2] for flags in expected.values())
    assert any(key not in statuses for key in expected)  # calls of a cell without a result
    costs = store.call_costs(run_id)
    assert sorted(costs, key=lambda c: (c is None, c)) == sorted(
        (row[5] for row in store.call_facts(run_id)), key=lambda c: (c is None, c)
    )
    outline: PlanOutline = store.plan_outline(run_id)
    run = store.require_run(run_id)
    for mode in ("undispatched", "failed"):
        by_python = recovery_plan(outline, run, statuses, python, set(), mode)
        assert plan_for(store, run_id, mode) == by_python
