"""Where the cases came from, as the terminal summary, the HTML page and the comparison texts
say it: an sr-bench 1.0 label only over released data at the sr-bench counts, the kind of data
per benchmark, loud flags on comparisons across data sources; old reports still render."""

from __future__ import annotations

from pytest_srbench.core.compare.gate import evaluate_gate
from pytest_srbench.core.compare.runs import RunSide, compare_many
from pytest_srbench.core.report.model import ReportModel
from pytest_srbench.render.compare import comparison_csv, gate_markdown, render_comparison
from pytest_srbench.render.html import render_compare_html, render_run_html
from pytest_srbench.render.terminal import render_summary
from tests.core.compare.helpers import ORIGINAL, RELEASED, report_on, strip_origins
from tests.core.report.helpers import every, report_of, smoke_plan


def test_the_terminal_says_sr_bench_only_over_released_data():
    released, summary = report_of(smoke_plan(every("released")))
    score = f"{summary['sr_bench_score']:.3f}"
    lines = render_summary(released)
    assert f"t: macro accuracy {score}" in "\n".join(lines)
    assert any(
        line.endswith(f"· sr_bench_score {score} · sr-bench 1.0; profile=smoke") for line in lines
    )
    assert next(line for line in lines if line.startswith("data: ")) == (
        "data: sr-bench 1.0 data: all nine benchmarks from their released data at the smoke "
        "profile's counts"
    )
    synthetic, _ = report_of(smoke_plan(every("synthetic")))
    lines = render_summary(synthetic)
    assert "data: synthetic data — scores are not comparable with sr-bench 1.0" in lines
    assert (
        "  synthetic: pytest-srbench 0.1.0 datasets synth, seed 3 — "
        + ", ".join(sorted(row["benchmark"] for row in synthetic["benchmarks"]))
        in lines
    )
    (line,) = [line for line in lines if line.startswith("t: macro accuracy")]
    assert line.endswith(
        f"· score {score} · macro score over synthetic data — not comparable with sr-bench 1.0; "
        "profile=smoke"
    )
    assert "sr_bench_score" not in line
    header = next(line for line in lines if line.startswith("benchmark "))
    assert header.split()[:3] == ["benchmark", "target", "data"]
    assert any(line.startswith("tau3") and " synthetic " in line for line in lines)


def test_the_html_page_shows_each_benchmarks_data_and_the_score_badge():
    report, _ = report_of(smoke_plan(every("released") | {"hle": "user"}))
    page = render_run_html(report)
    assert '<span class="badge warn">mixed</span>' in page
    assert "mixed data (released, user) — scores are not comparable with sr-bench 1.0" in page
    assert '<span class="badge warn">not sr-bench 1.0</span>' in page
    assert (
        '<td data-data="user"><span class="badge" title="user: our own suite">user</span>' in page
    )
    assert '<tr data-benchmark="hle"><th scope="row">hle</th><td>user</td>' in page
    assert "https://example.org/release @ 0123456789abcdef0123456789abcdef01234567" in page
    assert "license MIT · via huggingface_hub" in page
    comparable, _ = report_of(smoke_plan(every("released")))
    assert '<span class="badge ok">sr-bench 1.0</span>' in render_run_html(comparable)


def test_an_old_report_renders_as_not_recorded():
    old = ReportModel.model_validate(strip_origins(report_on("old", RELEASED))).model_dump(
        mode="json"
    )
    lines = render_summary(old)
    assert "data: not recorded (a report from before data origins)" in lines
    assert "not recorded (a report from before data origins)" in render_run_html(old)


def test_comparisons_across_data_are_flagged_in_text_csv_html_and_the_gate_summary():
    base, cand = report_on("base", RELEASED), report_on("cand", ORIGINAL)
    result = compare_many(
        RunSide.from_report(base), [RunSide.from_report(cand)], allow_mixed_sources=True
    )
    lines = render_comparison(result)
    assert lines[0].startswith("!!! cand: MIXED DATA SOURCES — this comparison pairs different")
    assert lines[1].startswith("!!! Deltas over different data")
    assert comparison_csv(result).splitlines()[1].split(",")[4] == "True"
    page = render_compare_html(result)
    assert 'id="mixed-sources"' in page and 'data-mixed="cand"' in page
    gate = evaluate_gate(
        RunSide.from_report(base), RunSide.from_report(cand), allow_mixed_sources=True
    )
    text = gate_markdown(gate, cand)
    assert "⚠️ **MIXED DATA SOURCES" in text
    assert "Data: original data — scores are not comparable with sr-bench 1.0." in text
    plain = compare_many(
        RunSide.from_report(base), [RunSide.from_report(report_on("c2", RELEASED))]
    )
    assert not render_comparison(plain)[0].startswith("!!!")
    assert 'id="mixed-sources"' not in render_compare_html(plain)
