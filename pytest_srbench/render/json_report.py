"""The JSON report file: validated against ``ReportModel`` and written atomically, a piece at
a time — the report without its cells, then each cell (``CellOutcome``) as it is read — so
writing it holds one cell beyond the report's summary. The text is exactly what
``json.dumps(report, indent=2, ensure_ascii=False)`` of the validated report would be."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any

from pytest_srbench.core.report.build import PlannedCases
from pytest_srbench.core.report.model import CellOutcome, ReportModel
from pytest_srbench.render.outputs import write_output_chunks

CELLS_KEY = '"cells": []\n}'  # the report's last field, as the header's text ends
CELL_LEVEL = "    "  # a cell's indentation inside the report's "cells" array


def _float(value: float) -> str:
    if math.isfinite(value):
        return float.__repr__(value)
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def indented(value: Any, indent: str = "") -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` of JSON data nested at ``indent``
    (the text of the first line is not indented), without the standard library's slow
    pure-Python indenting encoder."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if kind is float:
        return _float(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return encode_basestring(value)
    if kind is _Written:
        return value.render(indent)  # type: ignore[no-any-return]
    inner = indent + "  "
    if isinstance(value, dict) and all(type(key) is str for key in value):
        if not value:
            return "{}"
        items = [f"{inner}{encode_basestring(k)}: {indented(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + indented(v, inner) for v in value) + "\n" + indent + "]"
    text = json.dumps(value, indent=2, ensure_ascii=False)  # anything unusual: the reference
    return text.replace("\n", "\n" + indent)


CELL_FIELDS = tuple(CellOutcome.model_fields)


def _plain(value: Any) -> bool:
    """JSON data that ``CellOutcome`` validation and dumping leave exactly as they are."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_plain(item) for item in value)
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    return False


def _shaped(cell: Mapping[str, Any]) -> bool:
    """The cell is already what ``CellOutcome`` would dump (the builder's own cells are)."""
    if type(cell) is not dict or tuple(cell) != CELL_FIELDS:
        return False
    # texts, optional texts, then finite seconds (each field named: read for every cell)
    if not (
        type(cell["case_id"]) is str
        and type(cell["target_id"]) is str
        and type(cell["benchmark"]) is str
        and type(cell["status"]) is str
    ):
        return False
    answer_status, error = cell["answer_status"], cell["error"]
    if (answer_status is not None and type(answer_status) is not str) or (
        error is not None and type(error) is not str
    ):
        return False
    for value in (cell["latency_s"], cell["ttft_s"], cell["cost_usd"]):
        if value is not None and (type(value) is not float or not math.isfinite(value)):
            return False
    correct = cell["correct"]
    answer = cell["answer"]
    embedding = cell["embedding"]
    return (
        (correct is None or type(correct) is bool)
        and (answer is None or type(answer) is str or _plain(answer))
        and (embedding is None or (type(embedding) is dict and _plain(embedding)))
    )


def _shaped_text(cell: Mapping[str, Any]) -> str:
    """``indented`` of a shaped cell at the cells' level, written out field by field."""
    inner = CELL_LEVEL + "  "
    correct = cell["correct"]
    answer = cell["answer"]
    if answer is None or type(answer) is str:  # what indented writes of them, without a call
        answer_text = "null" if answer is None else encode_basestring(answer)
    else:
        answer_text = indented(answer, inner)
    answer_status = cell["answer_status"]
    error = cell["error"]
    latency = cell["latency_s"]
    ttft = cell["ttft_s"]
    cost = cell["cost_usd"]
    embedding = cell["embedding"]
    # (each null, text and number spelled out here: one call fewer per field and cell)
    return (
        f'{CELL_LEVEL}{{\n{inner}"case_id": {encode_basestring(cell["case_id"])},\n'
        f'{inner}"target_id": {encode_basestring(cell["target_id"])},\n'
        f'{inner}"benchmark": {encode_basestring(cell["benchmark"])},\n'
        f'{inner}"status": {encode_basestring(cell["status"])},\n'
        f'{inner}"correct": {"null" if correct is None else "true" if correct else "false"},\n'
        f'{inner}"answer": {answer_text},\n'
        f'{inner}"answer_status": '
        f"{'null' if answer_status is None else encode_basestring(answer_status)},\n"
        f'{inner}"error": {"null" if error is None else encode_basestring(error)},\n'
        f'{inner}"latency_s": {"null" if latency is None else float.__repr__(latency)},\n'
        f'{inner}"ttft_s": {"null" if ttft is None else float.__repr__(ttft)},\n'
        f'{inner}"cost_usd": {"null" if cost is None else float.__repr__(cost)},\n'
        f'{inner}"embedding": {"null" if embedding is None else indented(embedding, inner)}\n'
        f"{CELL_LEVEL}}}"
    )


def shaped_cell(cell: Mapping[str, Any]) -> Mapping[str, Any]:
    """A cell as the report file holds it (validated by ``CellOutcome`` unless it already is)."""
    return cell if _shaped(cell) else CellOutcome.model_validate(cell).model_dump(mode="json")


def cell_text(cell: Mapping[str, Any]) -> str:
    """One cell, validated, as its text inside the report's "cells" array (indented): exactly
    ``indented`` of ``CellOutcome``'s dump, which a cell already in that shape skips."""
    if _shaped(cell):
        return _shaped_text(cell)
    shaped = CellOutcome.model_validate(cell).model_dump(mode="json")
    return CELL_LEVEL + indented(shaped, CELL_LEVEL)


def cell_texts(cells: Iterable[Mapping[str, Any]]) -> Iterator[str]:
    """The text of each cell: already rendered by a cells file, or rendered now."""
    texts = getattr(cells, "texts", None)
    if texts is not None:
        yield from texts()
        return
    for cell in cells:
        yield cell_text(cell)


class ReportHead:
    """A validated report's text up to its cells, held as the text before the plan's case
    list, that list, and the text after it: the list is written out case by case each time
    the head is (at 100,000 cases it is 22 MB of text that no file needs at once)."""

    __slots__ = ("after", "before", "cases", "indent")

    def __init__(self, before: str, cases: Sequence[Mapping[str, Any]], indent: str, after: str):
        self.before = before
        self.cases = cases
        self.indent = indent
        self.after = after

    def pieces(self) -> Iterator[str]:
        yield self.before
        yield from _planned_cases_pieces(self.cases, self.indent)
        yield self.after


class SavedReport(dict[str, Any]):
    """A report with its validated head (``head_pieces``: as read back from a saved report, or
    as the run that built it validated it): serialising it again only copies text. Setting a
    field (``report["gate"] = …``) drops the head; its sections are not to be changed in
    place."""

    def __init__(self, report: Mapping[str, Any], head: str | ReportHead) -> None:
        super().__init__(report)
        self.head: str | ReportHead | None = head

    def __setitem__(self, key: str, value: Any) -> None:
        self.head = None
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.head = None
        super().__delitem__(key)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.head = None
        super().update(*args, **kwargs)


PLANNED_CASE_FIELDS = ("id", "benchmark", "repeat_of")
_CASES_BATCH = 1000  # planned cases per piece of text


def _planned_cases_shaped(cases: Any) -> bool:
    """``plan.cases`` is already what ``PlannedCase`` validation would dump (the builder's
    list is: one entry per planned case, tens of thousands in a large run)."""
    if isinstance(cases, PlannedCases):
        return True  # made in that shape (each entry checks its repeat_of)
    if type(cases) is not list:
        return False
    for case in cases:
        if type(case) is not dict or tuple(case) != PLANNED_CASE_FIELDS:
            return False
        repeat_of = case["repeat_of"]
        if type(case["id"]) is not str or type(case["benchmark"]) is not str:
            return False
        if repeat_of is not None and type(repeat_of) is not str:
            return False
    return True


class _Written:
    """Text already in its final form, placed into a value that ``indented`` writes."""

    __slots__ = ("render",)

    def __init__(self, render: Callable[[str], str]) -> None:
        self.render = render  # the text at an indentation (the value's own line is not indented)


def _planned_cases_pieces(cases: Iterable[Mapping[str, Any]], indent: str) -> Iterator[str]:
    """``indented`` of a shaped ``plan.cases`` list, written out a batch of cases at a time."""
    inner = indent + "  "
    field = inner + "  "
    batch: list[str] = []
    started = False
    rows = (
        cases.fields()
        if isinstance(cases, PlannedCases)
        else ((case["id"], case["benchmark"], case["repeat_of"]) for case in cases)
    )
    for case_id, benchmark, repeat_of in rows:
        batch.append(
            f'{inner}{{\n{field}"id": {encode_basestring(case_id)},\n'
            f'{field}"benchmark": {encode_basestring(benchmark)},\n'
            f'{field}"repeat_of": {"null" if repeat_of is None else encode_basestring(repeat_of)}'
            f"\n{inner}}}"
        )
        if len(batch) == _CASES_BATCH:
            yield (",\n" if started else "[\n") + ",\n".join(batch)
            started = True
            batch.clear()
    if batch:
        yield (",\n" if started else "[\n") + ",\n".join(batch)
        started = True
    yield "\n" + indent + "]" if started else "[]"


def validated_head(report: Mapping[str, Any]) -> dict[str, Any]:
    """The report without its cells, validated by ``ReportModel`` and dumped as JSON data; a
    plan's case list already in shape is not validated case by case but kept as it is (the
    rest of the report is; the text written is the same either way)."""
    plan = report.get("plan")
    cases = plan.get("cases") if isinstance(plan, dict) else None
    if isinstance(plan, dict) and cases and _planned_cases_shaped(cases):
        lean = {**report, "cells": [], "plan": {**plan, "cases": []}}
        head = ReportModel.model_validate(lean).model_dump(mode="json")
        head["plan"]["cases"] = cases
        return head
    return ReportModel.model_validate({**report, "cells": []}).model_dump(mode="json")


_CASES_MARK = "\x00planned cases\x00"  # no JSON string value writes a raw NUL


def _head(report: Mapping[str, Any]) -> str | ReportHead:
    head = validated_head(report)
    plan = head.get("plan")
    cases = plan["cases"] if isinstance(plan, dict) else None
    indents: list[str] = []

    def mark(indent: str) -> str:
        indents.append(indent)
        return _CASES_MARK

    if isinstance(plan, dict) and cases:
        plan["cases"] = _Written(mark)
    text = indented(head)
    if not text.endswith(CELLS_KEY):  # pragma: no cover - "cells" is the model's last field
        raise AssertionError("ReportModel must end with its cells")
    text = text[: -len("[]\n}")]
    if not indents or not cases:
        return text
    before, after = text.split(_CASES_MARK)
    return ReportHead(before, cases, indents[0], after)


def head_pieces(report: Mapping[str, Any]) -> Iterable[str]:
    """The report validated and serialised up to its cells (``"cells": `` is its end), a piece
    at a time."""
    head = report.head if isinstance(report, SavedReport) and report.head is not None else None
    if head is None:
        head = _head(report)
    return (head,) if isinstance(head, str) else head.pieces()


def report_chunks(report: Mapping[str, Any]) -> Iterator[str]:
    """Validate and serialise a report, a piece at a time."""
    cells = report["cells"]
    yield from head_pieces(report)
    first = True
    for chunk in cell_texts(cells):
        yield ("[\n" if first else ",\n") + chunk
        first = False
    yield "[]\n}\n" if first else "\n  ]\n}\n"


def report_json(report: Mapping[str, Any]) -> str:
    """Validate and serialise a report."""
    return "".join(report_chunks(report))


def write_report(report: Mapping[str, Any], path: Path) -> None:
    """Write atomically; an unwritable path raises ``OutputError`` (one line)."""
    write_output_chunks(path, report_chunks(report))


def report_schema() -> dict[str, Any]:
    """JSON Schema of the report (exported to ``schemas/report.schema.json``)."""
    return ReportModel.model_json_schema()


def with_head(report: dict[str, Any]) -> dict[str, Any]:
    """``report`` carrying its validated head text, so that each file written from it (the
    run's ``report.json``, the saved report, the user's ``--json``) validates it once."""
    if isinstance(report, SavedReport) and report.head is not None:
        return report
    return SavedReport(report, _head(report))
