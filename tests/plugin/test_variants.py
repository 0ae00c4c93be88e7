"""Variants of a benchmark written as tests: a ``@pytest.mark.parametrize`` beside the benchmark
mark, and several functions marked with one benchmark, answer every cell as targets of their
own (``<target>~<variant>``) — readable node ids, one report row each, no extra cells for a
benchmark without variants, deterministic plans, compared and gated like targets."""

from __future__ import annotations

import json
import sys

import pytest

pytestmark = pytest.mark.slow

PARAMETRIZED = """
import pytest

SYSTEM = {"plain": "You answer.", "fancy": "You answer carefully, then give only the letter."}


@pytest.mark.parametrize("style", ["plain", "fancy"])
@pytest.mark.srbench("mmlu-pro")
async def test_app(srbench_case, srbench_target, style):
    messages = [{"role": "system", "content": SYSTEM[style]}, *srbench_case.messages]
    return (await srbench_target.ask(messages)).final_text
"""

TWO_FUNCTIONS = """
import pytest


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa_async(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text


@pytest.mark.srbench("gpqa-diamond")
def test_gpqa_sync(srbench_case, srbench_target):
    return srbench_target.ask_sync(srbench_case.messages).final_text
"""

ONE_VALUE = """
import pytest


@pytest.mark.parametrize("backend", ["only"])
@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target, backend):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""

PLAIN_MMLU = """
import pytest


@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-target", "sim-large",
        *args,
    )  # fmt: skip


def run_json(pytester: pytest.Pytester, name: str, *args: str) -> tuple[pytest.RunResult, dict]:
    result = run(pytester, f"--srbench-json={name}", *args)
    assert result.ret == 0, (result.stdout.str() + result.stderr.str())[-3000:]
    return result, json.loads((pytester.path / name).read_text())


def totals(report: dict) -> dict[str, int]:
    return {t["id"]: t["total"] for t in report["summary"]["targets"]}


def test_a_parametrized_test_is_one_variant_target_per_value_with_readable_ids(pytester):
    pytester.makepyfile(test_app=PARAMETRIZED)
    listed = run(pytester, "--collect-only", "-q")
    assert listed.ret == 0, listed.stdout.str()[-3000:]
    items = [line for line in listed.stdout.lines if line.startswith("test_app.py::")]
    assert len(items) == 28
    assert "test_app.py::test_app[mmlu-pro/smoke-biology-001-sim-large-plain]" in items
    assert "test_app.py::test_app[mmlu-pro/smoke-biology-001-sim-large-fancy]" in items
    result, report = run_json(pytester, "report.json")
    assert totals(report) == {"sim-large~plain": 14, "sim-large~fancy": 14}
    assert report["summary"]["planned_cells"] == 28
    rows = result.stdout.lines
    assert any(line.startswith("sim-large · plain (sim) ") for line in rows)
    assert any(line.startswith("sim-large · fancy (sim) ") for line in rows)


def test_several_functions_of_one_benchmark_are_variants_named_after_them(pytester):
    pytester.makepyfile(test_gpqa=TWO_FUNCTIONS)
    result, report = run_json(pytester, "report.json")
    assert totals(report) == {"sim-large~gpqa_async": 4, "sim-large~gpqa_sync": 4}
    for target in report["summary"]["targets"]:
        assert target["completed"] == 4 and target["failed"] == 0  # the sync body ran too
    output = result.stdout.str() + result.stderr.str()
    assert "ERROR" not in output and "refus" not in output


def test_a_parameter_with_one_value_makes_no_variant(pytester):
    pytester.makepyfile(test_mmlu=ONE_VALUE)
    _, report = run_json(pytester, "report.json")
    assert totals(report) == {"sim-large": 14}
    assert {cell["target_id"] for cell in report["cells"]} == {"sim-large"}


def test_a_benchmark_without_variants_keeps_its_plain_targets_and_adds_no_cells(pytester):
    pytester.makepyfile(test_gpqa=TWO_FUNCTIONS, test_mmlu=PLAIN_MMLU)
    _, report = run_json(pytester, "report.json")
    assert totals(report) == {"sim-large": 14, "sim-large~gpqa_async": 4, "sim-large~gpqa_sync": 4}
    planned = report["summary"]["planned_cells"]
    assert planned == sum(totals(report).values()) == len(report["cells"]) == 22
    by_benchmark = {
        benchmark: {c["target_id"] for c in report["cells"] if c["benchmark"] == benchmark}
        for benchmark in ("mmlu-pro", "gpqa-diamond")
    }
    assert by_benchmark == {
        "mmlu-pro": {"sim-large"},
        "gpqa-diamond": {"sim-large~gpqa_async", "sim-large~gpqa_sync"},
    }


def test_variants_are_compared_and_gated_like_targets(pytester):
    pytester.makepyfile(test_app=PARAMETRIZED)
    _, main = run_json(pytester, "main.json")
    _, pr = run_json(pytester, "pr.json", "--srbench-baseline=main.json")
    assert pr["plan_sha256"] == main["plan_sha256"]
    gate = pr["gate"]
    assert gate is not None and gate["passed"] is True, gate
    pairs = {(t["target_id"], t["baseline_target_id"]) for t in gate["targets"]}
    assert pairs == {
        ("sim-large~plain", "sim-large~plain"),
        ("sim-large~fancy", "sim-large~fancy"),
    }
    compared = pytester.run(
        sys.executable, "-m", "pytest_srbench", "compare", "main.json", "pr.json"
    )
    assert compared.ret == 0, (compared.stdout.str() + compared.stderr.str())[-3000:]
    assert "sim-large~plain" in compared.stdout.str()
    assert "sim-large~fancy" in compared.stdout.str()


def test_a_plan_with_variants_beside_plain_targets_can_be_gated(pytester):
    pytester.makepyfile(test_gpqa=TWO_FUNCTIONS, test_mmlu=PLAIN_MMLU)
    _, main = run_json(pytester, "main.json")
    assert "sim-large~gpqa_async" in totals(main) and "sim-large" in totals(main)
    _, pr = run_json(pytester, "pr.json", "--srbench-baseline=main.json")
    assert pr["gate"]["passed"] is True
    gated = {t["target_id"] for t in pr["gate"]["targets"]}
    assert gated == {"sim-large", "sim-large~gpqa_async", "sim-large~gpqa_sync"}


def test_the_same_parametrized_test_plans_the_same_variants_each_run(pytester):
    pytester.makepyfile(test_app=PARAMETRIZED, test_gpqa=TWO_FUNCTIONS)
    _, first = run_json(pytester, "first.json")
    _, second = run_json(pytester, "second.json")
    assert first["plan_sha256"] == second["plan_sha256"]
    assert [t["id"] for t in first["summary"]["targets"]] == [
        t["id"] for t in second["summary"]["targets"]
    ]
    assert totals(first) == {
        "sim-large~plain": 14,
        "sim-large~fancy": 14,
        "sim-large~gpqa_async": 4,
        "sim-large~gpqa_sync": 4,
    }
