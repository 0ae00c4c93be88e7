"""The JSON report as a pydantic model; its JSON Schema is exported to ``schemas/``.

``build_report`` produces the data, this model fixes its shape and documents each field.

Why one long module: the report's schema is read as one document (it exports one JSON
Schema); its parts are records with field descriptions, not logic."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, model_serializer
from pydantic_core.core_schema import SerializerFunctionWrapHandler


class _Strict(BaseModel):
    # protected_namespaces=(): fields such as model_switches are report names (pydantic < 2.10
    # reserved the whole model_ prefix)
    model_config = ConfigDict(extra="forbid", protected_namespaces=())


class TokenBuckets(_Strict):
    """Four exclusive token buckets summed over subject calls."""

    input_tokens: int
    cached_input_tokens: int
    cache_write_tokens: int
    output_tokens: int


class StrictFormat(_Strict):
    checked_cases: int
    failed_cases: int
    unassessed_cases: int


class SubjectCalls(_Strict):
    total: int
    finish_reasons: dict[str, int]
    unknown_finish_reason: int


class OutputDiagnostics(_Strict):
    planned_cases: int
    result_cases: int
    output_limit_cases: int
    strict_format: StrictFormat
    subject_calls: SubjectCalls


class Continuity(_Strict):
    """How a router's model choice moves between the requests of one task (case).

    Subject calls only, in stored order; a switch is a fact, not a penalty. Choices for the
    points the sr-bench reference leaves open are listed in ``docs/report.md`` (Continuity).
    """

    session_mode: str = Field(
        description="The target's session mode; always 'stateless' in a preview report."
    )
    multi_request_tasks: int = Field(description="Tasks with >= 2 subject requests.")
    model_switches: int = Field(
        description="Adjacent pairs of known selected models that differ, summed over tasks."
    )
    model_switches_per_task_mean: float | None = Field(
        description="model_switches / tasks in the switch statistics; null when none."
    )
    model_switches_per_task_max: int | None
    model_switches_by_phase: dict[str, int] = Field(
        description="Switches by the phase of the later request of the pair ('unknown' if none)."
    )
    unknown_model_requests: int = Field(description="Subject requests without a selected model.")
    multi_inference_tasks: int = Field(
        description="Tasks with a multi-inference request; counted here only."
    )
    decision_changed_tasks: int
    switched_tasks: int
    unswitched_tasks: int = Field(description="Tasks with 0 switches (single requests included).")
    switched_accuracy: float | None = Field(
        description="Switched tasks completed correct / switched_tasks; null when 0 or preview."
    )
    unswitched_accuracy: float | None = Field(
        description="Unswitched tasks completed correct / unswitched_tasks; null when 0 or preview."
    )


class DecisionRow(_Strict):
    """One routing decision of a router target: its cases' accuracy, spend and models."""

    decision: str | None = Field(description="Routing decision; null for cases without one.")
    label: str = Field(description="The decision, or 'unknown'.")
    cases: int
    completed: int
    correct: int | None = Field(description="Null in a preview run.")
    accuracy: float | None = Field(
        description="correct / cases (failures count as incorrect); null in a preview run."
    )
    accuracy_ci95: list[float] | None = Field(
        description="Wilson 95 % interval over cases: a decision's cells of one original case "
        "are one unit (Kish effective size; docs/report.md, Intervals); Wilson on correct / "
        "cases without repeats."
    )
    accuracy_ci95_worst_coverage: float | None = Field(
        None,
        description="The lowest coverage the interval has for some true accuracy, when below "
        "93 %. Null since issue 47: the interval (Wilson, Clopper-Pearson's hull within 12 "
        "successes or failures of the edge) covers >= 93 % for any true accuracy in [0, 1] at "
        "every size. Reports from before carry Wilson's worst case over 0.3-0.9 for intervals "
        "over 55 cases or fewer. See docs/interval-coverage.md.",
    )
    cost_usd: float | None = Field(
        description="Subject spend of these cases; null if any case lacks a priced receipt."
    )
    known_cost_usd: float
    selected_models: dict[str, int]


class CacheShare(_Strict):
    """Cells and calls answered from the response cache (docs/caching-honestly.md)."""

    cells: int = Field(description="Planned cells with a call answered from the cache.")
    share: float = Field(description="Those cells over the planned cells.")
    calls: int = Field(description="Calls answered from the cache (status replayed).")


class TargetMetric(_Strict):
    """Metrics of one target (or one benchmark of one target) over its planned cases."""

    id: str
    total: int = Field(description="Planned denominator: every planned case of this target.")
    completed: int
    failed: int = Field(
        description="Rows not completed and not running (failed, cancelled, sent_unknown)."
    )
    pending: int = Field(description="Planned cells without any result row.")
    scored: int
    correct: int | None = Field(description="Null in a preview run.")
    accuracy: float | None = Field(
        description="correct / total; failures and unanswered count as incorrect; null in a "
        "preview run."
    )
    accuracy_denominator: str
    cases: int | None = Field(
        None,
        description="Distinct planned cases (a case's repeats are one case); equals total "
        "without repeats. Null in reports from before intervals over cases.",
    )
    accuracy_interval_unit: str | None = Field(
        None,
        description="The unit of sampling of accuracy_ci95: 'case' (the repeats of one case "
        "are one unit, never independent observations). Null in reports from before intervals "
        "over cases, whose intervals counted cells.",
    )
    accuracy_ci95: list[float] | None = Field(
        description="Wilson 95 % interval of correct / total over cases: Wilson's score "
        "interval at the Kish effective number of cases (accuracy_effective_cases); exactly "
        "Wilson on correct / total without repeats, and never narrower than Wilson over the "
        "cases' cells."
    )
    accuracy_effective_cases: float | None = Field(
        None,
        description="Kish effective number of independent cases behind the interval: "
        "p(1-p) / (cluster-robust variance of p), kept within [cases, total]; = cases "
        "without repeats or when every repeat agrees. Null without cells, in a preview, and "
        "in reports from before intervals over cases.",
    )
    accuracy_ci95_worst_coverage: float | None = Field(
        None,
        description="The lowest coverage the interval has for some true accuracy, when below "
        "93 %. Null since issue 47: the interval (Wilson, Clopper-Pearson's hull within 12 "
        "successes or failures of the edge) covers >= 93 % for any true accuracy in [0, 1] at "
        "every size. Reports from before carry Wilson's worst case over 0.3-0.9 for intervals "
        "over 55 cases or fewer. See docs/interval-coverage.md.",
    )
    complete: bool
    output_diagnostics: OutputDiagnostics
    cost_usd: float | None = Field(
        description="Subject spend; null unless every planned case has priced receipts."
    )
    cache_neutral_cost_usd: float | None
    cache_neutral_cost_basis: str
    known_cost_usd: float = Field(
        description="Sum of the known subject costs: a lower bound, never a claim."
    )
    cost_complete: bool
    evaluation_cost_usd: float | None = Field(description="Judge and simulator spend.")
    total_spend_usd: float | None
    tokens: TokenBuckets | None
    call_count: int | None
    request_count: int
    selected_models: dict[str, int]
    pending_selection_count: int
    decisions: dict[str, int]
    selection_statuses: dict[str, int] | None = Field(
        description="Preview only (from the routing responses); null otherwise."
    )
    selection_reasons: dict[str, int] | None = Field(
        description="Preview only (from the routing responses); null otherwise."
    )
    queue_wait_p50_s: float | None
    queue_wait_p95_s: float | None
    evaluation_call_count: int
    case_wall_time_p50_s: float | None
    latency_p50_s: float | None
    latency_p90_s: float | None
    latency_p95_s: float | None
    ttft_p50_s: float | None
    request_time_sum_s: float
    cache_read_call_count: int
    cache_read_tokens: int
    cache_read_prompt_tokens: int
    cache_read_ratio: float | None
    continuity: Continuity
    estimated_accuracy: float | None = Field(
        None,
        description="Replay reports only (mode 'replay'): the accuracy estimated offline from "
        "the live baseline's answers of the models the preview selected; accuracy is then null.",
    )
    estimated_cost_usd: float | None = Field(
        None, description="Replay reports only: the estimated subject cost (cost_usd is null)."
    )
    estimated_cache_neutral_cost_usd: float | None = Field(
        None, description="Replay reports only: the estimated cache-neutral cost."
    )
    estimated_latency_p50_s: float | None = Field(
        None, description="Replay reports only: the baseline answers' latency p50."
    )
    estimated_latency_p95_s: float | None = Field(
        None, description="Replay reports only: the baseline answers' latency p95."
    )
    estimated_ttft_p50_s: float | None = Field(
        None, description="Replay reports only: the baseline answers' TTFT p50."
    )
    cache: CacheShare = Field(
        default_factory=lambda: CacheShare(cells=0, share=0.0, calls=0),
        description="Cells answered from the response cache (from cache: never complete "
        "live evidence).",
    )
    cache_avoided_cost_usd: float | None = Field(
        0.0,
        description="What the calls answered from the response cache cost when they were made "
        "live: avoided, never spend (null when a source's cost is unknown).",
    )


class DataSource(BaseModel):
    """Where one benchmark's cases came from (``docs/suites.md``, "Where a report says its
    cases came from"); the fields present depend on ``kind``."""

    model_config = ConfigDict(extra="allow")

    kind: str = Field(description="released, original, synthetic or user.")
    source: str | None = Field(
        None, description="released: the release's URL; user: what the suite says it is."
    )
    revision: str | None = Field(
        None, description="released: the pinned revision (a commit id or package==version)."
    )
    files: dict[str, str] | None = Field(
        None, description="released and user: the sha256 of every file the cases were read from."
    )
    license: str | None = Field(None, description="released: the data's license.")
    via: str | None = Field(None, description="released: how it was fetched.")
    generator: str | None = Field(None, description="synthetic: the generator and its version.")
    seed: int | None = Field(None, description="synthetic: the generator's seed.")
    note: str | None = Field(None, description="original: what the items are.")

    @model_serializer(mode="wrap")
    def _recorded_only(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """The fields the origin records (a kind's absent fields are left out, not null)."""
        return {key: value for key, value in handler(self).items() if value is not None}


class DataSources(_Strict):
    """The data the planned benchmarks' cases came from, and what scores over it may claim."""

    kind: str = Field(
        description="released, original, synthetic or user when every benchmark has it; mixed "
        "otherwise; unknown for a plan frozen before data origins were recorded."
    )
    kinds: list[str] = Field(description="The distinct kinds present (sorted).")
    comparable: bool = Field(
        description="True only for sr-bench data: all nine benchmarks released, at the "
        "profile's sr-bench case counts, not a custom subset, not a recovery child, live."
    )
    label: str = Field(description="What every surface prints beside the scores.")
    benchmarks: dict[str, str] = Field(description="Benchmark -> the kind of its data.")


class SummaryTarget(TargetMetric):
    """A target's overall metrics plus its identity and macro score."""

    kind: str
    model: str
    simulated: bool
    decision_breakdown: list[DecisionRow] = Field(
        description="Per routing decision of a router (mom) target; [] for single targets."
    )
    macro_accuracy: float | None
    estimated_macro_accuracy: float | None = Field(
        None, description="Replay reports only: the estimated macro accuracy (macro is null)."
    )
    macro_accuracy_ci95: list[float] | None = Field(
        None,
        description="95 % interval of macro_accuracy over cases (stratified case Wilson; "
        "the frontier's quality_ci95). Null in a preview and in reports from before "
        "intervals over cases.",
    )
    macro_accuracy_ci95_worst_coverage: float | None = Field(
        None,
        description="With one benchmark, that benchmark's accuracy_ci95_worst_coverage; "
        "null over several benchmarks, where the interval covered >= 94.4 % of simulated "
        "runs at the smoke, quick and standard designs (docs/interval-coverage.md).",
    )
    sr_bench_score: float | None = Field(
        description="The macro over all nine benchmarks: only with all nine, complete, not a "
        "recovery child. An sr-bench 1.0 score only when score_comparable is true; over other "
        "data the same number is labelled by score_scope as not comparable."
    )
    score_scope: str = Field(
        description="What the macro covers: 'sr-bench 1.0' (sr-bench data), 'macro score "
        "over <kind> data — not comparable with sr-bench 1.0', a subset or an extension "
        "diagnostic with its data; then the profile and 'custom task subset'."
    )
    score_comparable: bool | None = Field(
        None,
        description="True only when sr_bench_score is an sr-bench 1.0 score: non-null and over "
        "sr-bench data (data_sources.comparable). Null in reports from before data origins.",
    )


class BenchmarkRow(TargetMetric):
    """Metrics of one benchmark for one target."""

    benchmark: str
    target_id: str
    data_source: DataSource | None = Field(
        None,
        description="Where this benchmark's cases came from; null when the plan recorded no "
        "origin (a run from before data origins).",
    )


class Summary(_Strict):
    targets: list[SummaryTarget]
    planned_cells: int
    wall_time_s: float = Field(description="Last persisted update minus creation time of the run.")
    total_spend_usd: float | None
    cache_avoided_cost_usd: float | None = Field(
        0.0, description="The run's cost avoided by the response cache (never spend)."
    )
    from_cache: bool = Field(
        False,
        description="Some cells were answered from the response cache: the run is not "
        "complete live evidence.",
    )


class CellOutcome(_Strict):
    """One planned cell's outcome, so a report can serve as a comparison baseline."""

    case_id: str
    target_id: str
    benchmark: str
    status: str
    correct: bool | None
    answer: Any = None
    answer_status: str | None
    error: str | None = Field(
        description="Why the cell reached no graded outcome, its own one-line reason (as the "
        "terminal showed it); a pending cell's says why it was never dispatched when the run "
        "knows (its target's fixture failed in set-up); null otherwise."
    )
    latency_s: float | None = None
    ttft_s: float | None = None
    cost_usd: float | None = None
    embedding: dict[str, Any] | None = Field(
        None,
        description="A RAG cell's embedding record (source api/local/not_used/unavailable, "
        "model_id, dimensions, version, fallback_reason, route_version, requested_route, "
        "attempted_space); unavailable when its search failed; null for other cells.",
    )


class GroupReason(_Strict):
    """One specific reason within a failure group, with how many cells had it."""

    reason: str
    count: int


class FailureGroup(_Strict):
    """Cells without a graded outcome that share one coarse reason."""

    reason: str
    count: int
    statuses: dict[str, int]
    targets: dict[str, int]
    cells: list[dict[str, str]] = Field(description="Up to 20 example cells.")
    reasons: list[GroupReason] = Field(
        default_factory=list,
        description="The group's distinct specific reasons (the cells' error), most frequent "
        "first, at most 20; [] in reports from before them.",
    )
    other_reasons: int = Field(0, description="Cells whose reason is not among the 20 listed.")


class RawAnswer(_Strict):
    """One reply of the model, cut to 240 characters (renderers escape it)."""

    case_id: str
    text: str
    chars: int = Field(description="The reply's full length in characters.")
    truncated: bool


class OutcomeRow(_Strict):
    """How one target's cells of one benchmark ended (core/report/explain.py)."""

    target_id: str
    benchmark: str
    cells: int = Field(description="Planned cells (the shares' denominator).")
    counts: dict[str, int] = Field(
        description="correct, wrong (graded, not correct), unparsed (no answer could be read), "
        "ambiguous (several answers), failed (no graded outcome), pending (never finished)."
    )
    shares: dict[str, float] = Field(description="Each count / cells.")
    dominant: str = Field(description="The largest class (the first in that order on a tie).")
    example: RawAnswer | None = Field(
        description="When unparsed is the largest class: the first such cell's last subject "
        "reply, so the report shows what the model wrote instead of an answer."
    )
    accepted_forms: str | None = Field(
        None,
        description="When unparsed cells are more than half of the answered ones (every cell "
        "that got a reply): the answer forms the benchmark's grader accepts; null otherwise.",
    )
    parse_reason: str | None = Field(
        None,
        description="With accepted_forms: the grader's reason for the first unparsed cell "
        "(its details.parse_reason).",
    )


class ProxiedCall(_Strict):
    case_id: str | None
    backend_model: str | None
    model_group: str | None
    attempted_fallbacks: int | None
    usage_estimated: bool
    status: str | None


class ProxyRow(_Strict):
    """What a proxy (LiteLLM) in front of one target did, from its response headers."""

    target_id: str
    proxy: list[str]
    versions: list[str]
    call_count: int = Field(description="Subject calls that came through the proxy.")
    backend_models: dict[str, int] = Field(description="x-litellm-model-name per call.")
    model_groups: dict[str, int] = Field(
        description="The model group that served (after a fallback, not the one requested)."
    )
    fallback_calls: int = Field(description="Calls with x-litellm-attempted-fallbacks > 0.")
    fallbacks: int = Field(description="Attempted fallbacks summed over the calls.")
    retries: int
    estimated_usage_calls: int = Field(
        description="Calls whose usage the proxy counted itself (the backend sent none): "
        "their tokens are an estimate and their cost is unknown."
    )
    estimated_cost_usd: float | None = Field(
        description="The price of the estimated usage (never part of a known cost)."
    )
    calls: list[ProxiedCall]


class Histogram(_Strict):
    edges: list[float] = Field(description="Bin edges in seconds, shared by all targets.")
    counts: dict[str, list[int]] = Field(description="Per target, completed cells per bin.")


class Distributions(_Strict):
    """Per-cell time to first token and latency of completed cells."""

    ttft_s: Histogram
    latency_s: Histogram


class PlannedCase(_Strict):
    id: str
    benchmark: str
    repeat_of: str | None = Field(None, description="The case this cell repeats, if a repeat.")


class PlanIdentity(_Strict):
    """The frozen plan as comparisons need it (no case content, no endpoints, no secrets)."""

    plan_sha256: str
    case_sha256: str
    mode: str
    profile: str
    seed: int
    cost_policy: str
    output_policy: str
    repeats: int
    data_sources: dict[str, DataSource | None] | None = Field(
        None,
        description="Planned benchmark -> the origin of its cases (null: not recorded); a "
        "comparison refuses runs whose same benchmark came from different data. Null in "
        "reports from before data origins.",
    )
    sampling: dict[str, Any]
    benchmark_weights: dict[str, float]
    benchmark_options: dict[str, dict[str, Any]]
    adapter_versions: dict[str, str]
    limits: dict[str, Any]
    targets: list[dict[str, Any]]
    auxiliary_targets: dict[str, dict[str, Any]]
    execution_cells: list[dict[str, str]] | None = Field(
        description="The planned (case, target) cells when not every case x target pair."
    )
    target_kinds: dict[str, list[str]] | None = Field(
        None,
        description="Per benchmark, the target kinds it runs against when not chat models and "
        "routers (absent: every benchmark runs against chat models and routers).",
    )
    benchmark_targets: dict[str, list[str]] | None = Field(
        None,
        description="Per benchmark, the targets that answer it, when not every target of its "
        "kinds does (a plan with variants, <target>~<variant>); absent otherwise.",
    )
    cases: list[PlannedCase]


class RepeatCase(_Strict):
    case_id: str
    target_id: str
    observed: int = Field(description="Repeats with a known outcome (completed or failed).")
    correct: int
    agreement: float | None = Field(description="Share of repeats with the majority outcome.")
    pairwise_disagreement: float | None = Field(
        description="Chance that two different repeats of the case disagree."
    )


class RepeatTarget(_Strict):
    target_id: str
    cases: int
    fully_observed_cases: int
    flipped_cases: int
    flip_rate: float | None = Field(
        description="Share of fully observed cases whose repeats do not all agree."
    )
    mean_agreement: float | None
    pairwise_disagreement: float | None


class Repeats(_Strict):
    """Agreement across ``--srbench-repeats`` K repeats of every cell."""

    repeats: int
    targets: list[RepeatTarget]
    cases: list[RepeatCase]


class FrontierPoint(_Strict):
    run_id: str
    target_id: str
    kind: str
    quality: float | None
    quality_ci95: list[float] | None = Field(
        description="95 % interval of the macro accuracy over cases: Wilson at the weighted "
        "mean with the Kish effective size of the benchmark mix, the larger of the "
        "per-benchmark and pooled variance estimates (quality_interval_method)."
    )
    quality_ci95_worst_coverage: float | None = Field(
        None,
        description="With one benchmark, that benchmark's worst-case coverage (as "
        "accuracy_ci95_worst_coverage); null over several benchmarks, where the interval "
        "covered >= 94.4 % of simulated runs at the smoke, quick and standard designs "
        "(docs/interval-coverage.md).",
    )
    cost_usd: float | None
    total_spend_usd: float | None
    complete: bool | None
    on_frontier: bool


class Frontier(_Strict):
    """Targets that no other target beats on both quality and cost."""

    quality: str
    quality_interval_method: str
    cost_basis: str
    points: list[FrontierPoint]
    unplaced: list[FrontierPoint]


class GateBenchmark(_Strict):
    """One benchmark's delta and interval: the verdict under ``--srbench-gate-scope
    benchmark`` (Bonferroni-adjusted for a regression), shown at 95 % beside a macro verdict."""

    benchmark: str
    cases: int
    baseline_accuracy: float | None = Field(
        None, description="The baseline target's accuracy on the benchmark's paired cases."
    )
    candidate_accuracy: float | None = Field(
        None, description="The candidate target's accuracy on the benchmark's paired cases."
    )
    delta: float
    interval: list[float]
    passed: bool


class GateTarget(_Strict):
    target_id: str
    baseline_target_id: str
    pairing: str
    quality_delta: float
    interval: list[float]
    passed: bool
    benchmarks: list[GateBenchmark] | None = Field(
        None,
        description="Every gated benchmark's Δ and interval: the verdicts under the benchmark "
        "scope, shown at 95 % each (not gated) under the macro scope; null in reports from "
        "before they were shown for the macro scope.",
    )


class Gate(_Strict):
    """The CI gate's verdict against a baseline run."""

    mode: str
    margin: float
    interval: str
    interval_method: str
    baseline_run_id: str | None
    baseline_source: str
    passed: bool
    reason: str | None
    line: str
    targets: list[GateTarget]
    scope: str = Field("macro", description="macro (the weighted delta) or benchmark (each).")
    scope_default: bool = Field(
        False,
        description="Whether the scope is the default one: macro for the full sr-bench set, "
        "per benchmark otherwise.",
    )
    scope_reason: str | None = Field(
        None,
        description="Why this scope: 'asked for', or the default's reason ('this session is "
        "not the full sr-bench set').",
    )
    added_benchmarks: list[str] = Field(
        default_factory=list,
        description="Benchmarks of this run that the baseline lacks: reported, not gated.",
    )
    removed_benchmarks: list[str] = Field(
        default_factory=list,
        description="Benchmarks of the baseline that this run lacks: reported, not gated.",
    )
    design: dict[str, Any] | None = Field(
        None,
        description="What a gate of this size can show: half-widths of an identical re-run "
        "and of the worst case, power, and the cases it would need (docs/compare-and-gate.md).",
    )
    comparison: dict[str, Any] | None = Field(
        None, description="The full paired comparison the verdict was read from."
    )


class RagRow(_Strict):
    """RAG metrics of one retrieval target (one mode) on one RAG benchmark."""

    benchmark: str
    target_id: str
    mode: str
    top_k: int
    total_cases: int
    successful_cases: int
    failed_cases: int
    failure_rate: float | None
    hit_at_1: float | None
    hit_at_5: float | None
    recall_at_k: float | None
    mrr: float | None
    citation_hit_rate: float | None
    citation_cases: int
    p50_latency_ms: float | None
    p90_latency_ms: float | None
    p95_latency_ms: float | None


class RagSection(_Strict):
    rows: list[RagRow]
    config_snapshot: dict[str, Any]


class AgentRow(_Strict):
    """Rule-judged outcomes of one target on one agent benchmark."""

    benchmark: str
    target_id: str
    total_cases: int
    evaluated_cases: int
    succeeded_cases: int
    success_rate: float | None
    tool_selection_accuracy: float | None
    argument_accuracy: float | None
    invalid_call_rate: float | None
    expected_calls: int
    argument_checked: int
    calls_made: int


class AgentSection(_Strict):
    rows: list[AgentRow]
    config_snapshot: dict[str, Any]


class ReportModel(_Strict):
    """The pytest-srbench run report (sr-bench 1.0 semantics)."""

    version: str
    protocol: str
    run_id: str
    status: str
    error: str | None
    mode: str = Field(description="live, preview or replay (an offline estimate).")
    evidence_mode: str | None = Field(
        None,
        description="'offline_estimate' in a replay report (every result row's "
        "details.evidence_mode says the same); null in a live or preview report.",
    )
    replay_sources: dict[str, str] | None = Field(
        None,
        description="A replay report's sources: baseline_run_id (the live run whose answers "
        "were taken) and preview_run_id (the routing decisions); null otherwise.",
    )
    reused_existing_run: bool = Field(
        False,
        description="True when this report re-prints a finished run that the session's run key "
        "was already bound to: no call was made by the invocation that wrote it.",
    )
    cost_policy: str
    profile: str
    seed: int
    plan_sha256: str
    case_sha256: str
    created_at: str
    updated_at: str
    failure: dict[str, Any] | None
    recovery: dict[str, Any] | None
    child_attempts: list[dict[str, Any]]
    summary: Summary
    benchmarks: list[BenchmarkRow]
    data_sources: DataSources | None = Field(
        None, description="Where the cases came from; null in reports from before data origins."
    )
    limitations: list[str]
    notes: list[str] = Field(
        default_factory=list,
        description="What the report could not see, one line each: cells left pending by a "
        "target fixture that failed in set-up, cells of python targets that made no journaled "
        "call; [] in reports from before them.",
    )
    usage_conflict_calls: int = Field(
        0,
        description="Calls whose stream sent two usage objects that disagree (the last is "
        "billed, as sr-bench does; both are in the receipt's usage_conflict); 0 in reports "
        "from before issue 47.",
    )
    provenance: dict[str, Any]
    failure_groups: list[FailureGroup]
    outcomes: list[OutcomeRow] = Field(
        default_factory=list,
        description="Answer outcomes per target and benchmark; [] in reports from before them.",
    )
    proxies: list[ProxyRow] = Field(
        default_factory=list,
        description="Proxy provenance per target with proxied calls; [] without a proxy.",
    )
    distributions: Distributions
    plan: PlanIdentity
    repeats: Repeats | None
    frontier: Frontier
    gate: Gate | None = None
    rag: RagSection | None = None
    agent: AgentSection | None = None
    cells: list[CellOutcome]
