"""A stored plan's JSON text read as a report reads it (pure): ``report_plan_of`` gives a
``ReportPlan`` — every field validated as the whole plan's would be, each case without its
content (``CaseOutline``) — without ever holding the parse of every case at once.

Validating the whole text at once (``model_validate_json``) parses all of it first: at
100,000 cases that parse alone peaks at ~150 MB, three times what the plan then holds. Here
the text is scanned at its top level only: the ``cases`` array is cut out (the rest is
validated as text, as before) and its cases are decoded one at a time (``json``'s C scanner,
which says where each value ends), their content dropped, and validated a batch at a time."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pytest_srbench.core.models import CaseOutline, ReportPlan

BATCH = 2000  # cases validated at once
_CONTENT = ("messages", "answer")  # what a CaseOutline skips, dropped before it is validated
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()


@cache
def _cases() -> TypeAdapter[list[CaseOutline]]:
    return TypeAdapter(list[CaseOutline])  # (made when first read: 30 ms)


def report_plan_of(text: str | bytes) -> ReportPlan:
    """What ``ReportPlan.model_validate_json(text)`` gives, holding one batch of decoded
    cases at a time. A text this scan does not follow (not an object with one ``cases``
    array, a case that does not validate) is validated whole, and refused as it would be."""
    if not isinstance(text, str):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return ReportPlan.model_validate_json(text)
    try:
        found = _scan(text)
    except (ValueError, ValidationError):
        found = None
    if found is None:
        return ReportPlan.model_validate_json(text)
    start, end, cases = found
    plan = ReportPlan.model_validate_json(text[:start] + "[]" + text[end:])
    return plan.model_copy(update={"cases": cases})


def _skip(text: str, index: int) -> int:
    found = _WHITESPACE.match(text, index)
    return found.end() if found else index


def _scan(text: str) -> tuple[int, int, list[CaseOutline]] | None:
    """Where the top-level ``cases`` array starts and ends, and its cases; None when the
    text's top level is not an object holding exactly one ``cases`` array."""
    index = _skip(text, 0)
    if text[index : index + 1] != "{":
        return None
    index = _skip(text, index + 1)
    found = None
    while text[index : index + 1] == '"':
        key, index = _decoder.raw_decode(text, index)
        index = _skip(text, index)
        if text[index : index + 1] != ":":
            return None
        index = _skip(text, index + 1)
        if key == "cases":
            if found is not None or text[index : index + 1] != "[":
                return None
            cases, end = _cases_from(text, index)
            found = (index, end, cases)
            index = end
        else:
            _, index = _decoder.raw_decode(text, index)
        index = _skip(text, index)
        if text[index : index + 1] == "}":
            return found
        if text[index : index + 1] != ",":
            return None
        index = _skip(text, index + 1)
    return None


def _cases_from(text: str, index: int) -> tuple[list[CaseOutline], int]:
    """The cases of the array starting at ``index``, and where it ends."""
    cases: list[CaseOutline] = []
    batch: list[Any] = []
    index = _skip(text, index + 1)
    if text[index : index + 1] == "]":
        return cases, index + 1
    while True:
        case, index = _decoder.raw_decode(text, index)
        if type(case) is dict:
            for key in _CONTENT:
                case.pop(key, None)
        batch.append(case)
        if len(batch) == BATCH:
            cases += _cases().validate_python(batch)
            batch.clear()
        index = _skip(text, index)
        if text[index : index + 1] == ",":
            index = _skip(text, index + 1)
            continue
        if text[index : index + 1] != "]":
            raise ValueError("not a JSON array")
        cases += _cases().validate_python(batch)
        return cases, index + 1
