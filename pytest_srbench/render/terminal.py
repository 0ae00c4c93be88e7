"""The end-of-session summary as plain text lines (pure formatting of the report dict)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.core.models import VARIANT_SEP
from pytest_srbench.core.origins import describe_origin, origin_kind
from pytest_srbench.render.lineage import lineage_lines

NULL = "—"


def usd(value: float | None) -> str:
    if value is None:
        return NULL
    return f"${value:.4f}" if abs(value) >= 0.01 else f"${value:.6f}"


def signed(value: float | None) -> str:
    """A difference with its sign, three decimals (``+0.125``); null stays ``—``."""
    return NULL if value is None else f"{value:+.3f}"


def signed_percent(value: float | None) -> str:
    """A percentage change with its sign (``-12.5%``); null stays ``—``."""
    return NULL if value is None else f"{value:+.1f}%"


def num(value: float | None, digits: int = 3) -> str:
    return NULL if value is None else f"{value:.{digits}f}"


def seconds(value: float | None) -> str:
    return NULL if value is None else f"{value:.2f}s"


def interval(values: Sequence[float] | None) -> str:
    return NULL if not values else f"[{values[0]:.3f}, {values[1]:.3f}]"


def coverage(worst: float | None) -> str:
    """The worst-case coverage an interval carries (``…_worst_coverage``), or nothing."""
    return "" if worst is None else f"covers ≥{100 * worst:.1f}%"


def interval_with_coverage(values: Sequence[float] | None, worst: float | None) -> str:
    """An interval with its worst-case coverage beside it when that is below 93 %."""
    note = coverage(worst) if values else ""
    return f"{interval(values)} ({note})" if note else interval(values)


COVERAGE_FOOTNOTE = (
    "covers ≥X% = a 95 % interval that covers the true accuracy in as few as X % of runs "
    "(stated by reports from before issue 47; docs/interval-coverage.md); intervals count "
    "cases, a case's repeats are one unit."
)


def _shows_coverage(report: dict[str, Any]) -> bool:
    rows = [*report["summary"]["targets"], *report["benchmarks"]]
    rows += [d for t in report["summary"]["targets"] for d in t.get("decision_breakdown") or []]
    keys = ("accuracy_ci95_worst_coverage", "macro_accuracy_ci95_worst_coverage")
    return any(row.get(key) is not None for row in rows for key in keys)


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            str(cell).ljust(width) for cell, width in zip(cells, widths, strict=True)
        ).rstrip()

    return [line(header), line(["-" * width for width in widths]), *[line(row) for row in rows]]


def _turn_lines(effective: dict[str, Any] | None) -> list[str]:
    """When test bodies waited for their own item's turn: the concurrency the run reached, and
    the fixtures that held the bodies back."""
    if not effective or not effective.get("cells_at_their_turn"):
        return []
    waited_for = effective.get("waited_for") or {}
    fixtures = ", ".join(
        f"{name!r} ({seen['scope']}{', autouse' if seen.get('autouse') else ''}, "
        f"{seen['cells']} cells)"
        for name, seen in waited_for.items()
    )
    lines = [
        f"effective concurrency {effective['peak_in_flight']} of {effective['configured']}: "
        f"{effective['cells_at_their_turn']} of {effective['cells']} cells waited for their "
        f"test's own set-up" + (f" — fixtures {fixtures}" if fixtures else ""),
        "  (a body starts ahead of its item when every fixture it uses is session-scoped and "
        "sync; see docs/your-own-code.md)",
    ]
    if any(seen.get("autouse") for seen in waited_for.values()):
        lines.append(
            "  (an autouse fixture the benchmark tests do not need: override it for them with a "
            "session-scoped fixture of the same name in their module or a conftest.py beside "
            "them)"
        )
    return lines


def _name(target_id: str) -> str:
    """A target's name as a table shows it: a variant as "sim-large · fancy"."""
    return str(target_id).replace(VARIANT_SEP, " · ")


def _label(target: dict[str, Any]) -> str:
    name = _name(target["id"])
    return f"{name} (sim)" if target.get("simulated") else name


def _counts(counter: dict[str, int]) -> str:
    return ", ".join(
        f"{name} {n}" for name, n in sorted(counter.items(), key=lambda i: (-i[1], i[0]))
    )


def router_lines(target: dict[str, Any], recipe: dict[str, Any] | None) -> list[str]:
    """A router target's view: selected models, the per-decision breakdown, continuity and
    its frozen recipe."""
    c = target["continuity"]
    lines = [
        f"router {_label(target)}: {target['request_count']} requests · selected models "
        f"{_counts(target['selected_models']) or NULL} · inference calls {target['call_count'] if target['call_count'] is not None else NULL}"
    ]
    breakdown = target.get("decision_breakdown") or []
    if breakdown:
        lines += table(
            ["decision", "cases", "accuracy", "95% CI", "cost", "selected models"],
            [
                [str(d["decision"] or "unknown"), str(d["cases"]), num(d["accuracy"]),
                 interval_with_coverage(d["accuracy_ci95"], d.get("accuracy_ci95_worst_coverage")),
                 usd(d["cost_usd"]), _counts(d["selected_models"])]
                for d in breakdown
            ],
        )  # fmt: skip
    by_phase = _counts(c["model_switches_by_phase"]) or "none"
    lines.append(
        f"  continuity ({c['session_mode']}): {c['multi_request_tasks']} multi-request tasks · "
        f"{c['model_switches']} model switches (mean {num(c['model_switches_per_task_mean'])}, "
        f"max {c['model_switches_per_task_max'] if c['model_switches_per_task_max'] is not None else NULL}; "
        f"by phase: {by_phase}) · {c['unknown_model_requests']} unknown-model requests · "
        f"{c['multi_inference_tasks']} multi-inference tasks · decision changed in "
        f"{c['decision_changed_tasks']} tasks"
    )
    lines.append(
        f"  switched tasks {c['switched_tasks']} (accuracy {num(c['switched_accuracy'])}) · "
        f"unswitched {c['unswitched_tasks']} (accuracy {num(c['unswitched_accuracy'])})"
    )
    if recipe is not None:
        if recipe["status"] == "captured":
            lines.append(
                f"  recipe: captured {recipe['captured_at'][:19]} · config {recipe['config_hash'][:12]} · "
                f"projection {recipe['projection_sha256'][:12]}"
            )
        else:
            lines.append(f"  recipe: unavailable ({recipe['reason']})")
    return lines


def _ms(value: float | None) -> str:
    return NULL if value is None else f"{value:.1f} ms"


def rag_lines(rag: dict[str, Any]) -> list[str]:
    """RAG metrics per retrieval mode (failed samples count as zero, in the denominator)."""
    lines = ["RAG retrieval (per mode; failed samples count as 0 and stay in the denominator):"]
    lines += table(
        ["benchmark", "target", "mode", "hit@1", "hit@5", "recall@k", "MRR", "citation hit",
         "p50 / p90 / p95 latency", "samples ok/total", "failure rate"],
        [
            [r["benchmark"], r["target_id"], r["mode"], num(r["hit_at_1"]), num(r["hit_at_5"]),
             num(r["recall_at_k"]), num(r["mrr"]),
             f"{num(r['citation_hit_rate'])} ({r['citation_cases']})",
             f"{_ms(r['p50_latency_ms'])} / {_ms(r['p90_latency_ms'])} / {_ms(r['p95_latency_ms'])}",
             f"{r['successful_cases']}/{r['total_cases']}", num(r["failure_rate"])]
            for r in rag["rows"]
        ],
    )  # fmt: skip
    snapshot = rag["config_snapshot"]
    datasets = ", ".join(
        f"{d['dataset_id']} v{d['version']} ({str(d['sha256'])[:12]})" for d in snapshot["datasets"]
    )
    lines.append(f"  datasets {datasets} · embedding policy {snapshot['embedding']['policy']} "
                 f"(sources: {_counts(snapshot['embedding']['sources']) or 'none'})")  # fmt: skip
    return lines


def agent_lines(agent: dict[str, Any]) -> list[str]:
    """Agent outcomes per target, judged by rules (no LLM judge)."""
    lines = ["Agent tasks (rule-judged; unevaluated tasks count as not succeeded):"]
    lines += table(
        ["benchmark", "target", "succeeded", "success rate", "evaluated", "tool selection",
         "arguments", "invalid calls"],
        [
            [r["benchmark"], r["target_id"], f"{r['succeeded_cases']}/{r['total_cases']}",
             num(r["success_rate"]), f"{r['evaluated_cases']}/{r['total_cases']}",
             num(r["tool_selection_accuracy"]), num(r["argument_accuracy"]),
             num(r["invalid_call_rate"])]
            for r in agent["rows"]
        ],
    )  # fmt: skip
    return lines


def repeat_lines(repeats: dict[str, Any]) -> list[str]:
    """Per target, how often a case's K repeats disagreed (over fully observed cases)."""
    lines = [
        f"repeats (K={repeats['repeats']}): flip rate = share of fully observed cases whose "
        "repeats did not all agree"
    ]
    for t in repeats["targets"]:
        lines.append(
            f"  {t['target_id']}: flip rate {num(t['flip_rate'])} ({t['flipped_cases']}/"
            f"{t['fully_observed_cases']} cases) · mean agreement {num(t['mean_agreement'])} · "
            f"pairwise disagreement {num(t['pairwise_disagreement'])}"
        )
    return lines


def data_kind_of(row: Mapping[str, Any]) -> str:
    """A benchmark row's kind of data; ``—`` in a report from before data origins."""
    return origin_kind(row["data_source"]) if "data_source" in row else NULL


def data_lines(report: Mapping[str, Any]) -> list[str]:
    """Where the cases came from: the report's label, then each distinct source with its
    benchmarks (one line per released release, one for all the shipped originals)."""
    sources = report.get("data_sources")
    if not sources:
        return ["data: not recorded (a report from before data origins)"]
    by_origin: dict[str, list[str]] = {}
    seen: set[str] = set()
    for row in report["benchmarks"]:
        if row["benchmark"] not in seen:
            seen.add(row["benchmark"])
            by_origin.setdefault(describe_origin(row.get("data_source")), []).append(
                row["benchmark"]
            )
    lines = [f"data: {sources['label']}"]
    lines += [f"  {text} — {', '.join(sorted(names))}" for text, names in by_origin.items()]
    return lines


def score_text(target: Mapping[str, Any]) -> str:
    """The full-set score as the report may call it: an sr_bench_score only over sr-bench
    data; over other data the same number is only a score (the scope after it says over what
    data, and that it is not comparable with sr-bench 1.0)."""
    score = target["sr_bench_score"]
    if score is None:
        return "sr_bench_score null (not a full, complete run)"
    if target.get("score_comparable") is False:
        return f"score {num(score)}"
    return f"sr_bench_score {num(score)}"


def quoted(text: str) -> str:
    """Model output on one terminal line: JSON string escaping (quotes, backslashes, newlines
    and every control character, so it can neither break the line nor drive the terminal)."""
    return json.dumps(text, ensure_ascii=False)


def _share(count: int, share: float) -> str:
    return f"{count} ({100 * share:.0f}%)" if count else "0"


def outcome_lines(outcomes: Sequence[dict[str, Any]]) -> list[str]:
    """Per target and benchmark, how the planned cells ended, with one raw answer where
    unparsed answers dominate."""
    classes = ("correct", "wrong", "unparsed", "ambiguous", "failed", "pending")
    lines = ["answers (share of planned cells): unparsed = no answer could be read from the reply"]
    lines += table(
        ["benchmark", "target", *classes],
        [
            [o["benchmark"], _name(o["target_id"]), *[_share(o["counts"][c], o["shares"][c]) for c in classes]]
            for o in outcomes
        ],
    )  # fmt: skip
    for o in outcomes:
        example = o.get("example")
        if example:
            cut = (
                f", first {len(example['text'])} of {example['chars']} characters"
                if example["truncated"]
                else ""
            )
            lines.append(
                f"  {o['benchmark']} [{o['target_id']}] mostly unparsed; the model wrote, e.g. "
                f"{example['case_id']}{cut}: {quoted(example['text'])}"
            )  # fmt: skip
        if o.get("accepted_forms"):
            answered = sum(o["counts"][c] for c in ("correct", "wrong", "unparsed", "ambiguous"))
            lines.append(
                f"  {o['benchmark']} [{o['target_id']}] {o['counts']['unparsed']} of {answered} "
                f"answered cells unparsed; the grader accepts {o['accepted_forms']}"
            )
    return lines


def failure_group_lines(groups: Sequence[dict[str, Any]]) -> list[str]:
    """Cells without a graded outcome by reason: each group with its specific reasons."""
    lines = ["cells without a graded outcome, by reason:"]
    for g in groups:
        reasons = g.get("reasons") or []
        specific = [r for r in reasons if r["reason"] != g["reason"]]
        lines.append(f"  {g['reason']}: {g['count']}")
        lines += [f"    {r['count']} × {r['reason']}" for r in specific]
        if g.get("other_reasons"):
            lines.append(f"    {g['other_reasons']} × other reasons")
    return lines


def proxy_lines(proxies: Sequence[dict[str, Any]]) -> list[str]:
    """What a proxy in front of each target did: backend models, groups, fallbacks, estimates."""
    lines = []
    for p in proxies:
        versions = f" {', '.join(p['versions'])}" if p["versions"] else ""
        estimated = (
            f" · usage estimated by the proxy in {p['estimated_usage_calls']} call(s) "
            f"(cost unknown; estimate {usd(p['estimated_cost_usd'])})"
            if p["estimated_usage_calls"]
            else ""
        )
        lines.append(
            f"proxy {', '.join(p['proxy'])}{versions} in front of {p['target_id']}: "
            f"{p['call_count']} call(s) · backend {_counts(p['backend_models'])} · served by "
            f"group {_counts(p['model_groups'])} · {p['fallbacks']} fallback(s) in "
            f"{p['fallback_calls']} call(s) · {p['retries']} retries{estimated}"
        )
    return lines


def replay_lines(report: Mapping[str, Any]) -> list[str]:
    """The banner of a replay report: what it was made from and its estimates."""
    sources = report.get("replay_sources") or {}
    lines = [
        "REPLAY (offline estimate): no model was called — answers taken from live run "
        f"{sources.get('baseline_run_id')} by the routing of preview {sources.get('preview_run_id')}; "
        "not live evidence (compare and the gate refuse it)"
    ]
    for t in report["summary"]["targets"]:
        lines.append(
            f"  {t['id']}: estimated accuracy {num(t.get('estimated_accuracy'))} · estimated macro "
            f"{num(t.get('estimated_macro_accuracy'))} · estimated cost "
            f"{usd(t.get('estimated_cost_usd'))} · estimated latency p50 "
            f"{seconds(t.get('estimated_latency_p50_s'))} · estimated ttft p50 "
            f"{seconds(t.get('estimated_ttft_p50_s'))}"
        )
    return lines


def cache_label(row: Mapping[str, Any]) -> str:
    """`` · from cache (cells/planned, share)`` for a target or benchmark row with cells answered
    from the response cache; empty otherwise."""
    cache = row.get("cache") or {}
    if not cache.get("cells"):
        return ""
    return f" · from cache ({cache['cells']}/{row['total']} cells, {cache['share']:.0%})"


def cache_lines(report: Mapping[str, Any]) -> list[str]:
    """What the response cache answered: the avoided cost, each target and benchmark with
    cached cells (none without)."""
    summary = report["summary"]
    if not summary.get("from_cache"):
        return []
    lines = [
        "FROM CACHE: cells answered from the response cache are earlier live answers — no spend, "
        f"no latency, not complete live evidence · avoided {usd(summary.get('cache_avoided_cost_usd'))}"
    ]
    for t in summary["targets"]:
        if (t.get("cache") or {}).get("cells"):
            lines.append(
                f"  {_label(t)}{cache_label(t)} · avoided {usd(t.get('cache_avoided_cost_usd'))}"
            )
    for row in report.get("benchmarks") or []:
        if (row.get("cache") or {}).get("cells"):
            lines.append(f"  {row['benchmark']} [{_name(row['target_id'])}]{cache_label(row)}")
    return lines


def cache_read_text(target: Mapping[str, Any]) -> str:
    """The cache-read ratio of a target's tokens line; beside unknown totals it says which
    calls it is over (only those that reported cache reads), never standing for the totals."""
    ratio = target.get("cache_read_ratio")
    if ratio is None or target.get("tokens") is not None:
        return f"cache-read {num(ratio)}"
    calls = target.get("cache_read_call_count") or 0
    return f"cache-read {num(ratio)} over the {calls} call(s) that reported cache reads (totals unknown)"


def render_summary(report: dict[str, Any]) -> list[str]:
    """Run header, per-target table, tokens, per-benchmark table, scores and caveats."""
    summary = report["summary"]
    runner = (report.get("provenance") or {}).get("runner") or {}
    lines = [
        f"run {report['run_id']} · {report['status']} · profile {report['profile']} · seed {report['seed']} · "
        f"plan {report['plan_sha256'][:12]} · {summary['planned_cells']} cells · wall {summary['wall_time_s']:.1f}s · "
        f"spend {usd(summary['total_spend_usd'])}"
        + (" · existing run re-printed, no call made" if report.get("reused_existing_run") else ""),
    ]
    if report.get("mode") == "preview":
        lines.append(
            "PREVIEW: routing decisions only — no answers were generated, accuracy is null by design"
        )
    if report.get("mode") == "replay":
        lines += replay_lines(report)
    lines += [f"lineage: {line}" for line in lineage_lines(report)]
    lines += cache_lines(report)
    if runner and report.get("mode") != "replay":
        lines.append(
            f"concurrency {runner.get('concurrency_per_worker')} per process × {runner.get('processes', 1)} "
            f"process(es) · transport {runner.get('transport')}"
        )
        lines += _turn_lines(runner.get("effective_concurrency"))
    lines.append("")
    targets = summary["targets"]
    lines += table(
        ["target", "accuracy", "95% CI", "correct/planned", "failed", "pending", "complete", "cost", "known cost",
         "judge cost", "ttft p50", "latency p50/p90/p95"],
        [
            [
                _label(t), num(t["accuracy"]), interval_with_coverage(t["accuracy_ci95"], t.get("accuracy_ci95_worst_coverage")), f"{t['correct'] if t['correct'] is not None else NULL}/{t['total']}",
                str(t["failed"]), str(t["pending"]), "yes" if t["complete"] else "no", usd(t["cost_usd"]),
                usd(t["known_cost_usd"]), usd(t["evaluation_cost_usd"]), seconds(t["ttft_p50_s"]),
                f"{seconds(t['latency_p50_s'])}/{seconds(t['latency_p90_s'])}/{seconds(t['latency_p95_s'])}",
            ]
            for t in targets
        ],
    )  # fmt: skip
    lines.append("")
    lines.append(
        "tokens (input / cached input / cache write / output), cache-read ratio (cached ÷ "
        "prompt tokens of the calls that reported cache reads):"
    )
    for t in targets:
        tokens = t["tokens"]
        text = (
            NULL
            if tokens is None
            else " / ".join(
                f"{tokens[key]:,}"
                for key in (
                    "input_tokens",
                    "cached_input_tokens",
                    "cache_write_tokens",
                    "output_tokens",
                )
            )
        )
        lines.append(f"  {_label(t)}: {text}  ·  {cache_read_text(t)}")
    lines.append("")
    lines += table(
        ["benchmark", "target", "data", "accuracy", "95% CI", "correct/planned", "failed", "cost"],
        [
            [row["benchmark"], _name(row["target_id"]), data_kind_of(row), num(row["accuracy"]),
             interval_with_coverage(row["accuracy_ci95"], row.get("accuracy_ci95_worst_coverage")),
             f"{row['correct'] if row['correct'] is not None else NULL}/{row['total']}", str(row["failed"]),
             usd(row["cost_usd"])]
            for row in report["benchmarks"]
        ],
    )  # fmt: skip
    lines += data_lines(report)
    lines.append("")
    for t in targets:
        macro_ci = interval_with_coverage(
            t.get("macro_accuracy_ci95"), t.get("macro_accuracy_ci95_worst_coverage")
        )
        lines.append(
            f"{_label(t)}: macro accuracy {num(t['macro_accuracy'])} {macro_ci} · {score_text(t)} · {t['score_scope']}"
            + cache_label(t)
        )
    if _shows_coverage(report):
        lines.append(COVERAGE_FOOTNOTE)
    if report.get("outcomes") and report.get("mode") != "preview":
        lines.append("")
        lines += outcome_lines(report["outcomes"])
    if report.get("proxies"):
        lines.append("")
        lines += proxy_lines(report["proxies"])
    if report.get("repeats"):
        lines.append("")
        lines += repeat_lines(report["repeats"])
    if report.get("rag"):
        lines.append("")
        lines += rag_lines(report["rag"])
    if report.get("agent"):
        lines.append("")
        lines += agent_lines(report["agent"])
    recipes = {r["target_id"]: r for r in (report.get("provenance") or {}).get("recipes") or []}
    for t in targets:
        if t.get("kind") == "mom":
            lines.append("")
            lines += router_lines(t, recipes.get(t["id"]))
    if report.get("failure_groups"):
        lines += failure_group_lines(report["failure_groups"])
    if report.get("failure"):
        failure = report["failure"]
        lines.append(
            f"first failure: {failure.get('case_id')} [{failure.get('target_id')}]: {failure.get('reason')}"
        )
    lines += [f"note: {note}" for note in report.get("notes") or []]
    if any(t.get("simulated") and t.get("kind") != "retrieval" for t in targets):
        lines.append("(sim) = simulated target: its accuracy, latency and cost are synthetic.")
    if any(t.get("simulated") and t.get("kind") == "retrieval" for t in targets):
        lines.append(
            "(sim) retrieval targets search a real index of the shipped corpus inside the "
            "simulator; their quality is real, their latency is local."
        )
    return lines
