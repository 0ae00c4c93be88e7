"""Running forms of the report's metrics (pure): each takes one planned cell at a time — its
result row and its calls — and keeps counters, exact sums and one 8-byte float per value a
percentile needs, so a report over any number of cells holds one page of rows, never all.

These are the package's one implementation of the metric row (``MetricRunner``), the
continuity block (``ContinuityRunner``; its rules in ``core/calls/continuity.py``) and a
router's decision breakdown (``DecisionRunner``; ``core/calls/routing.py``). Tests hold each
equal to an independent list form, a test oracle in ``tests/oracles/``, on seeded random runs.
What makes a result the same whatever order the cells come in:

- sums of floats are exact then rounded once (``ExactSum``, as ``math.fsum``);
- percentiles sort their values anyway;
- a dict of counts (selected models, decisions …) lists its keys in the order the rows as
  stored first show them: each key keeps the smallest *rank* of the rows that carry it (a
  call's position in the journal, a result's position in the store) and the keys are sorted
  by it;
- the interval over cases needs (correct, cells) per case: without repeats every planned cell
  is its own case and two counters suffice; with repeats a pair of counts per original case is
  kept (the report lists those cases anyway).

A runner per (target, benchmark) sees each planned cell once; a target's metrics are its
benchmarks' runners merged (``merge``) with the runner of its calls outside the plan.
"""

from __future__ import annotations

import itertools
import math
from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

from pytest_srbench.core.calls.continuity import is_multi_inference, known_changes
from pytest_srbench.core.calls.routing import UNKNOWN_DECISION, decision_name, routing_of
from pytest_srbench.core.calls.usage import BUCKETS, CACHE_NEUTRAL_BASIS, known_cost
from pytest_srbench.core.report.metrics import (
    ACCURACY_DENOMINATOR,
    Row,
    answer_latency,
    cache_read_observation,
    interval_fields,
)
from pytest_srbench.core.stats import case_interval, coverage_caveat, percentile

Rank = Any  # orderable within one counter: an int, or a tuple of comparable parts
Ranked = tuple[Rank, Row]  # (rank, row)


class ExactSum:
    """A sum of floats that does not depend on the order they are added in: ``total`` is the
    very value ``math.fsum`` gives over all the addends (their exact sum, rounded once).

    The addends are kept in a float array; when it grows past ``LIMIT`` it is replaced by a
    few floats with the same exact sum (``math.fsum`` of the rest, then of what remains, until
    nothing does — every double is a multiple of 2⁻¹⁰⁷⁴, so a remainder that rounds to 0 is 0),
    so memory stays bounded and each addition costs one array append."""

    __slots__ = ("_special", "_values")
    LIMIT = 4096

    def __init__(self) -> None:
        self._values = array("d")
        self._special: list[float] = []  # inf and nan: math.fsum decides what they make

    def add(self, value: float) -> None:
        if not math.isfinite(value):
            self._special.append(value)
            return
        self._values.append(value)
        if len(self._values) >= self.LIMIT:
            self._compress()

    def _compress(self) -> None:
        values = self._values
        parts: list[float] = []
        while rest := math.fsum(itertools.chain(values, [-part for part in parts])):
            parts.append(rest)
        self._values = array("d", parts)

    def merge(self, other: ExactSum) -> None:
        self._values.extend(other._values)
        self._special.extend(other._special)
        if len(self._values) >= self.LIMIT:
            self._compress()

    def total(self) -> float:
        return math.fsum([*self._values, *self._special])


class RankedCounts:
    """Counts per key; ``counts()`` lists the keys by the smallest rank each was seen with."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[str, list[Any]] = {}

    def add(self, key: str, rank: Rank) -> None:
        entry = self._seen.get(key)
        if entry is None:
            self._seen[key] = [1, rank]
            return
        entry[0] += 1
        entry[1] = min(entry[1], rank)

    def merge(self, other: RankedCounts) -> None:
        for key, (count, rank) in other._seen.items():
            entry = self._seen.get(key)
            if entry is None:
                self._seen[key] = [count, rank]
            else:
                entry[0] += count
                entry[1] = min(entry[1], rank)

    def counts(self) -> dict[str, int]:
        ordered = sorted(self._seen.items(), key=lambda item: item[1][1])
        return {key: entry[0] for key, entry in ordered}


class CaseClusters:
    """(correct cells, cells) per case, the input of the intervals over cases. ``grouped``
    False promises every case arrives once (no repeats): then two counters are enough."""

    __slots__ = ("_by_case", "_cells", "_right")

    def __init__(self, grouped: bool) -> None:
        self._by_case: dict[Hashable, list[int]] | None = {} if grouped else None
        self._right = 0
        self._cells = 0

    def add(self, case: Hashable, correct: bool) -> None:
        if self._by_case is None:
            self._cells += 1
            self._right += correct
            return
        entry = self._by_case.get(case)
        if entry is None:
            self._by_case[case] = [int(correct), 1]
        else:
            entry[0] += correct
            entry[1] += 1

    def merge(self, other: CaseClusters) -> None:
        self._cells += other._cells
        self._right += other._right
        if self._by_case is not None and other._by_case is not None:
            for case, (right, cells) in other._by_case.items():
                self.add_counts(case, right, cells)

    def add_counts(self, case: Hashable, right: int, cells: int) -> None:
        assert self._by_case is not None
        entry = self._by_case.setdefault(case, [0, 0])
        entry[0] += right
        entry[1] += cells

    def clusters(self) -> list[tuple[int, int]]:
        if self._by_case is None:
            return [(1, 1)] * self._right + [(0, 1)] * (self._cells - self._right)
        return [(right, cells) for right, cells in self._by_case.values()]


class ContinuityRunner:
    """The continuity block (§5.1, the rules of ``core/calls/continuity.py``) one task (one
    case's subject calls, in stored order) at a time."""

    __slots__ = (
        "by_phase",
        "decision_changed",
        "most",
        "multi_inference",
        "multi_request",
        "switched",
        "switched_correct",
        "switches",
        "tasks",
        "unknown",
        "unswitched",
        "unswitched_correct",
    )  # fmt: skip

    def __init__(self) -> None:
        self.multi_request = self.multi_inference = self.unknown = self.decision_changed = 0
        self.tasks = self.switches = 0
        self.most: int | None = None
        self.by_phase: Counter[str] = Counter()
        self.switched = self.switched_correct = self.unswitched = self.unswitched_correct = 0

    def add_task(self, requests: Sequence[Row], correct: bool) -> None:
        if len(requests) == 1 and not is_multi_inference(requests[0]):
            # one request: never a switch nor a decision change
            self.unknown += not requests[0].get("selected_model")
            self.tasks += 1
            if self.most is None or self.most < 0:
                self.most = 0
            self.unswitched += 1
            self.unswitched_correct += correct
            return
        if any(is_multi_inference(call) for call in requests):
            self.multi_inference += 1
            return
        if len(requests) >= 2:
            self.multi_request += 1
        models = [call.get("selected_model") or None for call in requests]
        self.unknown += sum(1 for model in models if model is None)
        switches = known_changes(models)
        for index in switches:
            self.by_phase[str(requests[index].get("phase") or "unknown")] += 1
        self.tasks += 1
        self.switches += len(switches)
        if self.most is None or len(switches) > self.most:
            self.most = len(switches)
        if known_changes(call.get("decision") or None for call in requests):
            self.decision_changed += 1
        if switches:
            self.switched += 1
            self.switched_correct += correct
        else:
            self.unswitched += 1
            self.unswitched_correct += correct

    def merge(self, other: ContinuityRunner) -> None:
        for name in ("multi_request", "multi_inference", "unknown", "decision_changed", "tasks",
                     "switches", "switched", "switched_correct", "unswitched",
                     "unswitched_correct"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        if other.most is not None and (self.most is None or other.most > self.most):
            self.most = other.most
        self.by_phase.update(other.by_phase)

    def block(self, session_mode: str) -> dict[str, Any]:
        return {
            "session_mode": session_mode,
            "multi_request_tasks": self.multi_request,
            "model_switches": self.switches,
            "model_switches_per_task_mean": _rate(self.switches, self.tasks),
            "model_switches_per_task_max": self.most,
            "model_switches_by_phase": dict(sorted(self.by_phase.items())),
            "unknown_model_requests": self.unknown,
            "multi_inference_tasks": self.multi_inference,
            "decision_changed_tasks": self.decision_changed,
            "switched_tasks": self.switched,
            "unswitched_tasks": self.unswitched,
            "switched_accuracy": _rate(self.switched_correct, self.switched),
            "unswitched_accuracy": _rate(self.unswitched_correct, self.unswitched),
        }


def _rate(hits: int, count: int) -> float | None:
    return hits / count if count else None


def cell_is_correct(result: Row | None) -> bool:
    """A cell counts as correct only when it completed with ``correct`` True."""
    return (
        result is not None and result.get("status") == "completed" and result.get("correct") is True
    )


class MetricRunner:
    """One metric row (reference/report-and-accounting.md §3.3) of a target or a benchmark
    row, and a preview's routing counts (``preview_distributions``), over the cells it is given
    one at a time.

    ``selection_statuses`` / ``selection_reasons`` are null in the row: only a preview run
    observes them. ``continuity`` is §5.1 under the target's session mode. The accuracy
    interval is over cases: every planned cell is one outcome of the case it is added under
    (a repeat's original; failed, unanswered and pending cells are wrong), and the Wilson
    interval is taken at the Kish effective number of cases (``core.stats.case_interval``):
    without repeats, Wilson on correct / total."""

    def __init__(self, neutral_cost: Callable[[Row], float | None], *, grouped: bool) -> None:
        self.neutral_cost = neutral_cost
        # result rows of planned cells
        self.planned = self.results = self.completed = self.failed = self.scored = 0
        self.correct = self.checked = self.format_failed = self.output_limit = 0
        self.clusters = CaseClusters(grouped)
        self.latencies = array("d")
        self.queue = array("d")
        self.walls = array("d")
        # subject calls
        self.receipted = 0  # planned cells with a subject call
        self.unplanned_receipted = False  # a case outside the plan has a subject call
        self.requests = 0
        self.usage_known = self.cost_known = self.neutral_known = self.call_count_known = True
        self.known_cost = ExactSum()
        self.neutral = ExactSum()
        self.request_time = ExactSum()
        self.tokens = dict.fromkeys(BUCKETS, 0)
        self.call_count = 0
        self.ttfts = array("d")
        self.selected = RankedCounts()
        self.decisions = RankedCounts()
        self.pending_selection = 0
        self.finish_reasons: Counter[str] = Counter()
        self.cache_calls = self.cache_tokens = self.cache_prompt = 0
        self.cache_ratio_known = True
        # auxiliary (judge, simulator) calls, and every call
        self.overhead = 0
        self.overhead_cost = ExactSum()
        self.overhead_cost_known = True
        self.calls = 0
        # the response cache: cells with a call answered from it, its calls, the avoided cost
        self.cached_cells = self.cached_calls = 0
        self.avoided = ExactSum()
        self.avoided_known = True
        self.continuity = ContinuityRunner()
        # a preview's routing counters, from the result rows
        self.routing = {
            key: RankedCounts()
            for key in ("selection_statuses", "selection_reasons", "selected_models", "decisions")
        }

    # -- feeding ---------------------------------------------------------------------------
    def add_cell(
        self, case: Hashable, result: Row | None, result_rank: Rank, calls: Sequence[Ranked]
    ) -> None:
        """One planned cell: ``case`` is the case its interval counts it under (a repeat's
        original), ``calls`` its calls in stored order."""
        self.planned += 1
        correct = cell_is_correct(result)
        if result is not None:
            self._add_result(result, result_rank)
        cached = self.cached_calls
        subject = self._add_calls(calls)
        if self.cached_calls > cached:
            self.cached_cells += 1
        if subject:
            self.receipted += 1
            self.continuity.add_task(subject, correct)
        self.clusters.add(case, correct)

    def add_unplanned(self, calls: Sequence[Ranked]) -> None:
        """The calls of one case of this target that the plan does not hold."""
        subject = self._add_calls(calls)
        if subject:
            self.unplanned_receipted = True
            self.continuity.add_task(subject, False)

    def _add_result(self, row: Row, rank: Rank) -> None:
        get = row.get
        self.results += 1
        status = get("status")
        if status == "completed":
            self.completed += 1
            correct = get("correct")
            if correct is True or correct is False:
                self.scored += 1
                self.correct += correct
            if get("latency_s") is not None:
                self.walls.append(float(row["latency_s"]))
                latency = answer_latency(row)
                if latency is not None:
                    self.latencies.append(latency)
        elif status != "running":
            self.failed += 1
        if get("queue_wait_s") is not None:
            self.queue.append(float(row["queue_wait_s"]))
        details = get("details")
        if details:
            strict = details.get("strict_format")
            if strict is True or strict is False:
                self.checked += 1
                self.format_failed += strict is False
            if details.get("quality_failure") == "output_limit":
                self.output_limit += 1
            routing = details.get("routing")
            if routing:
                self._add_routing(row, rank)

    def _add_routing(self, row: Row, rank: Rank) -> None:
        routing = routing_of(row)
        for key, value in (
            ("selection_statuses", routing.get("selection_status")),
            ("selection_reasons", routing.get("selection_reason")),
            ("selected_models", routing.get("selected_model")),
            ("decisions", decision_name(routing)),
        ):
            if value:
                self.routing[key].add(str(value), rank)

    def _add_calls(self, calls: Sequence[Ranked]) -> list[Row]:
        """Count every call; return the subject calls that make a task (have a case id)."""
        task = []
        for rank, call in calls:
            self.calls += 1
            cost = call.get("cost_usd")
            if type(cost) is not float or not 0.0 <= cost < math.inf:  # (a known cost as is)
                cost = known_cost(cost)
            if call.get("status") == "replayed":  # answered from the response cache
                self.cached_calls += 1
                avoided = known_cost(call.get("cache_avoided_cost_usd"))
                if avoided is None:
                    self.avoided_known = False
                else:
                    self.avoided.add(avoided)
            if call.get("role") != "subject":
                self.overhead += 1
                if cost is None:
                    self.overhead_cost_known = False
                else:
                    self.overhead_cost.add(cost)
                continue
            self._add_subject(call, rank, cost)
            if call.get("case_id"):
                task.append(call)
        return task

    def _add_subject(self, call: Row, rank: Rank, cost: float | None) -> None:
        get = call.get
        self.requests += 1
        usage = get("usage")
        if usage is None:
            self.usage_known = False
        else:
            tokens = self.tokens
            for key in BUCKETS:
                tokens[key] += int(usage.get(key, 0))
        if cost is None:
            self.cost_known = False
        else:
            self.known_cost.add(cost)
        neutral = self.neutral_cost(call)
        if neutral is None:
            self.neutral_known = False
        else:
            self.neutral.add(neutral)
        count = get("inference_call_count")
        if count is None:
            self.call_count_known = False
        else:
            self.call_count += count
        if get("ttft_s") is not None:
            self.ttfts.append(float(call["ttft_s"]))
        selected = get("selected_model")
        status = get("status")
        if selected or (status == "completed" and get("model")):
            self.selected.add(str(selected or get("model")), rank)
        elif status in ("sent", "running"):
            self.pending_selection += 1
        if get("decision"):
            self.decisions.add(str(call["decision"]), rank)
        if get("finish_reason"):
            self.finish_reasons[str(call["finish_reason"])] += 1
        self.request_time.add(float(get("latency_s") or 0))
        if get("cache_read_reported") is True:
            self.cache_calls += 1
            observed = cache_read_observation(call)
            if observed is None:
                self.cache_ratio_known = False
            else:
                self.cache_tokens += observed["cached_input_tokens"]
                self.cache_prompt += (
                    observed["input_tokens"]
                    + observed["cached_input_tokens"]
                    + observed["cache_write_tokens"]
                )

    def merge(self, other: MetricRunner) -> None:
        """Add another runner's cells (a target's benchmarks, its calls outside the plan)."""
        for name in ("planned", "results", "completed", "failed", "scored", "correct", "checked",
                     "format_failed", "output_limit", "receipted", "requests", "call_count",
                     "pending_selection", "cache_calls", "cache_tokens", "cache_prompt",
                     "overhead", "calls", "cached_cells", "cached_calls"):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("usage_known", "cost_known", "neutral_known", "call_count_known",
                     "cache_ratio_known", "overhead_cost_known", "avoided_known"):  # fmt: skip
            setattr(self, name, getattr(self, name) and getattr(other, name))
        self.unplanned_receipted = self.unplanned_receipted or other.unplanned_receipted
        self.clusters.merge(other.clusters)
        for name in ("latencies", "queue", "walls", "ttfts"):
            getattr(self, name).extend(getattr(other, name))
        for name in ("known_cost", "neutral", "request_time", "overhead_cost", "avoided"):
            getattr(self, name).merge(getattr(other, name))
        for key in BUCKETS:
            self.tokens[key] += other.tokens[key]
        self.selected.merge(other.selected)
        self.decisions.merge(other.decisions)
        for key, counts in self.routing.items():
            counts.merge(other.routing[key])
        self.finish_reasons.update(other.finish_reasons)
        self.continuity.merge(other.continuity)

    # -- reading ---------------------------------------------------------------------------
    def metric(self, target_id: str, session_mode: str = "stateless") -> dict[str, Any]:
        """The metric row of the cells added so far; ``total`` is the planned cells."""
        total = self.planned
        subject = self.requests > 0
        coverage = self.receipted == total and not self.unplanned_receipted
        cost_complete = subject and coverage and self.cost_known
        latency = [percentile(self.latencies, q) for q in (0.5, 0.9, 0.95)]
        return {
            "id": target_id,
            "total": total,
            "completed": self.completed,
            "failed": self.failed,
            "pending": total - self.results,
            "scored": self.scored,
            "correct": self.correct,
            "accuracy": self.correct / total if total else None,
            "accuracy_denominator": ACCURACY_DENOMINATOR,
            **interval_fields(self.clusters.clusters()),
            # a cell answered from the response cache is never complete live evidence
            "complete": self.completed == total and self.scored == total and not self.cached_cells,
            "output_diagnostics": {
                "planned_cases": total,
                "result_cases": self.results,
                "output_limit_cases": self.output_limit,
                "strict_format": {
                    "checked_cases": self.checked,
                    "failed_cases": self.format_failed,
                    "unassessed_cases": total - self.checked,
                },
                "subject_calls": {
                    "total": self.requests,
                    "finish_reasons": dict(sorted(self.finish_reasons.items())),
                    "unknown_finish_reason": self.requests - sum(self.finish_reasons.values()),
                },
            },
            "cost_usd": self.known_cost.total() if cost_complete else None,
            "cache_neutral_cost_usd": self.neutral.total()
            if subject and coverage and self.neutral_known
            else None,
            "cache_neutral_cost_basis": CACHE_NEUTRAL_BASIS,
            "known_cost_usd": self.known_cost.total(),
            "cost_complete": cost_complete,
            "evaluation_cost_usd": (
                self.overhead_cost.total() if self.overhead_cost_known else None
            )
            if self.overhead
            else 0,
            "total_spend_usd": self.spend()
            if coverage and self.calls and self.cost_known and self.overhead_cost_known
            else None,
            "tokens": dict(self.tokens) if subject and coverage and self.usage_known else None,
            "call_count": self.call_count
            if subject and coverage and self.call_count_known
            else None,
            "request_count": self.requests,
            "selected_models": self.selected.counts(),
            "pending_selection_count": self.pending_selection,
            "decisions": self.decisions.counts(),
            "selection_statuses": None,
            "selection_reasons": None,
            "queue_wait_p50_s": percentile(self.queue, 0.5),
            "queue_wait_p95_s": percentile(self.queue, 0.95),
            "evaluation_call_count": self.overhead,
            "case_wall_time_p50_s": percentile(self.walls, 0.5),
            "latency_p50_s": latency[0],
            "latency_p90_s": latency[1],
            "latency_p95_s": latency[2],
            "ttft_p50_s": percentile(self.ttfts, 0.5),
            "request_time_sum_s": self.request_time.total(),
            "cache_read_call_count": self.cache_calls,
            "cache_read_tokens": self.cache_tokens,
            "cache_read_prompt_tokens": self.cache_prompt,
            "cache_read_ratio": self.cache_tokens / self.cache_prompt
            if self.cache_calls and self.cache_ratio_known and self.cache_prompt > 0
            else None,
            "continuity": self.continuity.block(session_mode),
            "cache": {
                "cells": self.cached_cells,
                "share": self.cached_cells / total if total else 0.0,
                "calls": self.cached_calls,
            },
            "cache_avoided_cost_usd": self.avoided.total() if self.avoided_known else None,
        }

    def spend(self) -> float:
        """The exact sum of every known call cost (subject and auxiliary)."""
        spend = ExactSum()
        spend.merge(self.known_cost)
        spend.merge(self.overhead_cost)
        return spend.total()

    def spend_parts(self) -> tuple[ExactSum, ExactSum, bool]:
        """The known subject and auxiliary costs, and whether every call's cost is known."""
        return self.known_cost, self.overhead_cost, self.cost_known and self.overhead_cost_known

    def preview_distributions(self) -> dict[str, dict[str, int]]:
        """The routing counts of a preview run's result rows (``details.routing``): they
        replace the call-based values of the metric row."""
        return {key: counts.counts() for key, counts in self.routing.items()}


class _DecisionGroup:
    __slots__ = (
        "cases",
        "clusters",
        "completed",
        "correct",
        "costs",
        "known",
        "known_cost",
        "models",
        "unreceipted",
    )  # fmt: skip

    def __init__(self, grouped: bool) -> None:
        self.cases = self.completed = self.correct = self.costs = self.known = 0
        self.clusters = CaseClusters(grouped)
        self.known_cost = ExactSum()
        self.unreceipted = False
        self.models = RankedCounts()


class DecisionRunner:
    """Accuracy, spend and selected models per routing decision of one router target, over
    its planned cells (reference/report-and-accounting.md §4.3; how a case's decision is read:
    ``core/calls/routing.py``).

    A planned cell with neither a result row nor a subject call counts under the unknown
    decision, as incorrect and with an unknown cost. A preview run has null
    ``correct`` / ``accuracy`` / ``accuracy_ci95``. No rows when no case has a decision.
    ``accuracy_ci95`` is over cases: a decision's cells of one original case are one cluster
    (``core.stats.case_interval``)."""

    def __init__(self, *, preview: bool, grouped: bool) -> None:
        self.preview = preview
        self.grouped = grouped
        self.groups: dict[str | None, _DecisionGroup] = {}
        self.unobserved = 0
        self.unseen = CaseClusters(grouped)

    def add_cell(
        self, case: Hashable, result: Row | None, result_rank: Rank, calls: Sequence[Ranked]
    ) -> None:
        subject = [(r, c) for r, c in calls if c.get("role") == "subject" and c.get("case_id")]
        if self.preview:
            observed = result is not None
            decision = decision_name(routing_of(result)) if result is not None else None
            position: Rank = result_rank
        else:
            observed = result is not None or bool(subject)
            decision = None
            for _, call in subject:
                if call.get("decision"):
                    decision = str(call["decision"])
            position = (
                (0, result_rank) if result is not None else (1, subject[0][0] if subject else 0)
            )
        if not observed:
            self.unobserved += 1
            self.unseen.add(case, False)
            return
        group = self.groups.get(decision)
        if group is None:
            group = self.groups[decision] = _DecisionGroup(self.grouped)
        correct = cell_is_correct(result)
        group.cases += 1
        group.completed += result is not None and result.get("status") == "completed"
        group.correct += correct
        group.clusters.add(case, correct)
        if not subject:
            group.unreceipted = True
        for rank, call in subject:
            group.costs += 1
            cost = known_cost(call.get("cost_usd"))
            if cost is not None:
                group.known += 1
                group.known_cost.add(cost)
            if not self.preview and call.get("selected_model"):
                group.models.add(str(call["selected_model"]), (position, rank))
        if self.preview and result is not None:
            model = routing_of(result).get("selected_model")
            if model:
                group.models.add(str(model), position)

    def rows(self) -> list[dict[str, Any]]:
        if not any(decision for decision in self.groups):
            return []
        groups = dict(self.groups)
        if self.unobserved and None not in groups:
            groups[None] = _DecisionGroup(self.grouped)
        rows = []
        preview = self.preview
        for decision, group in groups.items():
            extra = self.unobserved if decision is None else 0
            clusters = group.clusters
            if extra:
                clusters = CaseClusters(self.grouped)
                clusters.merge(group.clusters)
                clusters.merge(self.unseen)
            cases = group.cases + extra
            cluster_list = clusters.clusters()
            cost_known = not group.unreceipted and not extra and group.costs > 0
            cost_known = cost_known and group.known == group.costs
            rows.append(
                {
                    "decision": decision,
                    "label": decision if decision is not None else UNKNOWN_DECISION,
                    "cases": cases,
                    "completed": group.completed,
                    "correct": None if preview else group.correct,
                    "accuracy": None if preview else group.correct / cases,
                    "accuracy_ci95": None if preview else case_interval(cluster_list),
                    "accuracy_ci95_worst_coverage": None
                    if preview
                    else coverage_caveat(len(cluster_list)),
                    "cost_usd": group.known_cost.total() if cost_known else None,
                    "known_cost_usd": group.known_cost.total(),
                    "selected_models": group.models.counts(),
                }
            )
        return sorted(rows, key=lambda r: (-r["cases"], r["decision"] is None, r["decision"] or ""))
