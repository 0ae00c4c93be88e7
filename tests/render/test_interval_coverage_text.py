"""The worst-case coverage note ("covers ≥ X %"): since issue 47 no printed interval needs
one; reports that carry one (older reports) still show it in the terminal and the HTML."""

from __future__ import annotations

from pytest_srbench.core.models import Run
from pytest_srbench.core.report.build import build_report
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


def with_caveat(built: dict, worst: float) -> dict:
    """A report as one from before issue 47 carried it: Wilson's worst-case coverage beside
    every interval over 55 cases or fewer (the renderers still print it)."""
    for row in (*built["summary"]["targets"], *built["benchmarks"]):
        row["accuracy_ci95_worst_coverage"] = worst
    for row in built["summary"]["targets"]:
        row["macro_accuracy_ci95_worst_coverage"] = worst
    for point in (built.get("frontier") or {}).get("points") or []:
        point["quality_ci95_worst_coverage"] = worst
    return built


def test_small_intervals_need_no_caveat_any_more() -> None:
    # issue 47: the printed interval covers ≥ 93 % for any accuracy at any size (Clopper–
    # Pearson's hull near the edge: 1 of 2 gives [0.013, 0.987], Wilson gave [0.095, 0.905]
    # covering ≥ 88.2 % in 0.3–0.9 and 79 % near 0 and 1)
    small = report("small", 2)
    lines = "\n".join(render_summary(small))
    target = small["summary"]["targets"][0]
    assert target["accuracy_ci95_worst_coverage"] is None
    assert "[0.013, 0.987]" in lines
    assert "covers ≥" not in lines and COVERAGE_FOOTNOTE not in lines


def test_the_summary_names_a_stated_worst_coverage() -> None:
    small = with_caveat(report("small", 2), 0.882)
    lines = "\n".join(render_summary(small))
    assert "[0.013, 0.987] (covers ≥88.2%)" in lines  # target row and benchmark row
    assert COVERAGE_FOOTNOTE in lines
    large = "\n".join(render_summary(report("large", 60)))
    assert "covers ≥" not in large and COVERAGE_FOOTNOTE not in large


def test_the_html_carries_a_stated_worst_coverage_too() -> None:
    page = render_run_html(with_caveat(report("small", 2), 0.882))
    assert "(covers ≥88.2%)" in page
    assert "(covers ≥" not in render_run_html(report("small", 2))
