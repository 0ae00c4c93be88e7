"""The HTTP API's request and response shapes (docs/service-api.md), published in OpenAPI.

Rows that are the store's own records (results, calls, events, reports) stay open objects; the
shapes the service composes are closed models.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from pytest_srbench.service.worker import RunRequest

KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorResponse(BaseModel):
    error: ErrorBody


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    store: str
    active_runs: int
    max_runs: int


class DatasetView(BaseModel):
    id: str
    kind: Literal["suite", "rag", "agent"]
    benchmark: str
    version: str
    source: str
    cases: int
    profiles: dict[str, int] = Field(
        description="cases a run of each profile takes (0: the dataset is too small for it)"
    )
    location: Literal["shipped", "project"]
    description: str | None = None


class DatasetList(BaseModel):
    datasets: list[DatasetView]
    total: int


class ProfileCoverage(BaseModel):
    needed: int = Field(description="cases the profile selects")
    available: int = Field(description="of those, how many the dataset holds")


class GroupCount(BaseModel):
    group: str
    cases: int


class DatasetDetail(DatasetView):
    coverage: dict[str, ProfileCoverage]
    groups: list[GroupCount]


class CaseView(BaseModel):
    id: str
    benchmark: str
    prompt: str = Field(description="the first user message (a RAG case: its query), ≤ 2,000 chars")
    group: str
    tags: list[str]


class CasePage(BaseModel):
    cases: list[CaseView]
    page: int
    pages: int
    total: int


class TargetView(BaseModel):
    id: str
    kind: str
    model: str
    simulated: bool
    session_mode: str
    priced: bool


class TargetList(BaseModel):
    targets: list[TargetView]


class PlanReview(BaseModel):
    model_config = ConfigDict(extra="allow")

    plan_sha256: str
    case_sha256: str
    profile: str
    mode: str
    cells: int
    targets: list[dict[str, Any]]
    benchmarks: list[dict[str, Any]]
    limits: dict[str, Any]
    sampling: dict[str, Any]
    max_cost_usd: float | None


class CreateRun(RunRequest):
    """A run request plus the optional idempotency key."""

    idempotency_key: str | None = Field(None, pattern=KEY_PATTERN)

    def request(self) -> RunRequest:
        return RunRequest.model_validate(self.model_dump(exclude={"idempotency_key"}))


class RunTarget(BaseModel):
    id: str
    kind: str
    model: str


class Progress(BaseModel):
    completed: int
    failed: int = Field(description="cells that ended failed, cancelled or sent_unknown")
    running: int
    pending: int


RunKind = Literal["rag", "agent", "suite", "mixed"]


class RunView(BaseModel):
    id: str
    name: str
    status: str
    mode: str
    profile: str
    kind: RunKind = Field(
        description="rag / agent when every dataset of the plan is of that kind, suite when "
        "none is a RAG or agent dataset, mixed otherwise"
    )
    created_at: str
    updated_at: str
    error_code: str | None = Field(
        description="BENCHMARK_RUN_FAILED for a failed or interrupted run, else null"
    )
    error: str | None = Field(description="the run's safe error message (no server paths)")
    parent_run_id: str | None
    targets: list[RunTarget]
    planned_cells: int
    progress: Progress
    source: str
    config_snapshot: dict[str, Any] | None = Field(
        description="the static config snapshot of a RAG / agent plan ({rag, agent}), as the "
        "report's sections repeat it; null for a plan of plain suites"
    )


class RunEnvelope(BaseModel):
    run: RunView


class RunList(BaseModel):
    runs: list[RunView]
    total: int


class ResultsPage(BaseModel):
    results: list[dict[str, Any]]
    next_cursor: int | None


class CallsPage(BaseModel):
    calls: list[dict[str, Any]]
    next_cursor: int | None


class CallEnvelope(BaseModel):
    call: dict[str, Any]


class EventsPage(BaseModel):
    events: list[dict[str, Any]]
    next_cursor: int | None


class WorkerLog(BaseModel):
    text: str = Field(description="whole lines of the log, server paths cut, keys redacted")
    offset: int = Field(description="the byte where text starts")
    next_offset: int = Field(description="the byte after text: the offset of the next page")
    size: int = Field(description="the log's size in bytes (0: the run has no worker log)")


class RecipeList(BaseModel):
    recipes: list[dict[str, Any]]


class RecoverBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: dict[str, Any]
    idempotency_key: str = Field(pattern=KEY_PATTERN)
    acknowledge_new_attempt: bool = False
