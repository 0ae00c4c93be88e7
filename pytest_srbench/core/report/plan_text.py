"""A stored plan's JSON text read without ever holding the parse of every case at once
(pure): ``report_plan_of`` gives a ``ReportPlan`` (every field validated as the whole plan's
would be, each case without its content), ``plan_cases`` the plan's cases whole, a batch at
a time (an HTML page's drill-down reads each case's prompt once, in planned order).

Validating the whole text at once (``model_validate_json``) parses all of it first: at
100,000 cases that parse alone peaks at ~150 MB, three times what the plan then holds. Here
the text is scanned at its top level only: the ``cases`` array is cut out (the rest is
validated as text, as before) and its cases are decoded one at a time (``json``'s C scanner,
which says where each value ends) and validated a batch at a time."""

from __future__ import annotations

import json
import re
from collections.abc import Generator, Iterator
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from pytest_srbench.core.models import Case, CaseOutline, Manifest, ReportPlan

BATCH = 2000  # cases validated at once
_CONTENT = ("messages", "answer")  # what a CaseOutline skips, dropped before it is validated
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_decoder = json.JSONDecoder()


@cache
def _adapter(kind: type[Case]) -> TypeAdapter[list[Any]]:
    return TypeAdapter(list[kind])  # type: ignore[valid-type]  # (made when first read: 30 ms)


def _text(text: str | bytes) -> str | None:
    if isinstance(text, str):
        return text
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        return None


def report_plan_of(text: str | bytes) -> ReportPlan:
    """What ``ReportPlan.model_validate_json(text)`` gives, holding one batch of decoded
    cases at a time. A text this scan does not follow (not an object with one ``cases``
    array, a case that does not validate) is validated whole, and refused as it would be."""
    decoded = _text(text)
    try:
        found = _scan(decoded) if decoded is not None else None
    except (ValueError, ValidationError):
        found = None
    if decoded is None or found is None:
        return ReportPlan.model_validate_json(text)
    start, end, cases = found
    plan = ReportPlan.model_validate_json(decoded[:start] + "[]" + decoded[end:])
    return plan.model_copy(update={"cases": cases})


def plan_cases(text: str | bytes) -> Iterator[Case]:
    """The plan's cases whole, in order, validated a batch at a time (``Case``); a text this
    scan does not follow is validated whole first. Only the cases are read: the caller holds
    the plan (``report_plan_of`` of the same text, which refuses what is no plan); a case
    that does not validate raises ``ValidationError`` when its batch is reached."""
    decoded = _text(text)
    start = _cases_start(decoded) if decoded is not None else None
    if decoded is None or start is None:
        yield from Manifest.model_validate_json(text).cases
        return
    for batch in _batches(decoded, start, Case):
        yield from batch


def _skip(text: str, index: int) -> int:
    found = _WHITESPACE.match(text, index)
    return found.end() if found else index


def _keys(text: str) -> Generator[tuple[str, int], int, None]:
    """Each top-level key with where its value starts; the caller steps over the value and
    sends where it ends. Raises ValueError when the text's top level is not an object."""
    index = _skip(text, 0)
    if text[index : index + 1] != "{":
        raise ValueError("not a JSON object")
    index = _skip(text, index + 1)
    while text[index : index + 1] == '"':
        key, index = _decoder.raw_decode(text, index)
        index = _skip(text, index)
        if text[index : index + 1] != ":":
            raise ValueError("not a JSON object")
        end = yield key, _skip(text, index + 1)
        index = _skip(text, end)
        if text[index : index + 1] == "}":
            return
        if text[index : index + 1] != ",":
            raise ValueError("not a JSON object")
        index = _skip(text, index + 1)
    raise ValueError("not a JSON object")


def _scan(text: str) -> tuple[int, int, list[CaseOutline]] | None:
    """Where the top-level ``cases`` array starts and ends, and its cases; None when the
    text's top level is not an object holding exactly one ``cases`` array."""
    found = None
    keys = _keys(text)
    step = next(keys, None)
    while step is not None:
        key, start = step
        if key == "cases":
            if found is not None or text[start : start + 1] != "[":
                return None
            cases: list[CaseOutline] = []
            batches = _batches(text, start, CaseOutline)
            while True:
                try:
                    cases += next(batches)
                except StopIteration as done:
                    end = done.value
                    break
            found = (start, end, cases)
        else:
            _, end = _decoder.raw_decode(text, start)
        step = _send(keys, end)
    return found


def _cases_start(text: str) -> int | None:
    """Where the first top-level ``cases`` array starts (the values before it stepped over)."""
    try:
        keys = _keys(text)
        step = next(keys, None)
        while step is not None:
            key, start = step
            if key == "cases":
                return start if text[start : start + 1] == "[" else None
            _, end = _decoder.raw_decode(text, start)
            step = _send(keys, end)
    except ValueError:
        return None
    return None


def _send(keys: Generator[tuple[str, int], int, None], end: int) -> tuple[str, int] | None:
    try:
        return keys.send(end)
    except StopIteration:
        return None


def _batches(text: str, index: int, kind: type[Case]) -> Generator[list[Any], None, int]:
    """The cases of the array starting at ``index`` validated as ``kind`` a batch at a time
    (a ``CaseOutline``'s content dropped first); returns where the array ends."""
    adapter = _adapter(kind)
    outline = kind is CaseOutline
    batch: list[Any] = []
    index = _skip(text, index + 1)
    if text[index : index + 1] == "]":
        return index + 1
    while True:
        case, index = _decoder.raw_decode(text, index)
        if outline and type(case) is dict:
            for key in _CONTENT:
                case.pop(key, None)
        batch.append(case)
        if len(batch) == BATCH:
            yield adapter.validate_python(batch)
            batch = []
        index = _skip(text, index)
        if text[index : index + 1] == ",":
            index = _skip(text, index + 1)
            continue
        if text[index : index + 1] != "]":
            raise ValueError("not a JSON array")
        if batch:
            yield adapter.validate_python(batch)
        return index + 1
