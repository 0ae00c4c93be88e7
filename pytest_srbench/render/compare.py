"""Comparisons and gate verdicts as text, CSV and Markdown (pure formatting)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any

from pytest_srbench.core.compare.caveats import caveat_lines
from pytest_srbench.core.compare.design import design_summary
from pytest_srbench.render.terminal import (
    COVERAGE_FOOTNOTE,
    NULL,
    interval,
    interval_with_coverage,
    num,
    signed,
    signed_percent,
    table,
)

CSV_COLUMNS = (
    "baseline_run_id", "candidate_run_id", "candidate_target_id", "baseline_target_id",
    "mixed_data_sources",
    "quality_delta", "micro_quality_delta", "paired_cases", "wins", "losses", "ties",
    "hoeffding_low", "hoeffding_high", "bootstrap_low", "bootstrap_high",
    "stratified_wald_low", "stratified_wald_high", "stratified_newcombe_low", "stratified_newcombe_high", "newcombe_low", "newcombe_high",
    "mcnemar_exact_p", "cases_needed_for_margin", "margin",
    "subject_cost_saving_percent", "total_cost_saving_percent",
    "cache_neutral_cost_saving_percent", "cost_basis", "total_cost_comparison_reason",
    "baseline_flip_rate", "candidate_flip_rate",
)  # fmt: skip


def _rows(result: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    return [
        (candidate, row) for candidate in result["candidates"] for row in candidate["comparisons"]
    ]


def mixed_sources_lines(result: Mapping[str, Any]) -> list[str]:
    """A loud banner per candidate compared across different data (``--allow-mixed-sources``)."""
    lines = []
    for candidate in result["candidates"]:
        warning = (candidate.get("data_sources") or {}).get("warning")
        if warning:
            lines.append(f"!!! {candidate['candidate_run_id']}: {warning}")
        cached = (candidate.get("cached") or {}).get("warning")
        if cached:
            lines.append(f"!!! {candidate['candidate_run_id']}: {cached}")
    if lines:
        lines.append(
            "!!! Deltas over different data measure the data as much as the targets: not a "
            "like-for-like comparison."
        )
    return lines


def against_others(candidate: Mapping[str, Any]) -> bool:
    """Some row of the candidate is paired otherwise than its pairing line says: under
    strongest-single, with another baseline target than the selected one (a target that
    answers other cases than it is set against its own id); under same-target, with another
    than its own id (a target the baseline lacks falls back to the strongest single)."""
    rows = candidate["comparisons"]
    if candidate.get("pairing") == "same-target":
        return any(row.get("baseline_target_id") != row["candidate_target_id"] for row in rows)
    selected = candidate["baseline_selected_target_id"]
    return any(row.get("baseline_target_id") != selected for row in rows)


def _pairing_text(candidate: Mapping[str, Any]) -> str:
    """How the candidate's targets were paired with the baseline's, in words."""
    if candidate.get("pairing") == "same-target":
        return (
            "same-target (each candidate target against the baseline's target of the same id, "
            "as the gate pairs)"
        )
    own = against_others(candidate)
    return (
        f"strongest-single (every candidate target against "
        f"{candidate['baseline_selected_target_id']}, sr-bench's rule"
        + (
            "; a target that answers other cases than it — a variant answers only its test's "
            "benchmark — against the baseline's target of its own id: see the table's "
            "'against' column"
            if own
            else ""
        )
        + "; --pairing same-target pairs targets by id, as the gate does)"
    )


def render_comparison(result: Mapping[str, Any]) -> list[str]:
    """A banner when data sources differ, baseline selection, one line per candidate target,
    the frontier."""
    lines = mixed_sources_lines(result)
    for candidate in result["candidates"]:
        tied = ", ".join(candidate["baseline_tied_best_target_ids"])
        lines.append(
            f"baseline {candidate['baseline_run_id']} ({candidate['baseline_status']}): selected "
            f"{candidate['baseline_selected_target_id']} (tied best: {tied}); candidate "
            f"{candidate['candidate_run_id']} ({candidate['candidate_status']}, "
            f"{candidate['candidate_created_at'][:19]})"
        )
        lines.append("  pairing: " + _pairing_text(candidate))
        if candidate["baseline_cost_comparison_reason"]:
            lines.append(f"  costs: {candidate['baseline_cost_comparison_reason']}")
    against = any(against_others(candidate) for candidate in result["candidates"])
    rows = []
    for candidate, row in _rows(result):
        stats = row["paired_statistics"]
        rows.append(
            [
                candidate["candidate_run_id"][-8:],
                row["candidate_target_id"],
                *([row["baseline_target_id"]] if against else []),
                signed(row["quality_delta"]),
                f"{row['wins']}/{row['losses']}/{row['ties']}",
                interval(row["quality_delta_ci95"]),
                interval(stats["stratified_wald_ci95"]),
                interval(row["quality_delta_bootstrap_ci95"]),
                num(stats["mcnemar_exact_p"]),
                NULL
                if stats["cases_needed_for_margin"] is None
                else f"{stats['cases_needed_for_margin']:,}",
                signed_percent(row["subject_cost_saving_percent"]),
                signed_percent(row["total_cost_saving_percent"]),
            ]
        )
    header = [
        "run", "target", *(["against"] if against else []), "Δ quality", "W/L/T",
        "Hoeffding 95%", "gate 95%", "bootstrap", "McNemar p", f"cases for ±{result['margin']:g}",
        "subject saving", "total saving",
    ]  # fmt: skip
    flips = any(
        row.get("baseline_flip_rate") is not None or row.get("candidate_flip_rate") is not None
        for _, row in _rows(result)
    )
    if flips:  # with repeats on either side: how often a case's repeats disagreed
        header.append("flip rate base/cand")
        for cells, (_, row) in zip(rows, _rows(result), strict=True):
            cells.append(
                f"{num(row.get('baseline_flip_rate'))}/{num(row.get('candidate_flip_rate'))}"
            )
    lines.append("")
    lines += table(header, rows)
    lines += ["", *render_frontier(result["frontier"])]
    lines.append(
        "Δ = candidate − baseline macro accuracy (failures count as wrong). Hoeffding is "
        "sr-bench's valid but wide interval; gate = the gate's default, a stratified Wald "
        "interval with a variance floor per benchmark (the stratified Newcombe interval, "
        "which undercovers when the runs disagree on many cases, is in the JSON and CSV); "
        "the bootstrap is a diagnostic."
        + (
            " Flip rate = share of a target's cases whose repeats did not all agree (— without "
            "repeats); savings compare spend per case."
            if flips
            else ""
        )
    )
    return [*lines, "", *caveat_lines()]


def render_frontier(frontier: Mapping[str, Any]) -> list[str]:
    rows = [
        [
            point["run_id"][-8:],
            point["target_id"],
            num(point["quality"]),
            interval_with_coverage(point["quality_ci95"], point.get("quality_ci95_worst_coverage")),
            NULL if point["cost_usd"] is None else f"${point['cost_usd']:.6f}",
            "yes" if point["on_frontier"] else "",
        ]
        for point in [*frontier["points"], *frontier["unplaced"]]
    ]
    lines = [
        "cost–quality frontier (quality = macro accuracy, its 95 % interval over cases; cost = "
        "subject spend):",
        *table(["run", "target", "quality", "95% CI", "cost", "frontier"], rows),
    ]
    points = [*frontier["points"], *frontier["unplaced"]]
    if any(point.get("quality_ci95_worst_coverage") is not None for point in points):
        lines.append(COVERAGE_FOOTNOTE)
    return lines


def comparison_csv(result: Mapping[str, Any]) -> str:
    """One CSV row per (candidate run, candidate target)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for candidate, row in _rows(result):
        stats = row["paired_statistics"]
        values = {
            **{key: row.get(key) for key in CSV_COLUMNS},
            "baseline_run_id": candidate["baseline_run_id"],
            "candidate_run_id": candidate["candidate_run_id"],
            "mixed_data_sources": (candidate.get("data_sources") or {}).get("mixed", False),
            "hoeffding_low": row["quality_delta_ci95"][0],
            "hoeffding_high": row["quality_delta_ci95"][1],
            "bootstrap_low": row["quality_delta_bootstrap_ci95"][0],
            "bootstrap_high": row["quality_delta_bootstrap_ci95"][1],
            "stratified_wald_low": stats["stratified_wald_ci95"][0],
            "stratified_wald_high": stats["stratified_wald_ci95"][1],
            "stratified_newcombe_low": stats["stratified_newcombe_ci95"][0],
            "stratified_newcombe_high": stats["stratified_newcombe_ci95"][1],
            "newcombe_low": stats["newcombe_ci95"][0],
            "newcombe_high": stats["newcombe_ci95"][1],
            "mcnemar_exact_p": stats["mcnemar_exact_p"],
            "cases_needed_for_margin": stats["cases_needed_for_margin"],
            "margin": stats["margin"],
        }
        writer.writerow(["" if values[key] is None else values[key] for key in CSV_COLUMNS])
    return buffer.getvalue()


def _md(text: str) -> str:
    """Plain text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def scope_text(gate: Mapping[str, Any]) -> str:
    """Which scope decided the verdict and why ("per benchmark: this session is not …")."""
    scope = gate.get("scope", "macro")
    label = "per benchmark" if scope == "benchmark" else "macro"
    if gate.get("scope_default"):
        return f"{label}: {gate.get('scope_reason')}"
    return f"{label} (asked for)"


def benchmark_level(gate: Mapping[str, Any]) -> str:
    """What the per-benchmark intervals are: the verdict's, or shown beside a macro one."""
    if gate.get("scope") == "benchmark":
        design = gate.get("design") or {}
        confidence = design.get("confidence")
        level = "" if confidence is None else f" at {100 * confidence:.2f} % each"
        return f"the verdict{level}"
    return "95 % each, shown beside the macro verdict, not gated"


def benchmark_verdict(gate: Mapping[str, Any], bench: Mapping[str, Any]) -> str:
    """ok / FAIL of one benchmark; under the macro scope the same in lower case, as shown
    (the macro interval decides)."""
    if gate.get("scope") == "benchmark":
        return "ok" if bench["passed"] else "FAIL"
    return "ok" if bench["passed"] else "drop (not gated)"


def membership_lines(gate: Mapping[str, Any]) -> list[str]:
    """Benchmarks present on one side only, each kind on its line."""
    lines = []
    if gate.get("added_benchmarks"):
        lines.append(
            "Added (not gated): " + ", ".join(gate["added_benchmarks"]) + " — in this run only"
        )
    if gate.get("removed_benchmarks"):
        lines.append(
            "Removed (not gated): "
            + ", ".join(gate["removed_benchmarks"])
            + " — in the baseline only"
        )
    return lines


def gate_terminal_lines(gate: Mapping[str, Any]) -> list[str]:
    """The lines printed under the verdict: the scope, benchmarks on one side only, and each
    benchmark's accuracies, Δ and interval per target."""
    lines = [f"  scope: {scope_text(gate)}"]
    lines += [f"  {note}" for note in membership_lines(gate)]
    if gate["targets"]:
        lines.append(f"  per benchmark ({benchmark_level(gate)}):")
    rows = [(t["target_id"], b) for t in gate["targets"] for b in t.get("benchmarks") or []]
    target_width = max([14, *(len(target_id) for target_id, _ in rows)])
    bench_width = max([20, *(len(bench["benchmark"]) for _, bench in rows)])
    for target_id, bench in rows:
        low, high = bench["interval"]
        lines.append(
            f"    {target_id:<{target_width}} {bench['benchmark']:<{bench_width}} "
            f"{_accuracy(bench, 'baseline_accuracy'):>5} → "
            f"{_accuracy(bench, 'candidate_accuracy'):>5}  Δ {bench['delta']:+.3f} "
            f"[{low:+.3f}, {high:+.3f}] ({bench['cases']} cases) "
            f"{benchmark_verdict(gate, bench)}"
        )
    return lines


def _accuracy(bench: Mapping[str, Any], key: str) -> str:
    value = bench.get(key)
    return "—" if value is None else f"{value:.3f}"


def replay_markdown(report: Mapping[str, Any]) -> list[str]:
    """A replay report's lines of a step summary: it is an offline estimate, not evidence."""
    if report.get("mode") != "replay":
        return []
    sources = report.get("replay_sources") or {}
    lines = [
        f"**Replay (offline estimate)** `{report['run_id']}`: no model was called; answers from "
        f"live run `{sources.get('baseline_run_id')}` by the routing of preview "
        f"`{sources.get('preview_run_id')}`. Not live evidence.",
        "",
        "| target | estimated accuracy | estimated macro | estimated cost |",
        "| --- | ---: | ---: | ---: |",
    ]
    for t in report["summary"]["targets"]:
        lines.append(
            f"| {_md(t['id'])} | {_num(t.get('estimated_accuracy'))} | "
            f"{_num(t.get('estimated_macro_accuracy'))} | {_num(t.get('estimated_cost_usd'))} |"
        )
    return [*lines, ""]


def _num(value: Any) -> str:
    return "null" if value is None else f"{value:.4g}"


def gate_markdown(gate: Mapping[str, Any], report: Mapping[str, Any]) -> str:
    """The verdict as a GitHub step summary: a heading, the reason and one row per target."""
    mark = "✅ passed" if gate["passed"] else "❌ failed"
    lines = [
        f"### srbench gate {mark}",
        "",
        f"Run `{report['run_id']}` ({report['status']}, profile {report['profile']}) against "
        f"baseline `{gate['baseline_run_id']}` ({_md(str(gate['baseline_source']))}); mode "
        f"**{gate['mode']}**, interval {gate['interval_method']}"
        + (f", margin {gate['margin']:g}" if gate["mode"] == "noninferiority" else "")
        + ".",
        "",
    ]
    if gate["reason"]:
        lines += [f"**{_md(gate['reason'])}**", ""]
    lines += replay_markdown(report)
    mixed = ((gate.get("comparison") or {}).get("data_sources") or {}).get("warning")
    if mixed:
        lines += [f"⚠️ **{_md(mixed)}**", ""]
    if report.get("data_sources"):
        lines += [f"Data: {_md(report['data_sources']['label'])}.", ""]
    if gate.get("design"):
        lines += [f"Design: {_md(design_summary(gate['design']))}.", ""]
    lines += [f"Scope: **{_md(scope_text(gate))}**.", ""]
    for note in membership_lines(gate):
        lines += [f"{_md(note)}.", ""]
    if gate["targets"]:
        lines += [
            "| target | baseline target | Δ macro | macro interval | verdict |",
            "| --- | --- | ---: | --- | --- |",
        ]
        for target in gate["targets"]:
            low, high = target["interval"]
            lines.append(
                f"| {_md(target['target_id'])} | {_md(target['baseline_target_id'])} | "
                f"{target['quality_delta']:+.3f} | [{low:+.3f}, {high:+.3f}] | "
                f"{'ok' if target['passed'] else 'FAIL'} |"
            )
        lines += ["", f"Per benchmark ({_md(benchmark_level(gate))}):", ""]
        lines += [
            "| target | baseline target | benchmark | cases | baseline | candidate | Δ | "
            "interval | verdict |",
            "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |",
        ]
        for target in gate["targets"]:
            for bench in target["benchmarks"] or []:
                low, high = bench["interval"]
                lines.append(
                    f"| {_md(target['target_id'])} | {_md(target['baseline_target_id'])} | "
                    f"{_md(bench['benchmark'])} | {bench['cases']} | "
                    f"{_accuracy(bench, 'baseline_accuracy')} | "
                    f"{_accuracy(bench, 'candidate_accuracy')} | {bench['delta']:+.3f} | "
                    f"[{low:+.3f}, {high:+.3f}] | {benchmark_verdict(gate, bench)} |"
                )
    return "\n".join(lines) + "\n"
