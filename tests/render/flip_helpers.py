"""Shared by test_terminal_and_compare_text and the tests that build on it (a test module never imports another)."""

from __future__ import annotations

from pytest_srbench.core.models import Run
from pytest_srbench.core.plan.build import expand_repeats
from pytest_srbench.core.report.build import build_report
from tests.core.helpers import call, case, manifest, result, target

CASES = [case("mmlu-pro", "a"), case("mmlu-pro", "b")]


def report(run_id: str, repeats: int, wrong: set[str]) -> dict:
    """Target t answers every cell right but those in ``wrong``."""
    cases = expand_repeats(CASES, repeats)
    plan = manifest(cases, [target("t")], repeats=repeats)
    results = [result(c.id, "t", correct=c.id not in wrong) for c in cases]
    calls = [call(c.id, "t") for c in cases]
    at = "2026-11-30T00:00:00+00:00"
    return build_report(plan, Run(id=run_id, status="completed", created_at=at,
                                  updated_at=at, plan_sha256="x"), results, calls)  # fmt: skip
