"""Paired comparison of runs (reference/report-and-accounting.md §8), pure.

A run enters as a ``RunSide`` built from its JSON report (the report carries the frozen plan
identity and every cell's outcome, so a CI artifact works as well as a run in the store).
``Comparison`` validates the pair (§8.1, §8.2) and computes per-target rows (§8.4); ``compare``
returns sr-bench's output (§8.5) against the strongest single baseline (§8.3). Each row also
carries ``paired_statistics``: exact McNemar, Newcombe and stratified Wald intervals and the cases
a margin needs.


Why one long module: §8 of the reference is one procedure (validate, select, pair, row);
its steps share the ``Comparison`` state."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from pytest_srbench.core.calls.usage import CACHE_NEUTRAL_BASIS
from pytest_srbench.core.canonical import canonical_json, integralize
from pytest_srbench.core.compare import paired
from pytest_srbench.core.compare.caveats import CAVEATS
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.origins import UNKNOWN, data_kind, describe_origin, source_conflict
from pytest_srbench.core.plan.planned import planned_keys
from pytest_srbench.core.report.frontier import frontier, frontier_point

COMPARE_VERSION = "sr-bench-1.0-compare"
MANY_VERSION = "pytest-srbench-compare-1"
COMPARABLE = frozenset({"completed", "failed"})
ROLE_KEYS = ("judge", "simulator")
QUALITY_DENOMINATOR = "all_planned_cases; explicit failed outcomes count as incorrect"
QUALITY_METRIC = "fixed-weight benchmark macro accuracy"
CI_QUALIFICATION = (
    "Distribution-free paired Hoeffding bound over benchmark-stratified case differences; "
    "valid but conservative. The bootstrap interval is a diagnostic only."
)
COST_BASIS = "per_case"
STRONGEST_SINGLE = "strongest-single-baseline"
SAME_TARGET = "same-target"
SELECTION = "strongest single-model target by exact fixed-weight macro accuracy"
SELECTION_QUALIFICATION = (
    "The baseline is the strongest single model of the baseline run; it is not an oracle "
    "choosing the best model per case."
)
TIE_POLICY = (
    "complete subject cost first, then the lower subject cost, then the smaller target id "
    "(savings still need every tied target's total spend)"
)
TIED_COST_REASON = (
    "At least one strongest single-model reference has incomplete total spend (subject plus "
    "auxiliary); the cheapest strongest baseline cannot be established."
)
ASSUMPTIONS = {
    "hoeffding": "bounded differences only; no distributional assumption; conservative",
    "bootstrap": "resampled cases stand for the population; undercovers at small n; diagnostic",
    "mcnemar": "exact sign test on the non-tied cases; tests equality, not a margin",
    "newcombe": "Wilson-score (large-sample score) interval for the pooled paired difference; "
    "targets the micro (case-weighted) delta",
    "stratified_newcombe": "per-benchmark Newcombe intervals combined by MOVER with the fixed "
    "weights; targets the macro delta; undercovers when the runs disagree on many cases "
    "(docs/gate-calibration.md)",
    "stratified_wald": "normal interval for the macro delta; each benchmark's variance is its "
    "mean squared difference with one pseudo-case at 1 (a floor); the gate's default, "
    "calibrated in docs/gate-calibration.md",
    "cases_needed": "cases at the current benchmark mix for the gate's interval to reach the "
    "margin, at each benchmark's mean squared difference floored at one pseudo-case of the "
    "pooled one",
}
ALLOW_MIXED_HINT = (
    "allow mixed sources explicitly to compare them anyway (srbench compare "
    "--allow-mixed-sources, pytest --srbench-allow-mixed-sources, the API's "
    "allow_mixed_sources=true); the comparison is then flagged"
)


ALLOW_CACHED_HINT = (
    "allow cached cells explicitly to pair them anyway (srbench compare --allow-cached, "
    "pytest --srbench-allow-cached); the verdict then says so"
)


class ComparisonError(InputError):
    """Two runs cannot be compared; the message says why."""


def replay_refusal(run_id: str) -> str:
    """Why a replay run is never compared or gated as live evidence (its words are tested)."""
    return f"run {run_id} is an offline replay (estimate), not live evidence"


@dataclass(frozen=True)
class RunSide:
    """What comparison reads of one run: its plan identity, target metrics and cell outcomes."""

    run_id: str
    status: str
    created_at: str
    plan: Mapping[str, Any]
    targets: Sequence[Mapping[str, Any]]
    benchmark_rows: Sequence[Mapping[str, Any]]
    cells: Sequence[Mapping[str, Any]]
    source: str = "store"
    kinds: dict[str, str] = field(default_factory=dict)
    flip_rates: dict[str, float | None] = field(default_factory=dict)

    @classmethod
    def from_report(cls, report: Mapping[str, Any], source: str = "store") -> RunSide:
        plan = report.get("plan")
        if not isinstance(plan, Mapping):
            raise ComparisonError(
                f"{source}: the report has no plan identity (written by an older version?); "
                "rebuild it with `srbench report RUN --json PATH`"
            )
        return cls(
            run_id=str(report["run_id"]),
            status=str(report["status"]),
            created_at=str(report.get("created_at") or ""),
            plan=plan,
            targets=list(report["summary"]["targets"]),
            benchmark_rows=list(report.get("benchmarks") or []),
            cells=_cells(report.get("cells")),
            source=source,
            kinds={t["id"]: t.get("kind", "single") for t in plan.get("targets") or []},
            flip_rates={
                t["target_id"]: t["flip_rate"]
                for t in (report.get("repeats") or {}).get("targets") or []
            },
        )

    @property
    def mode(self) -> str:
        return str(self.plan.get("mode", "live"))

    @property
    def data_sources(self) -> dict[str, Mapping[str, Any] | None]:
        """Benchmark -> the origin of its cases; {} for a report from before data origins."""
        return dict(self.plan.get("data_sources") or {})

    def metric(self, target_id: str) -> Mapping[str, Any]:
        return next(t for t in self.targets if t["id"] == target_id)

    def target_ids(self) -> list[str]:
        return [str(t["id"]) for t in self.plan.get("targets") or []]

    def base_case(self) -> dict[str, str]:
        """Case id -> the case it repeats (itself without repeats)."""
        return {c["id"]: c.get("repeat_of") or c["id"] for c in self.plan.get("cases") or []}

    def case_order(self) -> list[str]:
        return list(dict.fromkeys(self.base_case().values()))

    def benchmark_of(self) -> dict[str, str]:
        return {c.get("repeat_of") or c["id"]: c["benchmark"] for c in self.plan.get("cases") or []}

    def cells_per_case(self, target_id: str) -> int | None:
        """Planned cells per case of one target (K under ``--srbench-repeats K``); None when its
        cases do not all have the same number of cells (its cost cannot be put per case)."""
        base = self.base_case()
        cells = [case_id for case_id, target in self.planned_pairs() if target == target_id]
        counts = set(Counter(base[case_id] for case_id in cells).values())
        return counts.pop() if len(counts) == 1 else None

    def planned_pairs(self) -> list[tuple[str, str]]:
        """The frozen plan's (case, target) cells: its explicit cells, else each case with the
        targets its benchmark runs against (its kinds, or the targets a plan with variants
        names for it)."""
        plan = self.plan
        return planned_keys(
            [(c["id"], c["benchmark"]) for c in plan.get("cases") or []],
            [(str(t["id"]), str(t.get("kind", "single"))) for t in plan.get("targets") or []],
            [(c["case_id"], c["target_id"]) for c in plan.get("execution_cells") or ()],
            plan.get("target_kinds"),
            plan.get("benchmark_targets"),
        )

    def planned_cases(self) -> dict[str, set[str]]:
        """Target -> the (original) cases the frozen plan gives it."""
        base = self.base_case()
        pairs = self.planned_pairs()
        planned: dict[str, set[str]] = defaultdict(set)
        for case_id, target_id in pairs:
            planned[target_id].add(base[case_id])
        return planned


def benchmarks_of(side: RunSide) -> set[str]:
    """The benchmarks a run planned cases of."""
    return {str(c["benchmark"]) for c in side.plan.get("cases") or []}


# plan fields keyed by benchmark: restricting a run to some benchmarks keeps only theirs
_PER_BENCHMARK = (
    "benchmark_weights",
    "benchmark_options",
    "adapter_versions",
    "data_sources",
    "target_kinds",
    "benchmark_targets",
)
# whole-run spend: not the spend of a part of the run
_SPEND_KEYS = ("cost_usd", "total_spend_usd", "cache_neutral_cost_usd", "evaluation_cost_usd")


def restrict_side(side: RunSide, benchmarks: set[str]) -> RunSide:
    """The part of a run on ``benchmarks``: its planned cases, cells, benchmark rows and plan
    fields of those benchmarks only, each target's ``correct`` recounted from its rows and its
    whole-run spend dropped (a part of the run has no known spend). ``case_sha256`` digests
    every case of the run and cannot be recomputed for a part; it is null, so two parts are
    compared by their planned case ids, data sources and protocol (not their case digest)."""
    plan = dict(side.plan)
    cases = [c for c in plan.get("cases") or [] if c["benchmark"] in benchmarks]
    kept = {c["id"] for c in cases}
    plan["cases"] = cases
    plan["case_sha256"] = None
    for key in _PER_BENCHMARK:
        value = plan.get(key)
        if isinstance(value, Mapping):
            plan[key] = {name: v for name, v in value.items() if name in benchmarks}
    if plan.get("execution_cells") is not None:
        plan["execution_cells"] = [c for c in plan["execution_cells"] if c["case_id"] in kept]
    rows = [r for r in side.benchmark_rows if r["benchmark"] in benchmarks]
    targets = []
    for metric in side.targets:
        own = [r for r in rows if r["target_id"] == metric["id"]]
        targets.append(
            {
                **metric,
                "correct": sum(int(r.get("correct") or 0) for r in own),
                "total": sum(int(r.get("total") or 0) for r in own),
                **dict.fromkeys(_SPEND_KEYS),
            }
        )
    return replace(
        side,
        plan=plan,
        targets=targets,
        benchmark_rows=rows,
        cells=[c for c in side.cells if c["case_id"] in kept],
    )


def _cells(cells: Any) -> Sequence[Mapping[str, Any]]:
    """A report's cells as they are when already a sequence (a report built from the store
    keeps them in a file and reads them again on each pass), else as a list."""
    if isinstance(cells, Sequence) and not isinstance(cells, str):
        return cells
    return list(cells or [])


def exact_quality(side: RunSide, target_id: str) -> Fraction | None:
    """Σ_b F(str(w_b))·F(correct_b, total_b) / Σ_b F(str(w_b)) over the target's rows."""
    weights = side.plan.get("benchmark_weights") or {}
    num = Fraction(0)
    den = Fraction(0)
    for row in side.benchmark_rows:
        if row["target_id"] != target_id or not row["total"]:
            continue
        weight = Fraction(str(weights[row["benchmark"]]))
        num += weight * Fraction(row["correct"], row["total"])
        den += weight
    return num / den if den else None


def _outcomes(
    side: RunSide, who: str, expected: Mapping[str, set[str]]
) -> dict[str, dict[str, list[bool]]]:
    """target -> base case -> terminal outcomes (failed counts as incorrect), validated against
    the cases each target is planned to answer (``expected``)."""
    base = side.base_case()
    known = set(side.target_ids())
    seen: set[tuple[str, str]] = set()
    outcomes: dict[str, dict[str, list[bool]]] = {t: defaultdict(list) for t in known}
    lacking = f"{who} quality results lack unique terminal outcomes"
    for cell in side.cells:
        target_id = cell["target_id"]
        if target_id not in known:
            continue
        key = (cell["case_id"], target_id)
        case = base.get(cell["case_id"])
        status = cell.get("status")
        if status == "pending":
            continue  # a planned cell without a row: reported as incomplete below
        if key in seen or case is None or case not in expected.get(target_id, ()):
            raise ComparisonError(lacking)
        seen.add(key)
        if status not in COMPARABLE:
            raise ComparisonError(lacking)
        if status == "completed" and not isinstance(cell.get("correct"), bool):
            raise ComparisonError(lacking)
        outcomes[target_id][case].append(status == "completed" and cell["correct"] is True)
    repeats = _repeat_counts(side)
    for target_id, by_case in outcomes.items():
        if set(by_case) != expected.get(target_id, set()) or any(
            len(values) != repeats.get(case, 1) for case, values in by_case.items()
        ):
            raise ComparisonError(f"{who} quality results are incomplete")
    return outcomes


def check_consistent(side: RunSide, who: str) -> None:
    """A report's own numbers must agree: the benchmark rows and summary targets (which the
    quality delta reads) with its cells (which wins, losses and the intervals read). A
    hand-edited JSON report that changed one and not the other is refused, not compared."""
    benchmark_of = {c["id"]: c["benchmark"] for c in side.plan.get("cases") or []}
    cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for cell in side.cells:
        counts = cells[(str(cell["target_id"]), benchmark_of.get(cell["case_id"], ""))]
        counts[0] += cell.get("status") == "completed" and cell.get("correct") is True
        counts[1] += 1

    def refuse(target_id: str, where: str, says: Any, holds: int) -> ComparisonError:
        return ComparisonError(
            f"{who} report {side.source} is inconsistent: target {target_id}{where} says "
            f"{says} correct but its cells hold {holds} correct; refusing to compare it"
        )

    for row in side.benchmark_rows:
        target_id, benchmark = str(row["target_id"]), str(row["benchmark"])
        right, total = cells.get((target_id, benchmark), (0, 0))
        if row.get("correct") != right or row.get("total") != total:
            raise refuse(
                target_id, f" on {benchmark}", f"{row.get('correct')} of {row.get('total')}",
                right,
            )  # fmt: skip
    for target in side.targets:
        target_id = str(target["id"])
        right = sum(c[0] for (t, _), c in cells.items() if t == target_id)
        if target.get("correct") != right:
            raise refuse(target_id, "", target.get("correct"), right)


def _repeat_counts(side: RunSide) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for case in side.base_case().values():
        counts[case] += 1
    return counts


def _identity(value: Any) -> str:
    """The form two plan fields are compared in: the plan hash's (1.0 and 1 are the same)."""
    return canonical_json(integralize(value))


def _profile(side: RunSide, target: Mapping[str, Any]) -> dict[str, Any]:
    sampling = dict(side.plan.get("sampling") or {})
    sampling.update(target.get("request_params") or {})
    return sampling


def _inventory(side: RunSide) -> dict[str, Mapping[str, Any]]:
    inventory = dict(side.plan.get("auxiliary_targets") or {})
    inventory.update({t["id"]: t for t in side.plan.get("targets") or []})
    return inventory


def _effective_roles(side: RunSide) -> dict[tuple[str, str], Any]:
    inventory = _inventory(side)
    roles = {}
    for benchmark, options in (side.plan.get("benchmark_options") or {}).items():
        for role in ROLE_KEYS:
            bound = options.get(role)
            if bound is None:
                continue
            target = inventory.get(bound) or {}
            roles[(benchmark, role)] = _identity(
                {
                    "kind": target.get("kind"),
                    "model": target.get("model"),
                    "prices": target.get("prices"),
                    "request_params": _profile(side, target),
                }
            )
    return roles


def _options_without_roles(side: RunSide) -> dict[str, Any]:
    return {
        benchmark: {k: v for k, v in options.items() if k not in ROLE_KEYS}
        for benchmark, options in (side.plan.get("benchmark_options") or {}).items()
    }


def check_protocol(baseline: RunSide, candidate: RunSide) -> None:
    """§8.2 protocol compatibility; each failure starts with "Cannot compare"."""
    base, cand = baseline.plan, candidate.plan
    policy = base.get("output_policy", "bounded")
    if policy != cand.get("output_policy", "bounded"):
        raise ComparisonError("Cannot compare runs with different output policies")
    if policy == "native" and base.get("native_model_limits") != cand.get("native_model_limits"):
        raise ComparisonError("Cannot compare runs with different native model limits")
    for key in ("case_sha256", "sampling", "benchmark_weights", "adapter_versions", "mode"):
        if _identity(base.get(key)) != _identity(cand.get(key)):
            raise ComparisonError(f"Cannot compare runs with different {key}")
    if _identity(_options_without_roles(baseline)) != _identity(_options_without_roles(candidate)):
        raise ComparisonError("Cannot compare runs with different benchmark_options")
    if _identity(base.get("limits")) != _identity(cand.get("limits")):
        raise ComparisonError("Cannot compare runs with different limits")
    if _effective_roles(baseline) != _effective_roles(candidate):
        raise ComparisonError("Cannot compare runs with different judge or simulator targets")
    prices: dict[str, str] = {}
    profiles: dict[str, str] = {}
    for side in (baseline, candidate):
        for target in _inventory(side).values():
            for model, price in (target.get("prices") or {}).items():
                text = _identity(price)
                if prices.setdefault(model, text) != text:
                    raise ComparisonError(f"Cannot compare runs with different prices for {model}")
            if target.get("kind", "single") == "single":
                text = _identity(_profile(side, target))
                if profiles.setdefault(str(target["model"]), text) != text:
                    raise ComparisonError(
                        f"Cannot compare runs with different request parameters for "
                        f"{target['model']}"
                    )


def _saving(
    base: float | None, cand: float | None, eligible: bool, scale: float | None = 1.0
) -> float | None:
    """Percent saved per case: ``scale`` is baseline cells per case / candidate cells per
    case (1.0 for equal repeats, where the result is sr-bench's ``(1 − c/b)·100`` exactly)."""
    if not eligible or scale is None or base is None or base <= 0 or cand is None:
        return None
    return (1 - cand / base * scale) * 100


def source_differences(baseline: RunSide, candidate: RunSide) -> list[dict[str, Any]]:
    """The benchmarks of both runs whose cases came from different data (``source_conflict``),
    each with both origins."""
    base, cand = baseline.data_sources, candidate.data_sources
    found = []
    for name in sorted(set(base) & set(cand)):
        reason = source_conflict(base[name], cand[name])
        if reason is not None:
            found.append(
                {"benchmark": name, "reason": reason, "baseline": base[name],
                 "candidate": cand[name]}
            )  # fmt: skip
    return found


def check_sources(
    baseline: RunSide, candidate: RunSide, allow_mixed_sources: bool = False
) -> list[dict[str, Any]]:
    """Refuse to pair runs whose same benchmark came from different data (a kind, a released
    revision or file hashes, a synthetic seed) unless ``allow_mixed_sources``; returns the
    differences (what a flagged comparison lists)."""
    differences = source_differences(baseline, candidate)
    if differences and not allow_mixed_sources:
        first = differences[0]
        more = [d["benchmark"] for d in differences[1:]]
        raise ComparisonError(
            f"Cannot compare runs whose cases come from different data sources: "
            f"{first['benchmark']} is {describe_origin(first['baseline'])} in the baseline "
            f"{baseline.run_id} but {describe_origin(first['candidate'])} in the candidate "
            f"{candidate.run_id} ({first['reason']})"
            + (f"; {', '.join(more)} differ too" if more else "")
            + f"; {ALLOW_MIXED_HINT}"
        )
    return differences


def sources_summary(
    baseline: RunSide, candidate: RunSide, allow_mixed_sources: bool
) -> dict[str, Any]:
    """The comparison's ``data_sources``: each run's kind of data and, when they differ for a
    benchmark, a loud ``warning`` listing every difference (only with ``allow_mixed_sources``)."""
    differences = source_differences(baseline, candidate)

    def kind(side: RunSide) -> str:
        return data_kind(side.data_sources.values()) if side.data_sources else UNKNOWN

    warning = None
    if differences:
        warning = "MIXED DATA SOURCES — this comparison pairs different data: " + "; ".join(
            f"{d['benchmark']}: baseline {describe_origin(d['baseline'])}, candidate "
            f"{describe_origin(d['candidate'])} ({d['reason']})"
            for d in differences
        )
    return {
        "baseline_kind": kind(baseline),
        "candidate_kind": kind(candidate),
        "mixed": bool(differences),
        "allowed": allow_mixed_sources,
        "differences": differences,
        "warning": warning,
    }


def cached_cells(side: RunSide) -> int:
    """How many of a run's cells were answered from the response cache."""
    return sum(int((t.get("cache") or {}).get("cells") or 0) for t in side.targets)


def check_cached(baseline: RunSide, candidate: RunSide, allow_cached: bool) -> dict[str, Any]:
    """Refuse to pair runs with cells answered from the response cache (never complete live
    evidence) unless ``allow_cached``; returns the comparison's ``cached`` block, whose
    ``warning`` a verdict repeats."""
    counts = {"baseline": cached_cells(baseline), "candidate": cached_cells(candidate)}
    named = [
        f"{role} run {side.run_id} has {counts[role]} cell(s) from cache"
        for role, side in (("baseline", baseline), ("candidate", candidate))
        if counts[role]
    ]
    if named and not allow_cached:
        raise ComparisonError(
            "Cannot pair cells answered from the response cache as live evidence: "
            + "; ".join(named)
            + f"; {ALLOW_CACHED_HINT}"
        )
    return {
        "baseline_cells": counts["baseline"],
        "candidate_cells": counts["candidate"],
        "allowed": allow_cached,
        "warning": "CACHED CELLS PAIRED (--srbench-allow-cached): " + "; ".join(named)
        if named
        else None,
    }


def check_plans(
    baseline: RunSide, candidate: RunSide, allow_mixed_sources: bool = False
) -> tuple[list[str], dict[str, set[str]], dict[str, dict[str, list[bool]]]]:
    """Everything comparable before the candidate has outcomes: the baseline's eligibility and
    outcomes (§8.1, and its cells agreeing with its own summary), the same data sources
    (``check_sources``), identical planned cases and protocol (§8.2). Returns the baseline
    singles, the cases each target answers and the baseline's outcomes.

    sr-bench's rule: every target of both runs covers the same cases. A plan with variants
    (``benchmark_targets``: each variant answers only its test's benchmark) keeps it per
    target instead: a candidate target covers the cases of the baseline target of its id."""
    for side in (baseline, candidate):
        if side.mode == "replay":
            raise ComparisonError(replay_refusal(side.run_id))
    for role, side in (("Baseline", baseline), ("Candidate", candidate)):
        if side.mode != "live":
            raise ComparisonError(
                f"{role} run {side.run_id} is a {side.mode} run (routing decisions without "
                "answers): only live runs are compared"
            )
    check_sources(baseline, candidate, allow_mixed_sources)
    if baseline.status not in COMPARABLE:
        raise ComparisonError("Baseline must be a completed or failed live run")
    singles = [t for t in baseline.target_ids() if baseline.kinds.get(t) == "single"]
    if not singles:
        raise ComparisonError("Baseline must contain a single-model target")
    planned = baseline.planned_cases()
    cand_planned = candidate.planned_cases()
    if baseline.run_id == candidate.run_id:
        raise ComparisonError("Choose two distinct runs for comparison")
    expected: dict[str, set[str]]
    if baseline.plan.get("benchmark_targets") or candidate.plan.get("benchmark_targets"):
        for target_id in candidate.target_ids():
            if target_id in planned and cand_planned.get(target_id) != planned[target_id]:
                raise ComparisonError(
                    f"Candidate target {target_id} covers other cases than the baseline's"
                )
        expected = {**planned, **cand_planned}
    else:
        shared = planned.get(singles[0], set())
        if not shared or any(planned.get(t, set()) != shared for t in baseline.target_ids()):
            raise ComparisonError("Baseline targets must cover identical planned cases")
        if any(cand_planned.get(t, set()) != shared for t in candidate.target_ids()):
            raise ComparisonError("Candidate targets must cover identical planned cases")
        expected = {t: shared for t in [*baseline.target_ids(), *candidate.target_ids()]}
    check_protocol(baseline, candidate)
    outcomes = _outcomes(baseline, "Baseline", expected)
    check_consistent(baseline, "Baseline")
    return singles, expected, outcomes


def plan_side(run_id: str, plan: Mapping[str, Any]) -> RunSide:
    """A run that has a frozen plan but no outcomes yet (to check a baseline before running)."""
    kinds = {t["id"]: t.get("kind", "single") for t in plan.get("targets") or []}
    return RunSide(run_id, "running", "", plan, [], [], [], "plan", kinds)


class Comparison:
    """A validated (baseline, candidate) pair and its per-target paired rows."""

    def __init__(
        self,
        baseline: RunSide,
        candidate: RunSide,
        allow_mixed_sources: bool = False,
        allow_cached: bool = False,
    ) -> None:
        singles, expected, base_outcomes = check_plans(baseline, candidate, allow_mixed_sources)
        self.sources = sources_summary(baseline, candidate, allow_mixed_sources)
        self.cached = check_cached(baseline, candidate, allow_cached)
        if candidate.status not in COMPARABLE:
            raise ComparisonError("Candidate must be a completed or failed run")
        self.baseline = baseline
        self.candidate = candidate
        self.singles = singles
        self.expected = expected
        self.case_order = baseline.case_order()
        self.benchmark_of = baseline.benchmark_of()
        self.base_outcomes = base_outcomes
        self.cand_outcomes = _outcomes(candidate, "Candidate", expected)
        check_consistent(candidate, "Candidate")
        self.select_baseline()

    # -- §8.3 ------------------------------------------------------------------------------
    def select_baseline(self) -> None:
        qualities = {t: exact_quality(self.baseline, t) for t in self.singles}
        best = max(q for q in qualities.values() if q is not None)
        self.tied = sorted(t for t, q in qualities.items() if q == best)

        def known(target_id: str, key: str) -> float | None:
            value = self.baseline.metric(target_id).get(key)
            return None if value is None else float(value)

        def subject(target_id: str) -> float | None:
            return known(target_id, "cost_usd")

        # The results guide: a quality tie prefers the single model whose *subject* cost is
        # complete and lowest (the judge's spend says nothing about the model under test).
        self.selected = min(
            self.tied,
            key=lambda t: (
                subject(t) is None,
                subject(t) if subject(t) is not None else math.inf,
                t,
            ),
        )
        # Savings eligibility stays on total spend (subject plus auxiliary), as sr-bench has it.
        self.tied_costs_complete = all(known(t, "total_spend_usd") is not None for t in self.tied)
        both_priced = (
            self.baseline.plan.get("cost_policy") == "require_priced"
            and self.candidate.plan.get("cost_policy") == "require_priced"
        )
        self.both_priced = both_priced
        self.cost_eligible = self.tied_costs_complete and both_priced
        self.baseline_reason = None if self.tied_costs_complete else TIED_COST_REASON

    # -- §8.4 ------------------------------------------------------------------------------
    def order(self, target_id: str) -> list[str]:
        """The cases ``target_id`` answers, in the baseline's order."""
        cases = self.expected.get(target_id, set())
        return [case for case in self.case_order if case in cases]

    def _values(
        self, outcomes: Mapping[str, Mapping[str, list[bool]]], target_id: str, order: list[str]
    ) -> Any:
        by_case = outcomes[target_id]
        return {case: sum(by_case[case]) / len(by_case[case]) for case in order}

    def groups(self, target_id: str, baseline_target_id: str) -> dict[str, Any]:
        """Per benchmark (sorted): candidate values, baseline values and normalised weights."""
        order = self.order(target_id)
        if set(order) != set(self.order(baseline_target_id)):
            raise ComparisonError(
                f"{target_id} and {baseline_target_id} answer different cases (a variant answers "
                "only its test's benchmark): compare each with the baseline target of its id"
            )
        cand = self._values(self.cand_outcomes, target_id, order)
        base = self._values(self.base_outcomes, baseline_target_id, order)
        names = sorted({self.benchmark_of[case] for case in order})
        weights = self.baseline.plan.get("benchmark_weights") or {}
        total = sum(weights[name] for name in names)
        members = {name: [c for c in order if self.benchmark_of[c] == name] for name in names}
        return {
            "names": names,
            "candidate": [[cand[c] for c in members[name]] for name in names],
            "baseline": [[base[c] for c in members[name]] for name in names],
            "diffs": [[cand[c] - base[c] for c in members[name]] for name in names],
            "weights": [weights[name] / total for name in names],
            "flat": [cand[c] - base[c] for c in order],
            "candidate_flat": [cand[c] for c in order],
            "baseline_flat": [base[c] for c in order],
        }

    def row(
        self,
        target_id: str,
        baseline_target_id: str | None = None,
        margin: float = 0.05,
        *,
        pairing: str = STRONGEST_SINGLE,
    ) -> dict[str, Any]:
        """One candidate target against a baseline target (default: the selected one);
        ``pairing`` names how that baseline target was chosen."""
        base_id = baseline_target_id or self.selected
        g = self.groups(target_id, base_id)
        q_cand = exact_quality(self.candidate, target_id)
        q_base = exact_quality(self.baseline, base_id)
        delta = float((q_cand or 0) - (q_base or 0))
        flat = g["flat"]
        wins = sum(1 for d in flat if d > 0)
        losses = sum(1 for d in flat if d < 0)
        base_metric = self.baseline.metric(base_id)
        cand_metric = self.candidate.metric(target_id)
        eligible = self.cost_eligible

        def cost(metric: Mapping[str, Any], key: str) -> float | None:
            value = metric.get(key)
            return None if value is None else float(value)

        base_total = cost(base_metric, "total_spend_usd")
        cand_total = cost(cand_metric, "total_spend_usd")
        # Savings compare spend per planned case: a K=3 candidate spends three cells per case.
        base_k = self.baseline.cells_per_case(base_id)
        cand_k = self.candidate.cells_per_case(target_id)
        scale = base_k / cand_k if base_k and cand_k else None
        basis_reason = None
        if scale is None:
            who, which = ("baseline", base_id) if base_k is None else ("candidate", target_id)
            basis_reason = (
                f"Costs cannot be normalised per case: the {who} target {which} does not plan "
                "the same number of cells for every case."
            )
        if self.baseline_reason:
            total_reason: str | None = self.baseline_reason
        elif not self.both_priced:
            total_reason = "Total cost savings require priced accounting for both runs."
        elif basis_reason:
            total_reason = basis_reason
        elif cand_total is None:
            total_reason = (
                "Candidate total spend is incomplete: every planned subject case and every "
                "actual auxiliary call require known costs."
            )
        elif base_total == 0:
            total_reason = "A zero-cost baseline has no defined percentage savings."
        else:
            total_reason = None
        binary = all(v in (0, 1) for v in g["candidate_flat"] + g["baseline_flat"])
        _, pooled = paired.newcombe_interval(g["candidate_flat"], g["baseline_flat"])
        return {
            "candidate_target_id": target_id,
            "baseline_target_id": base_id,
            "pairing": pairing,
            "quality_metric": QUALITY_METRIC,
            "quality_delta": delta,
            "micro_quality_delta": math.fsum(flat) / len(flat),
            "paired_cases": len(flat),
            "wins": wins,
            "losses": losses,
            "ties": len(flat) - wins - losses,
            "quality_delta_ci95": paired.hoeffding_interval(
                delta, [len(d) for d in g["diffs"]], g["weights"]
            ),
            "quality_delta_ci95_method": paired.HOEFFDING_METHOD,
            "quality_delta_ci95_qualification": CI_QUALIFICATION,
            "quality_delta_bootstrap_ci95": paired.stratified_bootstrap(g["diffs"], g["weights"]),
            "subject_cost_saving_percent": _saving(
                cost(base_metric, "cost_usd"), cost(cand_metric, "cost_usd"), eligible, scale
            ),
            "total_cost_saving_percent": _saving(base_total, cand_total, eligible, scale),
            "cache_neutral_cost_saving_percent": _saving(
                cost(base_metric, "cache_neutral_cost_usd"),
                cost(cand_metric, "cache_neutral_cost_usd"),
                eligible,
                scale,
            ),
            "cost_basis": None if scale is None else COST_BASIS,
            "cost_basis_reason": basis_reason,
            "baseline_cells_per_case": base_k,
            "candidate_cells_per_case": cand_k,
            "baseline_subject_cost_usd": cost(base_metric, "cost_usd"),
            "candidate_subject_cost_usd": cost(cand_metric, "cost_usd"),
            "baseline_total_cost_usd": base_total,
            "candidate_total_cost_usd": cand_total,
            "baseline_evaluation_cost_usd": cost(base_metric, "evaluation_cost_usd"),
            "candidate_evaluation_cost_usd": cost(cand_metric, "evaluation_cost_usd"),
            "cache_neutral_baseline_cost_usd": cost(base_metric, "cache_neutral_cost_usd"),
            "cache_neutral_candidate_cost_usd": cost(cand_metric, "cache_neutral_cost_usd"),
            "cache_neutral_cost_basis": CACHE_NEUTRAL_BASIS,
            "total_cost_comparison_reason": total_reason,
            "baseline_flip_rate": self.baseline.flip_rates.get(base_id),
            "candidate_flip_rate": self.candidate.flip_rates.get(target_id),
            "paired_statistics": {
                "binary_outcomes": binary,
                "mcnemar_exact_p": paired.sign_test_p(wins, losses),
                "newcombe_ci95": pooled,
                "stratified_newcombe_ci95": paired.stratified_newcombe(
                    g["candidate"], g["baseline"], g["weights"]
                ),
                "stratified_newcombe_method": paired.NEWCOMBE_METHOD,
                "stratified_wald_ci95": paired.stratified_wald(g["diffs"], g["weights"]),
                "stratified_wald_method": paired.WALD_METHOD,
                "margin": margin,
                "cases_needed_for_margin": paired.cases_for_half_width(
                    g["diffs"], g["weights"], margin
                ),
                "per_benchmark": [
                    {
                        "benchmark": name,
                        "weight": weight,
                        "cases": len(diffs),
                        "delta": math.fsum(diffs) / len(diffs),
                        "newcombe_ci95": paired.newcombe_interval(cand, base)[1],
                        "wald_ci95": paired.stratified_wald([diffs], [1.0]),
                    }
                    for name, weight, diffs, cand, base in zip(
                        g["names"],
                        g["weights"],
                        g["diffs"],
                        g["candidate"],
                        g["baseline"],
                        strict=True,
                    )
                ],
                "assumptions": dict(ASSUMPTIONS),
            },
        }

    def _default_row(self, target_id: str, margin: float) -> dict[str, Any]:
        """A candidate target against the strongest single baseline; a variant that answers
        other cases than it (only its test's benchmark) against the baseline target of its id."""
        selected_cases = set(self.order(self.selected))
        if set(self.order(target_id)) != selected_cases and target_id in self.base_outcomes:
            return self.row(target_id, target_id, margin, pairing=SAME_TARGET)
        return self.row(target_id, margin=margin)

    def same_target_rows(self, margin: float = 0.05) -> list[dict[str, Any]]:
        """The gate's pairing: every candidate target against the baseline's target of the
        same id, else (a target the baseline does not have) the strongest single baseline."""
        baseline_ids = set(self.baseline.target_ids())
        return [
            self.row(target_id, target_id, margin, pairing=SAME_TARGET)
            if target_id in baseline_ids
            else self.row(target_id, margin=margin)
            for target_id in self.candidate.target_ids()
        ]

    def result(
        self,
        margin: float = 0.05,
        rows: Sequence[dict[str, Any]] | None = None,
        pairing: str = STRONGEST_SINGLE,
    ) -> dict[str, Any]:
        """The §8.5 output: every candidate target against the strongest single baseline, or
        the ``rows`` a caller paired otherwise (the gate), with ``pairing`` saying how."""
        if rows is None and pairing == SAME_TARGET:
            rows = self.same_target_rows(margin)
        if rows is None:
            rows = [
                self._default_row(target_id, margin) for target_id in self.candidate.target_ids()
            ]
        return {
            "version": COMPARE_VERSION,
            "baseline_run_id": self.baseline.run_id,
            "candidate_run_id": self.candidate.run_id,
            "baseline_source": self.baseline.source,
            "candidate_source": self.candidate.source,
            "baseline_created_at": self.baseline.created_at,
            "candidate_created_at": self.candidate.created_at,
            "baseline_status": self.baseline.status,
            "candidate_status": self.candidate.status,
            "baseline_quality_complete": all(t["complete"] for t in self.baseline.targets),
            "candidate_quality_complete": all(t["complete"] for t in self.candidate.targets),
            "baseline_targets": [dict(t) for t in self.baseline.targets],
            "candidate_targets": [dict(t) for t in self.candidate.targets],
            "quality_denominator": QUALITY_DENOMINATOR,
            "baseline_selection": SELECTION,
            "baseline_selection_qualification": SELECTION_QUALIFICATION,
            "baseline_selected_target_id": self.selected,
            "baseline_tied_best_target_ids": list(self.tied),
            "baseline_tie_policy": TIE_POLICY,
            "baseline_cost_comparison_eligible": self.cost_eligible,
            "baseline_cost_comparison_reason": self.baseline_reason,
            "pairing": pairing,
            "data_sources": self.sources,
            "cached": self.cached,
            "comparisons": list(rows),
        }


def compare(
    baseline: RunSide,
    candidate: RunSide,
    margin: float = 0.05,
    *,
    allow_mixed_sources: bool = False,
    allow_cached: bool = False,
    pairing: str = STRONGEST_SINGLE,
) -> dict[str, Any]:
    """sr-bench's ``compare``: validate, then every candidate target against the baseline —
    its strongest single model (``STRONGEST_SINGLE``, sr-bench's rule) or, with
    ``SAME_TARGET``, the baseline's target of the same id (the gate's pairing)."""
    return Comparison(baseline, candidate, allow_mixed_sources, allow_cached).result(
        margin, pairing=pairing
    )


def compare_many(
    baseline: RunSide,
    candidates: Sequence[RunSide],
    margin: float = 0.05,
    *,
    allow_mixed_sources: bool = False,
    allow_cached: bool = False,
    pairing: str = STRONGEST_SINGLE,
) -> dict[str, Any]:
    """Every candidate run (iterations, by creation time) against one baseline (paired as
    ``compare`` pairs with ``pairing``), and the
    cost–quality frontier over all targets of all the runs. ``mixed_sources`` says when any
    pair was compared across different data (only with ``allow_mixed_sources``)."""
    ordered = sorted(candidates, key=lambda side: (side.created_at, side.run_id))
    comparisons = [
        compare(
            baseline,
            side,
            margin,
            allow_mixed_sources=allow_mixed_sources,
            allow_cached=allow_cached,
            pairing=pairing,
        )
        for side in ordered
    ]  # validates every pair
    points = [
        frontier_point(side.run_id, target, side.benchmark_rows, side.plan["benchmark_weights"])
        for side in (baseline, *ordered)
        for target in side.targets
    ]
    return {
        "version": MANY_VERSION,
        "baseline_run_id": baseline.run_id,
        "margin": margin,
        "mixed_sources": any(c["data_sources"]["mixed"] for c in comparisons),
        "candidates": comparisons,
        "frontier": frontier(points),
        "caveats": list(CAVEATS),
    }
