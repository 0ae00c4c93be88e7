"""A plan's text read as a report reads it (``core/report/plan_text.py``): the same
``ReportPlan`` as validating the whole text, whatever the text's layout, and the same refusal
of a text that is not a plan."""

from __future__ import annotations

import json
import random

import pytest
from pydantic import ValidationError

from pytest_srbench.core.models import Manifest, ReportPlan
from pytest_srbench.core.report import plan_text
from pytest_srbench.core.report.plan_text import plan_cases, report_plan_of
from tests.core.report.random_runs import plan


def _same(text: str | bytes) -> ReportPlan:
    whole = Manifest.model_validate_json(text)
    assert list(plan_cases(text)) == whole.cases
    found = report_plan_of(text)
    expected = ReportPlan.model_validate_json(text)
    assert found == expected
    assert found.model_dump() == expected.model_dump()
    assert [case.model_dump() for case in found.cases] == [
        case.model_dump() for case in expected.cases
    ]
    return found


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("repeats", [1, 3])
def test_a_plan_text_reads_as_the_whole_text_validated(seed, repeats, monkeypatch):
    monkeypatch.setattr(plan_text, "BATCH", 4)  # several batches, one part-filled
    frozen = plan(random.Random(seed), repeats=repeats)
    text = frozen.model_dump_json()
    found = _same(text)
    assert [case.id for case in found.cases] == [case.id for case in frozen.cases]
    assert all(case.messages == [] and case.answer is None for case in found.cases)
    assert any(case.messages for case in frozen.cases)
    assert found.planned_keys() == frozen.planned_keys()
    _same(text.encode())
    _same(json.dumps(json.loads(text), indent=2))  # any whitespace
    reordered = json.loads(text)
    _same(json.dumps({"cases": reordered.pop("cases"), **reordered}))  # cases first
    _same(json.dumps({**reordered, "cases": []}))


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "{}",
        "not json",
        '{"cases": [}',
        '{"cases": 3}',
        '{"cases": [{"id": 1}]}',
        '{"cases": [], "cases": []}',
    ],
)
def test_a_text_that_is_no_plan_is_refused_as_the_whole_text_is(text):
    with pytest.raises(ValidationError) as found:
        report_plan_of(text)
    with pytest.raises(ValidationError) as expected:
        ReportPlan.model_validate_json(text)
    assert found.value.errors() == expected.value.errors()


def test_a_case_that_does_not_validate_is_refused_as_in_the_whole_text():
    document = json.loads(plan(random.Random(1)).model_dump_json())
    document["cases"][1]["id"] = "other/q1"  # not '<benchmark>/<native id>'
    text = json.dumps(document)
    with pytest.raises(ValidationError) as found:
        report_plan_of(text)
    with pytest.raises(ValidationError) as expected:
        ReportPlan.model_validate_json(text)
    assert str(found.value) == str(expected.value)
    with pytest.raises(ValidationError):  # (its cases read alone: refused at that case)
        list(plan_cases(text))
