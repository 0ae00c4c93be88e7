"""The worst-case coverage beside every interval over 55 cases or fewer: terminal summary,
comparison frontier and HTML report."""

from __future__ import annotations

from pytest_srbench.core.compare.runs import RunSide, compare_many
from pytest_srbench.core.models import Run
from pytest_srbench.core.report.build import build_report
from pytest_srbench.render.compare import render_frontier
from pytest_srbench.render.html import render_run_html
from pytest_srbench.render.terminal import COVERAGE_FOOTNOTE, render_summary
from tests.core.helpers import call, case, manifest, result, target

AT = "2026-11-30T00:00:00+00:00"


def report(run_id: str, cases: int) -> dict:
    """One target answering every mmlu-pro case right but the first."""
    plan_cases = [case("mmlu-pro", str(i)) for i in range(cases)]
    plan = manifest(plan_cases, [target("t")])
    results = [result(c.id, "t", correct=i > 0) for i, c in enumerate(plan_cases)]
    calls = [call(c.id, "t") for c in plan_cases]
    run = Run(id=run_id, status="completed", created_at=AT, updated_at=AT, plan_sha256="x")
    return build_report(plan, run, results, calls)


def test_the_summary_names_the_worst_coverage_of_small_intervals() -> None:
    # 2 cases: Wilson's worst coverage over 2 cases for an accuracy in 0.3-0.9 is 88.27 %
    small = report("small", 2)
    lines = "\n".join(render_summary(small))
    target = small["summary"]["targets"][0]
    assert target["accuracy_ci95_worst_coverage"] == 0.882
    assert "[0.095, 0.905] (covers ≥88.2%)" in lines  # target row and benchmark row
    assert lines.count("(covers ≥88.2%)") == 3  # target, benchmark, one-benchmark macro
    assert "t: macro accuracy 0.500 [0.095, 0.905] (covers ≥88.2%)" in lines
    assert COVERAGE_FOOTNOTE in lines
    # 60 cases: no caveat and no footnote
    large = "\n".join(render_summary(report("large", 60)))
    assert "covers ≥" not in large and COVERAGE_FOOTNOTE not in large


def test_the_comparison_frontier_and_the_html_carry_it_too() -> None:
    base = RunSide.from_report(report("base", 2))
    cand = RunSide.from_report(report("cand", 2))
    lines = render_frontier(compare_many(base, [cand])["frontier"])
    assert sum("(covers ≥88.2%)" in line for line in lines) == 2
    assert lines[-1] == COVERAGE_FOOTNOTE
    page = render_run_html(report("small", 2))
    assert "(covers ≥88.2%)" in page
    assert "[0.095, 0.905] (covers ≥88.2%), cost" in page  # the chart point's title
