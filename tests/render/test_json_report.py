"""The JSON report is written a piece at a time and reads exactly as
``json.dumps(validated report, indent=2, ensure_ascii=False)`` did."""

import json
import random

import pytest
from pydantic import ValidationError

from pytest_srbench.core.report.build import PlannedCases, build_report
from pytest_srbench.core.report.model import CellOutcome, ReportModel
from pytest_srbench.render.json_report import (
    CELL_LEVEL,
    cell_text,
    head_pieces,
    indented,
    report_chunks,
    report_json,
)
from tests.core.helpers import run
from tests.core.report.random_runs import plan, rows
from tests.render.helpers import planned


def value(rng: random.Random, depth: int = 0):
    scalars = [None, True, False, 0, -7, 2**70, 0.1, 1e-05, 1.5e16, -2.5e-300, float("nan"),
               float("inf"), "", "plain", 'quo"te\\back\nline\u2028é\x00', "日本"]  # fmt: skip
    if depth > 2 or rng.random() < 0.5:
        return rng.choice(scalars)
    if rng.random() < 0.5:
        return [value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {f"k{i}é": value(rng, depth + 1) for i in range(rng.randint(0, 3))}


@pytest.mark.parametrize("seed", range(20))
def test_indented_is_json_dumps_with_indent_2(seed):
    rng = random.Random(seed)
    for _ in range(50):
        data = value(rng)
        assert indented(data) == json.dumps(data, indent=2, ensure_ascii=False)
        nested = json.dumps({"x": [data]}, indent=2, ensure_ascii=False)
        assert nested == '{\n  "x": [\n    ' + indented(data, "    ") + "\n  ]\n}"


def test_a_cell_is_written_as_validated_whether_or_not_it_was_in_shape():
    shaped = {"case_id": "b/1", "target_id": "t", "benchmark": "b", "status": "completed",
              "correct": True, "answer": ["A", {"n": 1.5}], "answer_status": "answered",
              "error": None, "latency_s": 1e-05, "ttft_s": None, "cost_usd": 0.25,
              "embedding": {"source": "api", "dimensions": 3}}  # fmt: skip
    loose = {**shaped, "correct": 1, "latency_s": 2, "answer": ("A", 3)}  # pydantic coerces
    for cell in (shaped, loose):
        validated = CellOutcome.model_validate(cell).model_dump(mode="json")
        dumped = json.dumps(validated, indent=2, ensure_ascii=False)
        assert cell_text(cell) == CELL_LEVEL + dumped.replace("\n", "\n" + CELL_LEVEL)


@pytest.mark.parametrize("seed", range(4))
def test_the_report_is_the_indented_dump_of_the_validated_report(seed):
    rng = random.Random(seed)
    frozen = plan(rng, repeats=1 + seed % 2)
    results, calls = rows(rng, frozen)
    report = build_report(frozen, run("failed"), results, calls)
    whole = ReportModel.model_validate(report).model_dump(mode="json")
    expected = json.dumps(whole, indent=2, ensure_ascii=False) + "\n"
    assert report_json(report) == expected
    head = list(head_pieces(report))  # the plan's case list a batch of cases at a time
    assert len(head) <= 2 + len(report["plan"]["cases"]) // 1000 + 2
    assert len(list(report_chunks(report))) == len(head) + len(report["cells"]) + 1
    assert report_json({**report, "cells": []}).endswith('"cells": []\n}\n')


def test_a_plan_case_list_in_shape_is_written_as_validated_and_one_out_of_shape_is_validated():
    rng = random.Random(7)
    report = build_report(plan(rng), run("completed"), *rows(rng, plan(random.Random(7))))
    odd = [{"id": 'b/q"1\\\n\u2028日', "benchmark": "b", "repeat_of": None},
           {"id": "b/q2#r1", "benchmark": "b", "repeat_of": 'b/q"1\\\n\u2028日'}]  # fmt: skip
    shaped = {**report, "plan": {**report["plan"], "cases": odd}}
    whole = ReportModel.model_validate(shaped).model_dump(mode="json")
    assert report_json(shaped) == json.dumps(whole, indent=2, ensure_ascii=False) + "\n"
    coerced = {**report, "plan": {**report["plan"], "cases": [{**odd[0], "repeat_of": 3}]}}
    with pytest.raises(ValidationError, match="repeat_of"):  # strict: an int is no case id
        report_json(coerced)
    extra = {**report, "plan": {**report["plan"], "cases": [{**odd[0], "secret": "x"}]}}
    with pytest.raises(ValidationError, match="secret"):
        report_json(extra)


@pytest.mark.parametrize("count", [0, 1, 999, 1000, 1001, 2345])
def test_a_plan_case_list_read_from_the_plan_is_written_as_the_list_it_stands_for(count):
    """Across the batch boundaries: the head written from the plan's cases equals the one
    written from the same list of dicts (which the first test shows equal to the dump)."""
    rng = random.Random(3)
    report = build_report(plan(rng), run("completed"), *rows(rng, plan(random.Random(3))))
    cases = PlannedCases(planned(count))
    as_list = [{"id": c["id"], "benchmark": "b", "repeat_of": c["repeat_of"]} for c in cases]
    assert cases == as_list and list(cases) == as_list and cases[1:3] == as_list[1:3]
    lazy = {**report, "plan": {**report["plan"], "cases": cases}}
    eager = {**report, "plan": {**report["plan"], "cases": as_list}}
    assert "".join(head_pieces(lazy)) == "".join(head_pieces(eager))
    whole = ReportModel.model_validate(eager).model_dump(mode="json")
    assert report_json(lazy) == json.dumps(whole, indent=2, ensure_ascii=False) + "\n"
    assert max(len(piece) for piece in head_pieces(lazy)) < 200_000


def test_a_planned_case_repeating_something_that_is_no_case_id_is_refused():
    odd = planned(1)[0].model_copy(update={"metadata": {"repeat_of": 3}})
    with pytest.raises(ValueError, match="repeat_of must be a case id"):
        list(PlannedCases([odd]))


def test_an_answer_holding_the_head_marker_text_is_written_as_any_answer():
    """The head is cut where the plan's case list goes; a model's answer that spells the
    marker (a NUL is escaped in any JSON string) cannot move that cut."""
    rng = random.Random(5)
    report = build_report(plan(rng), run("completed"), *rows(rng, plan(random.Random(5))))
    report = {**report, "plan": {**report["plan"], "cases": PlannedCases(planned(3))},
              "run_id": "\x00planned cases\x00"}  # fmt: skip
    eager = {**report, "plan": {**report["plan"], "cases": list(report["plan"]["cases"])}}
    whole = ReportModel.model_validate(eager).model_dump(mode="json")
    assert report_json(report) == json.dumps(whole, indent=2, ensure_ascii=False) + "\n"
