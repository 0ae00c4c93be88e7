"""The full-denominator run report, built from a frozen manifest and the run's rows.

This is the only place metrics are computed: the terminal, JSON and HTML renderers, the CLI
and the service all read the dict this module returns (validated by ``ReportModel``).
``assemble_report`` reads the rows once, one cell at a time (``core.report.rows``), through the
running metrics of ``core.report.running`` and the per-cell runners of ``core.report.cells``:
what it holds does not grow with the run's calls and results, and each cell's outcome goes to
a sink as soon as it is known (a list, or a file a store-backed report streams from).


Why one long module: it is the only place metrics are computed, on purpose."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol

from pytest_srbench.core.calls.failures import failure_reason
from pytest_srbench.core.calls.recipes import recipe_summary
from pytest_srbench.core.calls.usage import cache_neutral_cost, known_cost
from pytest_srbench.core.models import Case, Manifest, Run, Target
from pytest_srbench.core.offline.reconcile import (
    correction_rows,
    correction_summary,
    effective_call,
)
from pytest_srbench.core.plan.srbench import SR_BENCH_BENCHMARKS
from pytest_srbench.core.report.cells import (
    NOT_GRADED,
    Distributions,
    FailureGroups,
    RepeatAgreement,
    cell_outcome,
)
from pytest_srbench.core.report.explain import (
    AnswerOutcomes,
    ProxyProvenance,
    explanation_limitations,
)
from pytest_srbench.core.report.frontier import (
    frontier,
    frontier_point,
    macro_interval,
    macro_worst_coverage,
)
from pytest_srbench.core.report.metrics import Row
from pytest_srbench.core.report.rows import CellRows, cells_in_memory
from pytest_srbench.core.report.running import DecisionRunner, ExactSum, MetricRunner, Ranked
from pytest_srbench.core.report.sources import (
    data_sources,
    plan_sources,
    score_scope,
    suite_origins,
)
from pytest_srbench.core.report.tasks import (
    AgentSection,
    RagSection,
    agent_config,
    rag_config,
    suite_kinds,
)

REPORT_VERSION = "pytest-srbench-report-1"

FIXED_LIMITATIONS = (
    "Scores measure this frozen protocol (prompts, graders, limits, sampling) only; they are not "
    "a general model ranking.",
    "Smoke and quick profiles draw from the development split; only the standard profile is a "
    "holdout measurement.",
    "Costs use the frozen prices in the plan; self-hosted or simulated targets have no billed "
    "spend unless their prices say so.",
    "Wilson intervals describe sampling error over the planned cases, not variation between "
    "repeated runs of a nondeterministic target; their unit is the case (a case's repeats are "
    "one unit).",
)
PREVIEW_LIMITATION = (
    "Preview run: routing decisions only; no answers were generated, so accuracy is null by design."
)
PREVIEW_NULLED = (
    "accuracy",
    "accuracy_ci95",
    "accuracy_effective_cases",
    "accuracy_ci95_worst_coverage",
    "correct",
    "macro_accuracy",
    "macro_accuracy_ci95",
    "macro_accuracy_ci95_worst_coverage",
    "sr_bench_score",
)  # and score_comparable becomes false: a preview has no score
REPLAY_LIMITATION = (
    "Offline replay (estimate): no model was called; each routed cell took the answer the "
    "selected model gave in the live baseline. Accuracy, cost, latency and TTFT are estimates "
    "(estimated_*), there is no score and no spend, and compare and the gate refuse it as live "
    "evidence."
)
REPLAY_ESTIMATED = (
    "accuracy",
    "macro_accuracy",
    "cost_usd",
    "cache_neutral_cost_usd",
    "latency_p50_s",
    "latency_p95_s",
    "ttft_p50_s",
)  # each moves to estimated_<key>, the original becomes null (§4.3 replay)


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value)


def wall_time_s(run: Run) -> float:
    """Seconds between the run's creation and its last persisted update."""
    return (_parse_time(run.updated_at) - _parse_time(run.created_at)).total_seconds()


class _Pricing:
    """Resolves the target whose frozen prices apply to a call (subject or auxiliary)."""

    def __init__(self, manifest: Manifest) -> None:
        self.inventory = manifest.target_inventory()
        self.options = manifest.benchmark_options
        self.benchmark_of = {case.id: case.benchmark for case in manifest.cases}
        self._prices: dict[str, dict[str, Any]] = {}

    def prices(self, target: Target) -> dict[str, Any]:
        """A target's frozen prices as plain dicts (made once per target)."""
        prices = self._prices.get(target.id)
        if prices is None:
            prices = {model: price.model_dump() for model, price in target.prices.items()}
            self._prices[target.id] = prices
        return prices

    def target_for(self, call: Row) -> Target | None:
        if call.get("role") == "subject":
            return self.inventory.get(call.get("target_id", ""))
        benchmark = self.benchmark_of.get(call.get("case_id", ""))
        bound = (self.options.get(benchmark or "") or {}).get(call.get("role", ""))
        return self.inventory.get(bound) if bound else None

    def neutral_cost(self, call: Row) -> float | None:
        """§2.6: null when the call's usage is unknown (an incomplete router receipt too,
        even if some of its segments are known), its target or any part's price is missing."""
        try:
            target = self.target_for(call)
            if target is None or call.get("usage") is None:
                return None
            prices = self._prices.get(target.id)
            if prices is None:
                prices = self.prices(target)
            parts = call.get("model_usage") or (call,)
            total = 0.0
            for part in parts:
                model = part.get("selected_model") or part.get("model")
                value = cache_neutral_cost(part.get("usage"), model, prices)
                if value is None:
                    return None
                total += value
            return total
        except (KeyError, TypeError, ValueError):
            return None


def macro_and_score(
    manifest: Manifest, target_rows: Sequence[Mapping[str, Any]], complete: bool, present: set[str]
) -> dict[str, Any]:
    """Renormalised macro accuracy, the full-set score (or null), its scope label and whether
    it is an sr-bench 1.0 score (``score_comparable``: over sr-bench data, ``sources``).

    The score keeps its number whenever all nine benchmarks are present, complete and not a
    recovery child — over any data — but only sr-bench data makes it comparable: otherwise the
    scope says "macro score over <kind> data — not comparable with sr-bench 1.0"."""
    weights = manifest.benchmark_weights
    num = math.fsum(weights[row["benchmark"]] * (row["accuracy"] or 0.0) for row in target_rows)
    den = math.fsum(weights[row["benchmark"]] for row in target_rows)
    macro = num / den if den else None
    benchmarks = {row["benchmark"] for row in target_rows}
    full = benchmarks == set(SR_BENCH_BENCHMARKS)
    scope, comparable = score_scope(manifest, benchmarks, present)
    score = macro if full and complete and manifest.recovery is None else None
    return {
        "macro_accuracy": macro,
        "sr_bench_score": score,
        "score_scope": scope,
        "score_comparable": comparable and score is not None,
    }


def apply_preview_overrides(item: dict[str, Any], routing: Mapping[str, Any]) -> None:
    """§4.3 preview: routing counters from the result rows (``preview_distributions``) replace
    the call-based ones, and every accuracy-like key the item has becomes null (no answers were
    generated), the continuity block's switched / unswitched accuracy included."""
    item.update(routing)
    for key in PREVIEW_NULLED:
        if key in item:
            item[key] = None
    if "score_comparable" in item:
        item["score_comparable"] = False
    item["continuity"] = {
        **item["continuity"],
        "switched_accuracy": None,
        "unswitched_accuracy": None,
    }


FAILURE_OBSERVED = "failure_observed"  # the event kinds a report reads: the first failure,
TARGET_SETUP_FAILED = "target_setup_failed"  # and why a target's cells were never dispatched


def pending_reasons_of(events: Iterable[Row]) -> dict[str, str]:
    """Why each target's cells were never dispatched, from the run's ``target_setup_failed``
    events (``{"target_id", "reason"}``; the first per target)."""
    reasons: dict[str, str] = {}
    for event in events:
        data = event.get("data") or {}
        if event.get("kind") == TARGET_SETUP_FAILED and isinstance(data.get("reason"), str):
            reasons.setdefault(str(data.get("target_id")), data["reason"])
    return reasons


def apply_replay_overrides(item: dict[str, Any], routing: Mapping[str, Any]) -> None:
    """§4.3 replay: the routing counters of the preview (copied onto the replay's result rows)
    replace the call-based ones; accuracy, macro accuracy, costs, latency and TTFT move to
    ``estimated_*`` (the originals become null); no score, spend 0 (known cost 0, per decision
    too), cost never complete."""
    item.update(routing)
    for key in REPLAY_ESTIMATED:
        if key in item:
            item["estimated_" + key] = item[key]
            item[key] = None
    if "sr_bench_score" in item:
        item["sr_bench_score"] = None
    if "score_comparable" in item:
        item["score_comparable"] = False
    item["total_spend_usd"] = 0.0
    item["cost_complete"] = False
    if "known_cost_usd" in item:  # the replayed calls keep their source's cost: not spent
        item["known_cost_usd"] = 0.0
    for row in item.get("decision_breakdown") or ():
        row.update({"cost_usd": None, "known_cost_usd": 0.0})


class FirstFailure:
    """The failure a report names: the ``failure_observed`` event when the run journaled one,
    else the earliest-finished failed result row with an error (ties: the first row)."""

    def __init__(self, event: Mapping[str, Any] | None) -> None:
        self.event = event
        self.best: tuple[str, Any] | None = None
        self.row: Row | None = None

    def add(self, row: Row, rank: Any) -> None:
        # rows are weighed even with an event: a pass started before the run ended learns
        # of its event only when the report is assembled
        if row.get("status") in ("running", "completed"):
            return
        if not row.get("error"):
            return
        key = (row.get("finished_at") or "", rank)
        if self.best is None or key < self.best:
            self.best = key
            self.row = row

    def failure(self) -> dict[str, Any] | None:
        if self.event is not None:
            return dict(self.event.get("data") or {})
        if self.row is None:
            return None
        return {
            "case_id": self.row["case_id"],
            "target_id": self.row["target_id"],
            "reason": failure_reason(str(self.row["error"])),
            "inferred_from_saved_results": True,
        }


def _limitations(
    manifest: Manifest,
    run: Run,
    targets: Sequence[Mapping[str, Any]],
    runner: Mapping[str, Any] | None,
) -> list[str]:
    lines = list(FIXED_LIMITATIONS)
    if manifest.mode == "preview":
        lines.append(PREVIEW_LIMITATION)
    if manifest.mode == "replay":
        lines.append(REPLAY_LIMITATION)
    simulated = [t.id for t in manifest.targets if t.simulated]
    if simulated:
        lines.append(
            "Simulated targets (" + ", ".join(simulated) + ") answer from the built-in simulator: "
            "their accuracy, latency and cost are synthetic and measure the harness, not a model."
        )
    if any(t["total_spend_usd"] is None for t in targets):
        lines.append(
            "Some subject or auxiliary call costs are unknown; spend totals are null and "
            "known_cost_usd is only a lower bound."
        )
    if run.status != "completed":
        lines.append(
            f"Run is incomplete (status {run.status}): failed, cancelled and pending cells count "
            "as incorrect in every accuracy."
        )
    if manifest.recovery is not None:
        lines.append(
            "This is a recovery subset of another run; it never yields a full sr-bench score."
        )
    if manifest.cost_policy == "capability_only":
        lines.append("cost_policy capability_only: no cost budget was enforced.")
    lines.append(
        "Budget reservations bound spend before each priced call; a stopped run may have reserved "
        "more than it spent."
    )
    lines.extend(manifest.limitations)
    if runner is None:
        lines.append("runner provenance not captured")
    if any(case.benchmark == "gpqa-diamond" for case in manifest.cases):
        lines.append(
            "gpqa-diamond is widely published; treat its items as possibly seen by the model "
            "(a retest, not a blind measurement)."
        )
    return lines


def plan_identity(manifest: Manifest) -> dict[str, Any]:
    """What a comparison needs of the frozen plan, without case content or endpoints."""

    def public(target: Target) -> dict[str, Any]:
        return target.model_dump(mode="json", exclude={"base_url", "api_key_env", "managed"})

    which = {
        key: value
        for key, value in (
            ("target_kinds", manifest.target_kinds),
            ("benchmark_targets", manifest.benchmark_targets),
        )
        if value  # present only where some benchmark does not meet every target
    }
    return {
        **which,
        "plan_sha256": manifest.plan_sha256,
        "case_sha256": manifest.case_sha256,
        "mode": manifest.mode,
        "profile": manifest.profile,
        "seed": manifest.seed,
        "cost_policy": manifest.cost_policy,
        "output_policy": manifest.output_policy,
        "repeats": manifest.repeats,
        "data_sources": plan_sources(manifest),
        "sampling": manifest.sampling,
        "benchmark_weights": manifest.benchmark_weights,
        "benchmark_options": manifest.benchmark_options,
        "adapter_versions": manifest.adapter_versions,
        "limits": manifest.limits.model_dump(mode="json"),
        "targets": [public(t) for t in manifest.targets],
        "auxiliary_targets": {k: public(t) for k, t in manifest.auxiliary_targets.items()},
        "execution_cells": None
        if manifest.execution_cells is None
        else [cell.model_dump(mode="json") for cell in manifest.execution_cells],
        "cases": PlannedCases(manifest.cases),
    }


class PlannedCases(Sequence[dict[str, Any]]):
    """The plan's case list as a report holds it (each planned case's ``id``, ``benchmark`` and
    ``repeat_of``), made from the frozen plan's cases when read: a list of dicts would hold
    about 180 bytes per case (18 MB at 100,000 cases) for what the plan holds already.

    Reads like the list it stands for (and equals it); JSON writers take it as a list."""

    __slots__ = ("_cases",)

    def __init__(self, cases: Sequence[Case]) -> None:
        self._cases = cases

    @staticmethod
    def entry(case: Case) -> dict[str, Any]:
        """One planned case as the report writes it."""
        repeat_of = case.metadata.get("repeat_of")
        if repeat_of is not None and type(repeat_of) is not str:
            raise ValueError(f"case {case.id!r}: repeat_of must be a case id, not {repeat_of!r}")
        return {"id": case.id, "benchmark": case.benchmark, "repeat_of": repeat_of}

    def fields(self) -> Iterator[tuple[str, str, str | None]]:
        """Each entry's (id, benchmark, repeat_of), without making the entry (a writer's)."""
        entry = self.entry
        for case in self._cases:
            repeat_of = case.metadata.get("repeat_of")
            if repeat_of is not None and type(repeat_of) is not str:
                entry(case)  # (raises)
            yield case.id, case.benchmark, repeat_of

    def __len__(self) -> int:
        return len(self._cases)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self.entry(case) for case in self._cases[index]]
        return self.entry(self._cases[index])

    def __iter__(self) -> Iterator[dict[str, Any]]:
        entry = self.entry
        for case in self._cases:
            yield entry(case)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PlannedCases | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PlannedCases({len(self)} cases)"


class CellSink(Protocol):
    """Where each cell's outcome goes as soon as it is known (a list will do); the report's
    ``cells`` is the sink itself."""

    def append(self, cell: dict[str, Any], /) -> None: ...


class CellPass:
    """The one pass over a run's rows: every metric runner and per-cell section, fed cell by
    cell in planned order (then the rows outside the plan). Made by ``start_cell_pass``; it
    may be fed the run's first cells while the last ones are still running, and the rest when
    the report is assembled (``assemble_report(started=...)``)."""

    def __init__(
        self,
        manifest: Manifest,
        correction: Mapping[str, Any] | None,
        sink: CellSink,
    ) -> None:
        self.manifest = manifest
        self.pricing = _Pricing(manifest)
        self.preview = manifest.mode == "preview"
        # the unit of every accuracy interval: a repeat's cell belongs to its original case
        self.case_of = {
            case.id: case.metadata.get("repeat_of") or case.id for case in manifest.cases
        }
        self.grouped = any(original != case_id for case_id, original in self.case_of.items())
        self.targets = {t.id: t for t in manifest.targets}
        self.target_kind = {t.id: t.kind for t in manifest.target_inventory().values()}
        kinds = suite_kinds(manifest)
        self.rag = {b for b, kind in kinds.items() if kind == "rag"}
        self.cases: dict[str, Case] = (
            {case.id: case for case in manifest.cases if case.benchmark in kinds} if kinds else {}
        )
        self.rag_section = RagSection(manifest)
        self.agent_section = AgentSection(manifest)
        self.correction = correction
        self.correction_rows = correction_rows(correction) if correction is not None else {}
        self.benchmark_runners: dict[tuple[str, str], MetricRunner] = {}
        self.unplanned: dict[str, MetricRunner] = {}
        self.decisions = {
            t.id: DecisionRunner(preview=self.preview, grouped=self.grouped)
            for t in manifest.targets
            if t.kind == "mom"
        }
        self.foreign_spend = ExactSum()
        self.foreign_known = True
        self.foreign_calls = 0
        self.failure = FirstFailure(None)
        self.failure_groups = FailureGroups()
        self.outcomes = AnswerOutcomes(manifest)
        self.proxies = ProxyProvenance(manifest)
        self.distributions = Distributions([t.id for t in manifest.targets])
        self.repeats = RepeatAgreement(manifest) if manifest.repeats != 1 else None
        self.planned = 0
        self.present: set[str] = set()
        self.sink = sink
        # why a target's cells were never dispatched (its fixture failed in set-up), by target
        self.pending_reasons: dict[str, str] = {}
        self.pending_explained: dict[tuple[str, str], int] = {}
        # cells of python targets that ended without a journaled call, by target
        self.unjournaled: dict[str, int] = {}
        self.usage_conflicts = 0  # calls whose stream sent two usage objects that disagree

    def runner(self) -> MetricRunner:
        return MetricRunner(self.pricing.neutral_cost, grouped=self.grouped)

    def feed(self, cells: Iterable[CellRows]) -> None:
        for cell in cells:
            calls = cell.calls
            if self.correction is not None:
                calls = [(rank, self._effective(call)) for rank, call in calls]
            if cell.result is not None:
                self.failure.add(cell.result, cell.result_rank)
            if cell.target_id in self.targets:
                for _, call in calls:
                    self.proxies.add(call)
            if cell.planned:
                self._planned(cell, calls)
            elif cell.target_id in self.targets:
                if calls:
                    runner = self.unplanned.get(cell.target_id)
                    if runner is None:
                        runner = self.unplanned[cell.target_id] = self.runner()
                    runner.add_unplanned(calls)
            else:  # calls of a target the plan does not have count in the run's spend only
                for _, call in calls:
                    self.foreign_calls += 1
                    cost = known_cost(call.get("cost_usd"))
                    if cost is None:
                        self.foreign_known = False
                    else:
                        self.foreign_spend.add(cost)

    def _effective(self, call: Row) -> Row:
        assert self.correction is not None
        return effective_call(call, self.correction_rows, self.correction.get("id"))

    def _planned(self, cell: CellRows, calls: list[Ranked]) -> None:
        case_id, target_id, row = cell.case_id, cell.target_id, cell.result
        benchmark = self.pricing.benchmark_of[case_id]
        self.planned += 1
        runner = self.benchmark_runners.get((target_id, benchmark))
        if runner is None:
            runner = self.benchmark_runners[(target_id, benchmark)] = self.runner()
            self.present.add(benchmark)
        original = self.case_of[case_id]
        runner.add_cell(original, row, cell.result_rank, calls)
        decisions = self.decisions.get(target_id)
        if decisions is not None:
            decisions.add_cell(original, row, cell.result_rank, calls)
        outcome = cell_outcome(
            case_id,
            target_id,
            benchmark,
            row,
            rag=benchmark in self.rag,
            target_kind=self.target_kind.get(target_id),
            pending_reason=self.pending_reasons.get(target_id),
        )
        if row is None and outcome["error"] is not None:
            key = (target_id, outcome["error"])
            self.pending_explained[key] = self.pending_explained.get(key, 0) + 1
        elif row is not None and not calls and self.target_kind.get(target_id) == "python":
            self.unjournaled[target_id] = self.unjournaled.get(target_id, 0) + 1
        self.outcomes.add(outcome, (call for _, call in calls), (row or {}).get("details"))
        for _, call in calls:
            if call.get("usage_conflict"):
                self.usage_conflicts += 1
        status = outcome["status"]
        if status == "completed":
            self.distributions.add(outcome)
        elif status in NOT_GRADED:
            self.failure_groups.add(outcome)
        if self.repeats is not None:
            self.repeats.add(outcome)
        if self.cases:
            case = self.cases.get(case_id)
            if case is not None:
                self.rag_section.add(case, target_id, row)
                self.agent_section.add(case, target_id, row)
        self.sink.append(outcome)

    def notes(self) -> list[str]:
        """The report's notes (see ``ReportModel.notes``), in the plan's target order."""
        lines = []
        for target in self.manifest.targets:
            for (target_id, reason), n in self.pending_explained.items():
                if target_id == target.id:
                    lines.append(f"{_cells(n)} of {target_id} pending: {reason}")
            n = self.unjournaled.get(target.id, 0)
            if n:
                lines.append(
                    f"{_cells(n)} of {target.id} made no journaled call: calls through other "
                    "clients are not counted"
                )
        if self.usage_conflicts:
            lines.append(
                f"{self.usage_conflicts} call{'s' if self.usage_conflicts != 1 else ''} sent two "
                "usage chunks that disagree: the last was billed (usage_conflict in the receipt)"
            )
        return lines

    def target_runners(self, target: Target) -> tuple[MetricRunner, list[tuple[str, MetricRunner]]]:
        """A target's runner (its benchmarks' merged with its calls outside the plan) and its
        benchmarks' runners, in benchmark order."""
        total = self.runner()
        own = []
        for benchmark in sorted(set(self.pricing.benchmark_of.values())):
            runner = self.benchmark_runners.get((target.id, benchmark))
            if runner is not None:
                own.append((benchmark, runner))
                total.merge(runner)
        if target.id in self.unplanned:
            total.merge(self.unplanned[target.id])
        return total, own

    def total_spend(self) -> float | None:
        """The exact sum of every call's cost; None without calls or when one is unknown."""
        spend = ExactSum()
        spend.merge(self.foreign_spend)
        calls, known = self.foreign_calls, self.foreign_known
        for runner in [*self.benchmark_runners.values(), *self.unplanned.values()]:
            subject, auxiliary, all_known = runner.spend_parts()
            spend.merge(subject)
            spend.merge(auxiliary)
            calls += runner.calls
            known = known and all_known
        return spend.total() if calls and known else None


def _cells(n: int) -> str:
    return f"{n} cell" if n == 1 else f"{n} cells"


def start_cell_pass(
    manifest: Manifest,
    *,
    correction: Mapping[str, Any] | None = None,
    cell_sink: CellSink | None = None,
) -> CellPass:
    """A pass over a run's cells, to be fed (``CellPass.feed``) and then finished by
    ``assemble_report(started=...)``; each cell's outcome goes to ``cell_sink`` (a new list by
    default)."""
    return CellPass(manifest, correction, cell_sink if cell_sink is not None else [])


def build_report(
    manifest: Manifest,
    run: Run,
    results: Sequence[Row],
    calls: Sequence[Row],
    events: Sequence[Row] = (),
    *,
    runner: Mapping[str, Any] | None = None,
    child_attempts: Sequence[Mapping[str, Any]] = (),
    correction: Mapping[str, Any] | None = None,
    recipes: Mapping[str, dict[str, Any]] | None = None,
    indexes: Mapping[str, dict[str, Any]] | None = None,
    local_embedding: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of rows already in memory (``assemble_report`` over ``cells_in_memory``);
    the first ``failure_observed`` event in ``events`` names the run's failure."""
    failure_event = next((e for e in events if e.get("kind") == FAILURE_OBSERVED), None)
    return assemble_report(
        manifest,
        run,
        cells_in_memory(manifest.planned_keys(), results, calls),
        failure_event=failure_event,
        pending_reasons=pending_reasons_of(events),
        runner=runner,
        child_attempts=child_attempts,
        correction=correction,
        recipes=recipes,
        indexes=indexes,
        local_embedding=local_embedding,
    )


def assemble_report(
    manifest: Manifest,
    run: Run,
    cells: Iterable[CellRows],
    *,
    failure_event: Mapping[str, Any] | None = None,
    pending_reasons: Mapping[str, str] | None = None,
    runner: Mapping[str, Any] | None = None,
    child_attempts: Sequence[Mapping[str, Any]] = (),
    correction: Mapping[str, Any] | None = None,
    recipes: Mapping[str, dict[str, Any]] | None = None,
    indexes: Mapping[str, dict[str, Any]] | None = None,
    local_embedding: Mapping[str, Any] | None = None,
    cell_sink: CellSink | None = None,
    shards: Sequence[Mapping[str, Any]] | None = None,
    started: CellPass | None = None,
) -> dict[str, Any]:
    """Compute the whole report dict (validated later by ``ReportModel``) in one pass over
    ``cells``: every planned cell in planned order, then the rows outside the plan
    (``core.report.rows``). Each cell's outcome is appended to ``cell_sink`` (a new list by
    default), which becomes the report's ``cells``.

    ``pending_reasons``: why a target's cells were never dispatched (``pending_reasons_of``),
    by target id; its pending cells carry it as their ``error``.

    ``started``: a pass already fed the plan's first cells (``start_cell_pass``, made with
    this ``manifest`` object and ``correction``; its sink is the report's), and ``cells`` are
    then the ones after them.

    ``recipes`` are the run's router recipe snapshots by target id; a router target without
    one is reported "unavailable" (never borrowed from another run). ``local_embedding`` is
    the local embedding baseline a RAG snapshot records (``rag_config``).

    With an accounting ``correction`` every call is read through it (``effective_call``)
    before any metric; the original receipts are not touched.
    """
    if started is None:
        cell_pass = start_cell_pass(manifest, correction=correction, cell_sink=cell_sink)
    elif started.manifest is not manifest or started.correction is not correction:
        raise ValueError("a cell pass started for another plan or accounting correction")
    else:
        cell_pass = started
    cell_pass.failure.event = failure_event
    cell_pass.pending_reasons = dict(pending_reasons or {})
    cell_pass.feed(cells)
    sink = cell_pass.sink
    preview = cell_pass.preview
    replay = manifest.mode == "replay"
    origins = suite_origins(manifest)

    summary_targets: list[dict[str, Any]] = []
    benchmark_rows: list[dict[str, Any]] = []
    for target in manifest.targets:
        session_mode = "stateless" if preview or replay else target.session_mode
        total, own = cell_pass.target_runners(target)
        metric = total.metric(target.id, session_mode)
        own_rows = [
            {
                "benchmark": benchmark,
                "target_id": target.id,
                "data_source": origins.get(benchmark),
                **bench.metric(target.id, session_mode),
            }
            for benchmark, bench in own
        ]
        metric.update(macro_and_score(manifest, own_rows, metric["complete"], cell_pass.present))
        metric["macro_accuracy_ci95"] = macro_interval(own_rows, manifest.benchmark_weights)
        metric["macro_accuracy_ci95_worst_coverage"] = macro_worst_coverage(own_rows)
        metric.update({"kind": target.kind, "model": target.model, "simulated": target.simulated})
        decisions = cell_pass.decisions.get(target.id)
        metric["decision_breakdown"] = decisions.rows() if decisions is not None else []
        if preview:
            apply_preview_overrides(metric, total.preview_distributions())
            for row, (_, bench_runner) in zip(own_rows, own, strict=True):
                apply_preview_overrides(row, bench_runner.preview_distributions())
        elif replay:
            apply_replay_overrides(metric, total.preview_distributions())
            for row, (_, bench_runner) in zip(own_rows, own, strict=True):
                apply_replay_overrides(row, bench_runner.preview_distributions())
        summary_targets.append(metric)
        benchmark_rows.extend(own_rows)

    totals_known = all(t["total_spend_usd"] is not None for t in summary_targets)
    limitations = _limitations(manifest, run, summary_targets, runner)
    cached_cells = sum(t["cache"]["cells"] for t in summary_targets)
    avoided = [t["cache_avoided_cost_usd"] for t in summary_targets]
    if cached_cells:
        limitations.append(
            f"{cached_cells} cell(s) were answered from the response cache (from cache): their "
            "answers are earlier live calls' saved evidence, without spend, latency or TTFT; "
            "the run is not complete live evidence (docs/caching-honestly.md)."
        )
    sources = data_sources(manifest, cell_pass.present)
    if not sources["comparable"]:
        limitations.append(
            f"Where the cases came from: {sources['label']} (each benchmark's data_source says "
            "which data it is)."
        )
    proxies = cell_pass.proxies.rows()
    limitations += explanation_limitations(manifest, proxies)
    if correction is not None:
        limitations.append(
            f"Usage and cost are read through accounting correction {correction.get('id')} "
            "(offline re-verification of the saved streams); calls it could not verify count "
            "as unknown. The original call receipts are preserved."
        )
    return {
        "version": REPORT_VERSION,
        "protocol": manifest.version,
        "run_id": run.id,
        "status": run.status,
        "error": run.error,
        "mode": manifest.mode,
        "evidence_mode": "offline_estimate" if replay else None,
        "replay_sources": dict(manifest.replay_sources) if manifest.replay_sources else None,
        "cost_policy": manifest.cost_policy,
        "profile": manifest.profile,
        "seed": manifest.seed,
        "plan_sha256": manifest.plan_sha256,
        "case_sha256": manifest.case_sha256,
        "created_at": run.created_at,
        "updated_at": run.updated_at,
        "failure": cell_pass.failure.failure(),
        "recovery": manifest.recovery,
        "child_attempts": [dict(child) for child in child_attempts],
        "summary": {
            "targets": summary_targets,
            "planned_cells": cell_pass.planned,
            "wall_time_s": wall_time_s(run),
            "total_spend_usd": 0.0 if replay else cell_pass.total_spend() if totals_known else None,
            "cache_avoided_cost_usd": math.fsum(a for a in avoided if a is not None)
            if all(a is not None for a in avoided)
            else None,
            "from_cache": cached_cells > 0,
        },
        "benchmarks": benchmark_rows,
        "data_sources": sources,
        "limitations": limitations,
        "notes": cell_pass.notes(),
        "usage_conflict_calls": cell_pass.usage_conflicts,
        "rag": cell_pass.rag_section.section(
            rag_config(manifest, local_embedding), runner, indexes or {}
        ),
        "agent": cell_pass.agent_section.section(agent_config(manifest), runner),
        "provenance": {
            "plan_sha256": manifest.plan_sha256,
            "case_sha256": manifest.case_sha256,
            "dataset": manifest.dataset.model_dump(mode="json"),
            "sampling": manifest.sampling,
            "adapter_versions": manifest.adapter_versions,
            "benchmark_weights": manifest.benchmark_weights,
            "custom_subset": manifest.execution_cells is not None or manifest.dataset.custom_subset,
            "target_profiles": [
                {
                    "id": t.id,
                    "model": t.model,
                    "kind": t.kind,
                    "simulated": t.simulated,
                    "request_params": t.request_params,
                    "config_hash": t.config_hash,
                }
                for t in manifest.targets
            ],
            "profile": manifest.profile,
            "seed": manifest.seed,
            "runner": dict(runner) if runner is not None else None,
            "shards": [dict(shard) for shard in shards] if shards else None,
            "recipes": [
                recipe_summary(t, (recipes or {}).get(t.id))
                for t in manifest.targets
                if t.kind == "mom"
            ],
            "accounting_correction": correction_summary(correction)
            if correction is not None
            else None,
        },
        "failure_groups": cell_pass.failure_groups.rows(),
        "outcomes": cell_pass.outcomes.rows(),
        "proxies": proxies,
        "distributions": cell_pass.distributions.histograms(),
        "plan": plan_identity(manifest),
        "repeats": cell_pass.repeats.section() if cell_pass.repeats is not None else None,
        "frontier": frontier(
            # a preview has no quality and a replay only an estimate: listed apart (unplaced)
            frontier_point(
                run.id, t, [] if preview or replay else benchmark_rows, manifest.benchmark_weights
            )
            for t in summary_targets
        ),
        "cells": sink,
    }
