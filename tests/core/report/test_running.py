"""The running forms of the metrics (the report's one implementation) equal the independent list
forms of ``tests/oracles/``: fed one planned cell at a time in planned order, each runner gives
exactly (key order of every dict included) what the oracle gives over the same rows in the
order they were listed in."""

import json
import math
import random

import pytest

from pytest_srbench.core.report.rows import cells_in_memory
from pytest_srbench.core.report.running import (
    CaseClusters,
    ContinuityRunner,
    ExactSum,
    MetricRunner,
    RankedCounts,
)
from tests.core.report.feed import fed
from tests.core.report.random_runs import plan, rows
from tests.oracles.continuity import continuity
from tests.oracles.metrics import target_metric
from tests.oracles.routing import decision_breakdown, preview_distributions


def neutral(call):
    usage = call.get("usage")
    return None if usage is None else usage["input_tokens"] / 7 + usage["output_tokens"] / 3


def same(a, b):
    assert json.dumps(a) == json.dumps(b)


@pytest.mark.parametrize("seed", range(12))
def test_exact_sum_is_fsum_in_any_order_and_stays_small(seed):
    rng = random.Random(seed)
    pool = [rng.random(), rng.random() * 1e-9, -rng.random() * 1e12, 1e16, -1e16, 0.1, 5e-324]
    values = [rng.choice(pool) * rng.random() for _ in range(rng.randint(0, 20_000))]
    total = ExactSum()
    for value in values:
        total.add(value)
    assert total.total() == math.fsum(values)
    assert len(total._values) < ExactSum.LIMIT  # compressed, not kept
    halves = ExactSum(), ExactSum()
    shuffled = values[:]
    rng.shuffle(shuffled)
    for index, value in enumerate(shuffled):
        halves[index % 2].add(value)
    halves[0].merge(halves[1])
    assert halves[0].total() == math.fsum(values)


def test_exact_sum_of_nothing_and_of_infinities_is_what_fsum_says():
    assert ExactSum().total() == math.fsum([]) == 0.0
    total = ExactSum()
    for value in (1.0, math.inf, 2.0):
        total.add(value)
    assert total.total() == math.inf


def test_ranked_counts_list_keys_by_their_first_rank():
    counts = RankedCounts()
    for key, rank in (("b", 5), ("a", 7), ("b", 1), ("c", 3), ("a", 0)):
        counts.add(key, rank)
    assert list(counts.counts().items()) == [("a", 2), ("b", 2), ("c", 1)]


def test_cells_group_into_cases_in_first_seen_order():
    clusters = CaseClusters(grouped=True)
    for case, correct in [("a", True), ("b", False), ("a", False), ("a", True), ("b", False)]:
        clusters.add(case, correct)
    assert clusters.clusters() == [(2, 3), (0, 2)]


def test_clusters_without_repeats_need_no_case_keys():
    flat, keyed = CaseClusters(grouped=False), CaseClusters(grouped=True)
    for index, correct in enumerate([True, False, True, True]):
        flat.add(f"c{index}", correct)
        keyed.add(f"c{index}", correct)
    assert sorted(flat.clusters()) == sorted(keyed.clusters())
    assert flat._by_case is None


def runners_of(frozen, results, calls, target_id, benchmark=None):
    """A metric runner and a decision runner fed ``target_id``'s cells (planned ones of
    ``benchmark`` only, when given) in planned order."""
    case_of = {c.id: c.metadata.get("repeat_of") or c.id for c in frozen.cases}
    benchmark_of = {c.id: c.benchmark for c in frozen.cases}
    planned = [
        case_id
        for case_id, t in frozen.planned_keys()
        if t == target_id and benchmark in (None, benchmark_of[case_id])
    ]
    return fed(
        planned, results, calls, target_id, case_of=case_of,
        preview=frozen.mode == "preview", unplanned=benchmark is None, neutral=neutral,
    )  # fmt: skip


def list_inputs(frozen, results, calls, target_id, benchmark=None):
    """What the oracles read: the target's planned rows and its calls, as listed."""
    ids = [
        case_id
        for case_id, t in frozen.planned_keys()
        if t == target_id
        and (
            benchmark is None
            or next(c for c in frozen.cases if c.id == case_id).benchmark == benchmark
        )
    ]
    id_set = set(ids)
    own_rows = [r for r in results if r["target_id"] == target_id and r["case_id"] in id_set]
    own_calls = [c for c in calls if c.get("target_id") == target_id]
    if benchmark is not None:
        own_calls = [c for c in own_calls if c.get("case_id") in id_set]
    return ids, id_set, own_rows, own_calls


CASES = [
    (seed, repeats, preview)
    for seed in range(10)
    for repeats, preview in ((1, False), (3, False), (1, True), (2, True))
]


@pytest.mark.parametrize(("seed", "repeats", "preview"), CASES)
def test_metric_runner_equals_target_metric(seed, repeats, preview):
    rng = random.Random(seed)
    frozen = plan(rng, repeats=repeats, preview=preview)
    results, calls = rows(rng, frozen)
    case_of = {c.id: c.metadata.get("repeat_of") or c.id for c in frozen.cases}
    for tgt in frozen.targets:
        for benchmark in (None, "mmlu-pro", "gpqa-diamond"):
            ids, id_set, own_rows, own_calls = list_inputs(
                frozen, results, calls, tgt.id, benchmark
            )
            runner, _ = runners_of(frozen, results, calls, tgt.id, benchmark)
            expected = target_metric(
                tgt.id, own_rows, own_calls, len(id_set), id_set, neutral,
                session_mode=tgt.session_mode, case_of=case_of,
            )  # fmt: skip
            same(runner.metric(tgt.id, tgt.session_mode), expected)
            same(runner.preview_distributions(), preview_distributions(own_rows))
            same(
                runner.continuity.block(tgt.session_mode),
                continuity(own_rows, own_calls, tgt.session_mode),
            )


@pytest.mark.parametrize(("seed", "repeats", "preview"), CASES)
def test_decision_runner_equals_decision_breakdown(seed, repeats, preview):
    rng = random.Random(seed)
    frozen = plan(rng, repeats=repeats, preview=preview)
    results, calls = rows(rng, frozen)
    case_of = {c.id: c.metadata.get("repeat_of") or c.id for c in frozen.cases}
    ids, id_set, own_rows, own_calls = list_inputs(frozen, results, calls, "router")
    _, runner = runners_of(frozen, results, calls, "router")
    planned_calls = [c for c in own_calls if c.get("case_id") in id_set]
    expected = decision_breakdown(
        own_rows, planned_calls, len(id_set), preview=preview, planned_ids=ids, case_of=case_of
    )
    same(runner.rows(), expected)


def test_a_merged_runner_equals_one_fed_every_cell():
    rng = random.Random(4)
    frozen = plan(rng, repeats=2)
    results, calls = rows(rng, frozen)
    whole, _ = runners_of(frozen, results, calls, "router")
    merged = MetricRunner(neutral, grouped=True)
    for benchmark in ("gpqa-diamond", "mmlu-pro"):
        merged.merge(runners_of(frozen, results, calls, "router", benchmark)[0])
    unplanned = MetricRunner(neutral, grouped=True)
    for cell in cells_in_memory(frozen.planned_keys(), results, calls):
        if not cell.planned and cell.target_id == "router" and cell.calls:
            unplanned.add_unplanned(cell.calls)
    merged.merge(unplanned)
    same(merged.metric("router"), whole.metric("router"))


def test_one_request_tasks_take_the_short_path_to_the_same_block():
    tasks = [[{"selected_model": m, "phase": "user_turn"}] for m in ("a", None, "b")]
    runner = ContinuityRunner()
    calls = []
    for index, requests in enumerate(tasks):
        runner.add_task(requests, correct=index == 0)
        calls += [{**c, "role": "subject", "case_id": f"c{index}"} for c in requests]
    results = [{"case_id": "c0", "status": "completed", "correct": True}]
    same(runner.block("stateless"), continuity(results, calls, "stateless"))
