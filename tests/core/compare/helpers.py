"""Builders for the comparison tests: the cases both sides share, a run side whose targets
answer given cases right, and reports whose suites record (or not) their data origins."""

from __future__ import annotations

from typing import Any

from pytest_srbench.core.compare.runs import RunSide
from pytest_srbench.core.models import DatasetInfo, Run
from pytest_srbench.core.report.build import build_report
from tests.core.helpers import call, case, manifest, result, target

CASES = [
    case("mmlu-pro", "0"),
    case("mmlu-pro", "1"),
    case("gpqa-diamond", "2"),
    case("gpqa-diamond", "3"),
    case("gpqa-diamond", "4"),
]


def ids(*numbers: int) -> set[str]:
    return {c.id for c in CASES if int(c.id.rsplit("/", 1)[1]) in numbers}


def side(
    run_id: str,
    correct: dict[str, set[str]],
    totals: dict[str, float | None] | None = None,
    *,
    status: str = "completed",
    targets: list[Any] | None = None,
    cases: list[Any] | None = None,
    results_override: dict[tuple[str, str], dict[str, Any]] | None = None,
    evaluation: dict[str, float | None] | None = None,
    created: str = "2026-11-30T00:00:00+00:00",
    **plan_extra: Any,
) -> RunSide:
    """A run whose targets answer ``correct`` right; the first call of each target carries its
    whole subject spend (so totals are exact)."""
    cases = cases or CASES
    targets = targets or [target(t) for t in correct]
    plan = manifest(cases, targets, **plan_extra)
    results = []
    calls = []
    for t in targets:
        for index, c in enumerate(cases):
            row = result(c.id, t.id, correct=c.id in correct.get(t.id, set()))
            row = (results_override or {}).get((c.id, t.id), row)
            if row is not None:
                results.append(row)
            spend = (totals or {}).get(t.id, 1.0) if index == 0 else 0.0
            calls.append(call(c.id, t.id, cost=spend))
        if evaluation and t.id in evaluation:
            calls.append(call(cases[0].id, t.id, cost=evaluation[t.id], role="judge"))
    run = Run(id=run_id, status=status, created_at=created, updated_at=created, plan_sha256="x")
    return RunSide.from_report(build_report(plan, run, results, calls))


SHA = "e" * 64
RELEASED = {
    "kind": "released",
    "source": "https://huggingface.co/datasets/Idavidrein/gpqa",
    "revision": "90b8e5be2b1d3d2dbfe016cdab47981150600c4a",
    "files": {"gpqa_diamond.csv": SHA},
    "license": "CC-BY-4.0",
    "via": "huggingface_hub",
}
ORIGINAL = {"kind": "original", "note": "original smoke items written for pytest-srbench"}


def report_on(run_id: str, gpqa: dict | None, mmlu: dict | None = ORIGINAL) -> dict:
    """Two single targets over the same five cases; gpqa-diamond's and mmlu-pro's suites
    record these origins (None: recorded none)."""
    suites = [
        {"benchmark": name, **({"origin": origin} if origin else {})}
        for name, origin in (("gpqa-diamond", gpqa), ("mmlu-pro", mmlu))
    ]
    dataset = DatasetInfo(profile="quick", seed=1, suites=suites)
    plan = manifest(CASES, [target("a"), target("b")], dataset=dataset)
    right = {"a": ids(0, 2, 3), "b": ids(0, 1, 2)}
    at = "2026-11-30T00:00:00+00:00"
    return build_report(
        plan,
        Run(id=run_id, status="completed", created_at=at, updated_at=at, plan_sha256="x"),
        [result(c.id, t, correct=c.id in right[t]) for c in CASES for t in right],
        [call(c.id, t) for c in CASES for t in right],
    )


def strip_origins(report: dict) -> dict:
    """A report as a version from before data origins wrote it."""
    old = {key: value for key, value in report.items() if key != "data_sources"}
    old["plan"] = {k: v for k, v in report["plan"].items() if k != "data_sources"}
    old["benchmarks"] = [
        {k: v for k, v in row.items() if k != "data_source"} for row in report["benchmarks"]
    ]
    old["summary"] = {
        **report["summary"],
        "targets": [
            {k: v for k, v in t.items() if k != "score_comparable"}
            for t in report["summary"]["targets"]
        ],
    }
    return old
