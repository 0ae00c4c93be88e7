"""Run routes: create, list, read, cancel, and page through a run's results, calls and
events (also as Server-Sent Events), its evidence, report, router recipes and worker log.

The Benchmark Service's own paths (``/api/benchmarks/…``) are thin aliases of these routes,
kept out of the OpenAPI document (``alias``); its create routes take one kind of dataset."""

from __future__ import annotations

import itertools
import re
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypeVar

import anyio
import orjson
from fastapi import APIRouter, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from pytest_srbench.app.reports import report_from_store
from pytest_srbench.core.calls.recipes import recipe_summary
from pytest_srbench.core.models import RunStatus
from pytest_srbench.core.report.metrics import answer_latency
from pytest_srbench.render.json_report import report_chunks
from pytest_srbench.service.connections import StreamSlots
from pytest_srbench.service.events import run_events
from pytest_srbench.service.run_views import RunViews, require_run, run_not_found
from pytest_srbench.service.schemas import (
    KEY_PATTERN,
    CallEnvelope,
    CallsPage,
    CreateRun,
    ErrorResponse,
    EventsPage,
    RecipeList,
    ResultsPage,
    RunEnvelope,
    RunKind,
    RunList,
    WorkerLog,
)
from pytest_srbench.service.worker import WORKER_LOG, RunService, ServiceError, read_log
from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.store.run_listing import call_run_id

Limit = Annotated[int, Query(ge=1, le=500)]
IdempotencyHeader = Annotated[str | None, Header(alias="Idempotency-Key", max_length=128)]
After = Annotated[int, Query(ge=0, le=2**62)]  # the store's cursors are signed 64-bit
HEAVY_CALL_FIELDS = ("request", "final", "reasoning", "raw_usage", "tool_calls")
MAX_LOG_PAGE = 65_536
Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])
ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "BENCHMARK_UNAUTHORIZED (a token is set)"},
    403: {
        "model": ErrorResponse,
        "description": "BENCHMARK_FORBIDDEN_HOST, BENCHMARK_CROSS_ORIGIN",
    },
    404: {"model": ErrorResponse, "description": "BENCHMARK_RUN_NOT_FOUND"},
    413: {"model": ErrorResponse, "description": "BENCHMARK_REQUEST_TOO_LARGE"},
    422: {"model": ErrorResponse, "description": "BENCHMARK_INVALID_REQUEST"},
    500: {"model": ErrorResponse, "description": "BENCHMARK_INTERNAL"},
}
CREATE_ERRORS: dict[int | str, dict[str, Any]] = {
    409: {"model": ErrorResponse,
          "description": "BENCHMARK_INDEX_INCOMPATIBLE, or a key bound to another plan"},
    429: {"model": ErrorResponse, "description": "BENCHMARK_CAPACITY_EXCEEDED (Retry-After)",
          "headers": {"Retry-After": {"schema": {"type": "integer"}}}},
    503: {"model": ErrorResponse, "description": "BENCHMARK_RUN_FAILED: the worker could not start"},
}  # fmt: skip
STREAM_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "a Last-Event-ID outside [0, 2^62]"},
    429: {"model": ErrorResponse, "description": "BENCHMARK_TOO_MANY_STREAMS (Retry-After)",
          "headers": {"Retry-After": {"schema": {"type": "integer"}}}},
    503: {"model": ErrorResponse, "description": "BENCHMARK_UNAVAILABLE: too many streams",
          "headers": {"Retry-After": {"schema": {"type": "integer"}}}},
}  # fmt: skip
JSON_OBJECT: dict[str, Any] = {"content": {"application/json": {"schema": {"type": "object"}}}}


class JsonText(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return content if isinstance(content, bytes) else orjson.dumps(content)


@contextmanager
def opened(service: RunService) -> Iterator[Store]:
    """This request's store connection, closed when the request is done."""
    store = service.store()
    try:
        yield store
    finally:
        store.close()


def page(rows: list[dict[str, Any]], limit: int, cursor: str) -> tuple[list[dict[str, Any]], Any]:
    """A page of ``limit`` rows (``limit + 1`` were read) and the cursor of the next one."""
    if len(rows) > limit:
        return rows[:limit], rows[limit - 1][cursor]
    return rows, None


def alias(
    router: APIRouter, method: str, path: str, **options: Any
) -> Callable[[Endpoint], Endpoint]:
    """Serve the decorated route at ``path`` too (a Benchmark Service path), left out of the
    OpenAPI document."""

    def register(endpoint: Endpoint) -> Endpoint:
        router.add_api_route(path, endpoint, methods=[method], include_in_schema=False, **options)
        return endpoint

    return register


def elapsed(started: Any) -> float | None:
    if not isinstance(started, str):
        return None
    try:
        began = datetime.fromisoformat(started)
    except ValueError:
        return None
    return round((datetime.now(UTC) - began).total_seconds(), 3)


MAX_SEQUENCE = 2**62


def last_event_id(header: str | None, query: int | None) -> int:
    """The resume cursor: ``Last-Event-ID`` (a sequence in [0, 2^62], else 400) or the query."""
    if header is None:
        return query or 0
    text = header.strip()
    value = int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else -1
    if not 0 <= value <= MAX_SEQUENCE:
        raise ServiceError(
            "BENCHMARK_INVALID_REQUEST", 400, "Last-Event-ID must be a sequence in [0, 2^62]"
        )
    return value


def one_call(store: Store, run_id: str, call_id: str) -> dict[str, Any]:
    """The receipt of call ``call_id`` of run ``run_id`` (404: no such run, or no such call
    in it)."""
    require_run(store, run_id)
    call = store.get_call(call_id) if call_run_id(store, call_id) == run_id else None
    if call is None:
        raise ServiceError(
            "BENCHMARK_CALL_NOT_FOUND", 404, f"no call {call_id[:200]!r} in run {run_id}"
        )
    return call


def runs_router(service: RunService, views: RunViews, token: str | None = None) -> APIRouter:
    """The run routes under ``/api`` and their Benchmark Service aliases, added group by group
    in the order the OpenAPI document lists them (``token``: redacted from worker logs)."""
    router = APIRouter(prefix="/api", tags=["runs"], responses=ERRORS)
    add_create_routes(router, service, views)
    add_run_routes(router, service, views)
    add_report_route(router, service)
    add_result_and_call_routes(router, service)
    add_event_routes(router, service)
    add_log_and_recipe_routes(router, service, token)
    return router


def add_create_routes(router: APIRouter, service: RunService, views: RunViews) -> None:
    """``POST /api/runs`` and the Benchmark Service's create routes of one kind of dataset."""

    def start(
        body: CreateRun, response: Response, header: str | None, kind: str | None = None
    ) -> dict[str, Any]:
        key = body.idempotency_key
        if header is not None:
            if not re.fullmatch(KEY_PATTERN, header) or (key is not None and key != header):
                raise ServiceError("BENCHMARK_INVALID_REQUEST", 422,
                                   "Idempotency-Key must be 1-128 characters of A-Z a-z 0-9 . _ "
                                   ": - (and equal the body's idempotency_key when both are given)")  # fmt: skip
            key = header
        run, created = service.submit(body.request(), key, kind)
        if not created:
            response.status_code = 200
        with opened(service) as store:
            return {"run": views.one(store, run.id)}

    @router.post("/runs", status_code=202, response_model=RunEnvelope, responses=CREATE_ERRORS)
    def create_run(
        body: CreateRun, response: Response, idempotency_key: IdempotencyHeader = None
    ) -> dict[str, Any]:
        """Create the run ``queued`` and start its worker; the same key (``Idempotency-Key``
        header or ``idempotency_key`` body field) and plan answer 200."""
        return start(body, response, idempotency_key)

    @router.post(
        "/benchmarks/rag/runs", status_code=202, include_in_schema=False, response_model=RunEnvelope
    )
    def create_rag_run(
        body: CreateRun, response: Response, idempotency_key: IdempotencyHeader = None
    ) -> dict[str, Any]:
        """``POST /api/runs`` limited to RAG datasets (422 for a benchmark of another kind)."""
        return start(body, response, idempotency_key, "rag")

    @router.post(
        "/benchmarks/agent/runs",
        status_code=202,
        include_in_schema=False,
        response_model=RunEnvelope,
    )
    def create_agent_run(
        body: CreateRun, response: Response, idempotency_key: IdempotencyHeader = None
    ) -> dict[str, Any]:
        """``POST /api/runs`` limited to agent datasets (422 for a benchmark of another kind)."""
        return start(body, response, idempotency_key, "agent")


def add_run_routes(router: APIRouter, service: RunService, views: RunViews) -> None:
    """List runs, read one, cancel one."""

    @router.get("/runs", response_model=RunList)
    @alias(router, "GET", "/benchmarks/runs", response_model=RunList)
    def list_runs(
        name: Annotated[str | None, Query(max_length=200)] = None,
        model: Annotated[str | None, Query(max_length=200)] = None,
        status: RunStatus | None = None,
        mode: Literal["live", "preview", "replay"] | None = None,
        kind: RunKind | None = None,
        limit: Limit = 100,
        offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    ) -> dict[str, Any]:
        """Runs newest first (``name``: plan name substring, ``model``: any target's model or id,
        ``kind``: rag, agent, suite or mixed)."""
        with opened(service) as store:
            runs, total = views.page(store, name=name, model=model, status=status, mode=mode,
                                     kind=kind, limit=limit, offset=offset)  # fmt: skip
        return {"runs": runs, "total": total}

    @router.get("/runs/{run_id}", response_model=RunEnvelope)
    @alias(router, "GET", "/benchmarks/runs/{run_id}", response_model=RunEnvelope)
    def get_run(run_id: str) -> dict[str, Any]:
        with opened(service) as store:
            return {"run": views.one(store, run_id)}

    @router.post("/runs/{run_id}/cancel", response_model=RunEnvelope)
    @alias(router, "POST", "/benchmarks/runs/{run_id}/cancel", response_model=RunEnvelope)
    def cancel_run(run_id: str) -> dict[str, Any]:
        """Ask the run's processes to stop; it ends ``cancelled`` (a terminal run is unchanged)."""
        service.cancel(run_id)
        with opened(service) as store:
            return {"run": views.one(store, run_id)}


def add_report_route(router: APIRouter, service: RunService) -> None:
    """A run's full report, streamed."""

    @router.get(
        "/runs/{run_id}/report",
        response_class=JsonText,
        responses={
            200: {**JSON_OBJECT, "description": "the full report (as --srbench-json writes it)"}
        },
    )
    @alias(router, "GET", "/benchmarks/runs/{run_id}/report", response_class=JsonText)
    def get_report(run_id: str) -> Response:
        with opened(service) as store:
            require_run(store, run_id)
            report = report_from_store(store, run_id)
        # written a cell at a time from the report's cells file; the summary is validated
        # (and may fail) before the response starts
        chunks = report_chunks(report)
        head = next(chunks)
        return StreamingResponse(
            (chunk.encode("utf-8") for chunk in itertools.chain([head], chunks)),
            media_type=JsonText.media_type,
        )


def add_result_and_call_routes(router: APIRouter, service: RunService) -> None:
    """Pages of a run's results and calls, one whole call and its evidence."""

    @router.get("/runs/{run_id}/results", response_model=ResultsPage)
    def get_results(run_id: str, after: After = 0, limit: Limit = 100) -> dict[str, Any]:
        with opened(service) as store:
            require_run(store, run_id)
            rows, cursor = page(store.results(run_id, after=after, limit=limit + 1), limit, "_row")
        for row in rows:  # the latency the report shows for the cell
            row["answer_latency_s"] = answer_latency(row)
        return {"results": rows, "next_cursor": cursor}

    @router.get("/runs/{run_id}/calls", response_model=CallsPage)
    def get_calls(
        run_id: str, after: After = 0, limit: Limit = 100, active: bool = False
    ) -> dict[str, Any]:
        """Calls in journal order without their bodies; ``active``: those in flight."""
        with opened(service) as store:
            require_run(store, run_id)
            found = store.calls(run_id, active=active, after=after, limit=limit + 1)
        rows, cursor = page(found, limit, "_seq")
        for row in rows:
            for key in HEAVY_CALL_FIELDS:
                row.pop(key, None)
            if active:
                row["elapsed_s"] = elapsed(row.get("started_at"))
        return {"calls": rows, "next_cursor": cursor}

    @router.get("/runs/{run_id}/calls/{call_id}", response_model=CallEnvelope)
    def get_call(run_id: str, call_id: str) -> dict[str, Any]:
        """One whole receipt."""
        with opened(service) as store:
            return {"call": one_call(store, run_id, call_id)}

    @router.get(
        "/runs/{run_id}/calls/{call_id}/evidence",
        response_class=Response,
        responses={200: {"content": {"text/plain": {}}, "description": "the raw response bytes"}},
    )
    def get_evidence(run_id: str, call_id: str) -> Response:
        with opened(service) as store:
            call = one_call(store, run_id, call_id)
            try:
                data = store.read_evidence(call.get("evidence"))
            except (OSError, StoreError, KeyError, TypeError, ValueError):
                raise ServiceError(
                    "BENCHMARK_CALL_NOT_FOUND", 404, f"call {call_id} has no readable evidence"
                ) from None
        return Response(data, media_type="text/plain; charset=utf-8")


def add_event_routes(router: APIRouter, service: RunService) -> None:
    """A run's events: a page at a time, or as Server-Sent Events (counted: ``StreamSlots``)."""
    slots = StreamSlots()

    @router.get("/runs/{run_id}/events/page", response_model=EventsPage)
    def get_events_page(run_id: str, after: After = 0, limit: Limit = 100) -> dict[str, Any]:
        """Events oldest first; ``next_cursor`` is the last one's ``seq`` when more follow."""
        with opened(service) as store:
            require_run(store, run_id)
            rows, cursor = page(store.events(run_id, after=after, limit=limit + 1), limit, "seq")
        return {"events": rows, "next_cursor": cursor}

    @router.get(
        "/runs/{run_id}/events",
        response_class=StreamingResponse,
        responses={
            200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events"},
            **STREAM_ERRORS,
        },
    )
    @alias(router, "GET", "/benchmarks/runs/{run_id}/events", response_class=StreamingResponse)
    async def stream_events(
        run_id: str,
        request: Request,
        after_sequence: Annotated[int | None, Query(ge=0, le=2**62)] = None,
        last_event_id_header: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
    ) -> StreamingResponse:
        """The run's events as SSE, resumable with ``Last-Event-ID`` or ``after_sequence``."""
        after = last_event_id(last_event_id_header, after_sequence)
        slots.take(run_id)  # 429 / 503 past the caps (connections.py), before any read
        try:
            store = await anyio.to_thread.run_sync(service.store)
            try:
                run = await anyio.to_thread.run_sync(store.get_run, run_id)
            finally:
                await anyio.to_thread.run_sync(store.close)
        except BaseException:
            slots.give_back(run_id)
            raise
        if run is None:
            slots.give_back(run_id)
            raise run_not_found(run_id)
        released = False

        async def release() -> None:
            nonlocal released
            if not released:
                released = True
                slots.give_back(run_id)

        async def counted() -> AsyncIterator[str]:
            try:
                async for text in run_events(store, run_id, after, request.is_disconnected):
                    yield text
            finally:
                await release()

        return StreamingResponse(
            counted(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
            background=BackgroundTask(release),  # also when the stream never started
        )


def add_log_and_recipe_routes(router: APIRouter, service: RunService, token: str | None) -> None:
    """A run's worker log (``token`` and the service's secrets redacted) and router recipes."""

    @router.get("/runs/{run_id}/log", response_model=WorkerLog)
    def get_log(
        run_id: str,
        offset: Annotated[int | None, Query(ge=0, le=2**62)] = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LOG_PAGE)] = MAX_LOG_PAGE,
    ) -> dict[str, Any]:
        """A page of the run's worker log (the tail when ``offset`` is omitted), whole lines,
        server paths cut and keys redacted; a run without a worker log (made by pytest or the
        CLI) reads as empty (``size`` 0)."""
        with opened(service) as store:
            require_run(store, run_id)
            log = store.run_dir(run_id) / WORKER_LOG
        private = [*service.secrets(), *([token] if token else [])]
        return read_log(log, offset, limit, private)

    @router.get("/runs/{run_id}/recipes", response_model=RecipeList)
    def get_recipes(run_id: str) -> dict[str, Any]:
        """The frozen router recipes (redacted) of the run's router targets."""
        with opened(service) as store:
            require_run(store, run_id)
            manifest = store.get_manifest(run_id)
            snapshots = store.recipes(run_id)
        recipes = [snapshots.get(t.id) or recipe_summary(t, None) for t in manifest.targets
                   if t.kind == "mom"]  # fmt: skip
        return {"recipes": recipes}
