"""The controlled benchmark dataset format: RAG and agent cases, and parsing one file (pure).

A dataset file holds one JSON object (UTF-8, an optional BOM tolerated)::

    {"dataset_id": "rag-smoke", "kind": "rag", "version": "1", "description": "...",
     "corpus": "notes-v1", "cases": [{"case_id": "q1", "query": "...",
     "expected_note_ids": ["n1"], ...}]}

``cases`` holds ``RagCase`` objects when ``kind`` is "rag" and ``AgentCase`` objects when it
is "agent"; there is at least one, and case ids are unique. Validation is strict: unknown
fields are rejected and no value is coerced ("true" is not a boolean, 1 is not a string).
``parse_dataset`` turns every fault (bad UTF-8, bad JSON, duplicate keys, NaN/Infinity, a
non-object top level, a schema error, a ``dataset_id`` other than the file's stem) into a
``BenchmarkError("BENCHMARK_DATASET_INVALID", ...)`` that says where the fault is.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from pytest_srbench.core.benchmark_errors import BenchmarkError
from pytest_srbench.core.canonical import StrictJsonError, strict_json_loads
from pytest_srbench.core.plan.agent_case_spec import AgentCaseSpec, ExpectedToolCall

DATASET_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
CASE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
MAX_REPORTED_FAULTS = 5


def _non_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank_string", "must not be empty or blank")
    return value


NonBlank = Annotated[str, AfterValidator(_non_blank)]
CaseId = Annotated[str, Field(pattern=CASE_ID_PATTERN)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class RagCase(_Strict):
    """A retrieval case: the query and the notes (and blocks, for citations) it should find."""

    case_id: CaseId
    query: NonBlank
    expected_note_ids: Annotated[list[NonBlank], Field(min_length=1)]
    expected_block_ids: list[NonBlank] = Field(default_factory=list)
    citation_required: bool = False
    tags: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _citations_need_blocks(self) -> RagCase:
        if self.citation_required and not self.expected_block_ids:
            raise PydanticCustomError(
                "citation_without_blocks",
                "case '{case_id}': citation_required is true but expected_block_ids is empty, "
                "so its citation hit rate could not be computed",
                {"case_id": self.case_id},
            )
        return self


class ToolCallExpectation(_Strict):
    """One tool call an agent case expects; only the declared ``arguments`` keys are checked.
    ``reference_arguments`` are extra arguments a scripted (simulated) agent may send to make
    the call complete; the judge never checks them."""

    name: NonBlank
    arguments: dict[str, Any] = Field(default_factory=dict)
    reference_arguments: dict[str, Any] = Field(default_factory=dict)


class AgentCase(_Strict):
    """A tool-using agent case. ``approved_tools`` are the tools this case explicitly approves;
    nothing else is ever approved automatically."""

    case_id: CaseId
    prompt: NonBlank
    system: str | None = None
    expected_tool_calls: list[ToolCallExpectation] = Field(default_factory=list)
    required_substrings: list[NonBlank] = Field(default_factory=list)
    required_citations: list[NonBlank] = Field(default_factory=list)
    expected_task_count: Annotated[int, Field(ge=0)] | None = None
    approved_tools: list[NonBlank] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)

    def spec(self) -> AgentCaseSpec:
        """What ``agent_metrics.judge_agent_case`` checks for this case."""
        return AgentCaseSpec(
            case_id=self.case_id,
            expected_tool_calls=[
                ExpectedToolCall(name=call.name, arguments=dict(call.arguments))
                for call in self.expected_tool_calls
            ],
            required_substrings=list(self.required_substrings),
            required_citations=list(self.required_citations),
            expected_task_count=self.expected_task_count,
        )


def _describe(error: ValidationError) -> list[str]:
    faults = []
    for item in error.errors(include_url=False):
        # the per-case faults already say where they are
        located = item["loc"] if item["type"] != "cases_invalid" else ()
        where = ".".join(str(part) for part in located)
        faults.append(f"{where}: {item['msg']}" if where else item["msg"])
    return faults


class BenchmarkDataset(_Strict):
    """One controlled dataset; ``cases`` are validated as ``kind`` says."""

    dataset_id: Annotated[str, Field(pattern=DATASET_ID_PATTERN)]
    kind: Literal["rag", "agent"]
    version: NonBlank
    description: str = ""
    corpus: NonBlank | None = None
    cases: list[RagCase] | list[AgentCase]

    @field_validator("cases", mode="before")
    @classmethod
    def _cases_by_kind(cls, value: Any, info: ValidationInfo) -> Any:
        kind = info.data.get("kind")
        if kind not in ("rag", "agent"):
            raise PydanticCustomError("cases_unchecked", "not checked: kind is invalid")
        if not isinstance(value, list):
            raise PydanticCustomError("cases_type", "must be a list of case objects")
        if not value:
            raise PydanticCustomError("cases_empty", "a dataset needs at least one case")
        model: type[RagCase] | type[AgentCase] = RagCase if kind == "rag" else AgentCase
        parsed: list[RagCase | AgentCase] = []
        faults: list[str] = []
        for index, item in enumerate(value):
            raw_id = item.get("case_id") if isinstance(item, dict) else None
            label = f"case #{index}" + (f" ({raw_id!r})" if isinstance(raw_id, str) else "")
            if not isinstance(item, dict):
                faults.append(f"{label}: must be an object")
                continue
            try:
                parsed.append(model.model_validate(item))
            except ValidationError as error:
                faults.extend(f"{label}: {fault}" for fault in _describe(error))
        if not faults:
            seen: set[str] = set()
            for case in parsed:
                if case.case_id in seen:
                    faults.append(f"duplicate case_id {case.case_id!r}")
                seen.add(case.case_id)
        if faults:
            shown = "; ".join(faults[:MAX_REPORTED_FAULTS])
            more = len(faults) - MAX_REPORTED_FAULTS
            detail = shown + (f"; and {more} more" if more > 0 else "")
            raise PydanticCustomError("cases_invalid", "{detail}", {"detail": detail})
        return parsed


def _invalid(dataset_id: str, detail: str) -> BenchmarkError:
    return BenchmarkError("BENCHMARK_DATASET_INVALID", f"dataset {dataset_id!r:.140}: {detail}")


def parse_dataset(raw: bytes, expected_id: str) -> BenchmarkDataset:
    """Parse and validate one dataset file's bytes; its ``dataset_id`` must be ``expected_id``
    (the file's stem). Raises ``BenchmarkError("BENCHMARK_DATASET_INVALID")`` otherwise."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _invalid(expected_id, f"not valid UTF-8 (byte {error.start})") from None
    text = text.removeprefix("\ufeff")
    try:
        data = strict_json_loads(text)
    except json.JSONDecodeError as error:
        detail = f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
        raise _invalid(expected_id, detail) from None
    except StrictJsonError as error:
        raise _invalid(expected_id, f"not valid JSON ({error})") from None
    if not isinstance(data, dict):
        kind = "an array" if isinstance(data, list) else type(data).__name__
        raise _invalid(expected_id, f"top level must be a JSON object, got {kind}")
    try:
        dataset = BenchmarkDataset.model_validate(data)
    except ValidationError as error:
        raise _invalid(expected_id, "schema error: " + "; ".join(_describe(error))) from None
    if dataset.dataset_id != expected_id:
        raise _invalid(
            expected_id,
            f"dataset_id {dataset.dataset_id!r} inside the file differs from the file name",
        )
    return dataset
