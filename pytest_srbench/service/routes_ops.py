"""Operator routes over finished runs: the recovery plan and a recovery child, the usage
reconciliation artifact, and paired comparisons (run ids in the store only, never paths)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Query, Response

from pytest_srbench.app.reconcile import reconcile_usage
from pytest_srbench.app.recovery import create_child, plan_for
from pytest_srbench.app.replay import (
    baseline_options,
    create_replay,
    replay_options,
    review_pair,
)
from pytest_srbench.app.reports import report_from_store
from pytest_srbench.core.compare.runs import ComparisonError, RunSide, compare_many
from pytest_srbench.core.offline.reconcile import ReconcileError
from pytest_srbench.core.offline.recovery import RecoveryError
from pytest_srbench.core.offline.replay import ReplayError
from pytest_srbench.render.compare import comparison_csv
from pytest_srbench.service.routes_runs import ERRORS, JsonText, opened
from pytest_srbench.service.run_views import RunViews, require_run
from pytest_srbench.service.schemas import ErrorResponse, RecoverBody, ReplayBody, RunEnvelope
from pytest_srbench.service.worker import RunService, ServiceError, worker_log
from pytest_srbench.store.base import Store, StoreError

RunId = Annotated[str, Query(min_length=1, max_length=128)]
OptionalRunId = Annotated[str | None, Query(min_length=1, max_length=128)]
CONFLICT: dict[int | str, dict[str, Any]] = {409: {"model": ErrorResponse}}


def rejected(error: RecoveryError) -> ServiceError:
    return ServiceError("BENCHMARK_RECOVERY_REJECTED", 409, str(error))


def check_cells(plan: dict[str, Any]) -> None:
    """A plan's cell lists must be lists of ``{case_id, target_id}`` objects."""
    for key in ("selected_cells", "eligible_cells"):
        cells = plan.get(key)
        if cells is not None and not (
            isinstance(cells, list)
            and all(isinstance(c, dict) and {"case_id", "target_id"} <= set(c) for c in cells)
        ):
            raise rejected(RecoveryError(f"{key}: each cell must be {{case_id, target_id}}"))


def store_side(store: Store, run_id: str) -> RunSide:
    """A comparison side from a run in the store (a client never names a file)."""
    require_run(store, run_id)
    return RunSide.from_report(report_from_store(store, run_id), source="store")


def ops_router(service: RunService, views: RunViews) -> APIRouter:
    router = APIRouter(prefix="/api", tags=["operations"], responses=ERRORS)

    @router.get("/runs/{run_id}/recovery-plan", response_class=JsonText, responses=CONFLICT)
    def recovery_plan(
        run_id: str, mode: Literal["undispatched", "failed"] = "undispatched"
    ) -> JsonText:
        """The read-only recovery plan of a terminal live run (zero model requests)."""
        with opened(service) as store:
            require_run(store, run_id)
            try:
                return JsonText(plan_for(store, run_id, mode))
            except RecoveryError as error:
                raise rejected(error) from None

    @router.post(
        "/runs/{run_id}/recover", status_code=202, response_model=RunEnvelope, responses=CONFLICT
    )
    def recover(run_id: str, body: RecoverBody, response: Response) -> dict[str, Any]:
        """Create the recovery child of a reviewed plan and start it like any run; the same
        key and plan answer 200 with the same child."""
        with opened(service) as store:
            require_run(store, run_id)
            if body.plan.get("parent_run_id") != run_id:
                raise rejected(RecoveryError("Recovery plan belongs to another parent run"))
            check_cells(body.plan)
            if len(service.active_runs()) >= service.max_runs:
                raise ServiceError("BENCHMARK_CAPACITY_EXCEEDED", 429,
                                   f"all {service.max_runs} run slots hold active runs")  # fmt: skip
            try:
                child, created = create_child(
                    store, run_id, body.plan, idempotency_key=body.idempotency_key,
                    acknowledge_new_attempt=body.acknowledge_new_attempt,
                )  # fmt: skip
            except RecoveryError as error:
                raise rejected(error) from None
            if created:
                store.set_runner(child.id, {"source": "service"})
                plan_path = store.run_dir(run_id) / f"recovery-{body.idempotency_key}.json"
                plan_path.parent.mkdir(parents=True, exist_ok=True)
                plan_path.write_bytes(orjson.dumps(body.plan, option=orjson.OPT_INDENT_2))
                log = worker_log(store, child.id)
                process = service.start_recovery(
                    plan_path, body.idempotency_key, body.acknowledge_new_attempt, log
                )
                service.track(child.id, process, log)
            else:
                response.status_code = 200
            return {"run": views.one(store, child.id)}

    @router.get("/replay-options", response_class=JsonText, tags=["replay"])
    def get_replay_options(
        baseline_run_id: OptionalRunId = None,
        preview_run_id: OptionalRunId = None,
        after: OptionalRunId = None,
        limit: Annotated[int, Query(ge=1, le=100)] = 20,
    ) -> JsonText:
        """Exactly one of ``baseline_run_id`` and ``preview_run_id``. With a live baseline: the
        completed previews it could be replayed with (``options[].preview_run_id``); with a
        preview (the reverse lookup): the completed live runs it could be replayed on
        (``options[].baseline_run_id``; recovery children are left out). Newest first, each
        with its plan ``name`` and its review's verdict: ``eligible``, run-level ``problems``
        and cell counts. ``after``: the ``next_cursor`` of the page before."""
        if (baseline_run_id is None) == (preview_run_id is None):
            raise ServiceError("BENCHMARK_INVALID_REQUEST", 422,
                               "give exactly one of baseline_run_id and preview_run_id")  # fmt: skip
        with opened(service) as store:
            if baseline_run_id is not None:
                require_run(store, baseline_run_id)
                found = replay_options(store, baseline_run_id, after=after, limit=limit)
            else:
                assert preview_run_id is not None
                require_run(store, preview_run_id)
                found = baseline_options(store, preview_run_id, after=after, limit=limit)
            return JsonText(found)

    @router.get("/replays/review", response_class=JsonText, tags=["replay"])
    def get_replay_review(baseline_run_id: RunId, preview_run_id: RunId) -> JsonText:
        """Every routed cell of the preview with the baseline call it would take, or its
        ``replay_ineligible`` reason (read-only, zero model requests)."""
        with opened(service) as store:
            require_run(store, baseline_run_id)
            require_run(store, preview_run_id)
            return JsonText(review_pair(store, baseline_run_id, preview_run_id))

    @router.post("/replays", status_code=201, responses=CONFLICT, tags=["replay"])
    def create_replay_run(body: ReplayBody, response: Response) -> dict[str, Any]:
        """Create the offline replay run (mode ``replay``, completed at once, zero model
        requests); the same key and pair answer 200 with the same run. A pair that cannot be
        replayed answers 409 ``BENCHMARK_REPLAY_REJECTED`` naming every reason."""
        with opened(service) as store:
            require_run(store, body.baseline_run_id)
            require_run(store, body.preview_run_id)
            try:
                run, created, doc = create_replay(
                    store, body.baseline_run_id, body.preview_run_id,
                    idempotency_key=body.idempotency_key,
                )  # fmt: skip
            except (ReplayError, StoreError) as error:
                raise ServiceError("BENCHMARK_REPLAY_REJECTED", 409, str(error)) from None
            if not created:
                response.status_code = 200
            return {"run": views.one(store, run.id), "created": created, "review": doc}

    @router.post("/runs/{run_id}/reconcile-usage", response_class=JsonText, responses=CONFLICT)
    def reconcile(run_id: str) -> JsonText:
        """Verify every saved call against its evidence; the (append-only) correction artifact.
        A run that cannot be reconciled answers 409 ``BENCHMARK_RECONCILE_REJECTED``."""
        with opened(service) as store:
            require_run(store, run_id)
            try:
                return JsonText(reconcile_usage(store, run_id))
            except ReconcileError as error:
                raise ServiceError("BENCHMARK_RECONCILE_REJECTED", 409, str(error)) from None

    @router.get(
        "/compare",
        response_class=JsonText,
        responses={200: {"content": {"text/csv": {}}, "description": "JSON or CSV"}},
        tags=["compare"],
    )
    def compare(
        baseline: RunId,
        candidate: Annotated[list[str], Query(min_length=1, max_length=20)],
        format: Literal["json", "csv"] = "json",
        margin: Annotated[float, Query(gt=0, lt=1)] = 0.05,
        allow_mixed_sources: bool = False,
    ) -> Response:
        """Candidate runs against a baseline run, case by case (as ``srbench compare``). Runs
        whose same benchmark came from different data are refused (422) unless
        ``allow_mixed_sources``; the result's ``mixed_sources`` then says so."""
        if any(not 1 <= len(c) <= 128 for c in candidate):
            raise ServiceError("BENCHMARK_INVALID_REQUEST", 422, "a candidate is not a run id")
        with opened(service) as store:
            try:
                result = compare_many(
                    store_side(store, baseline),
                    [store_side(store, c) for c in candidate],
                    margin=margin,
                    allow_mixed_sources=allow_mixed_sources,
                )
            except ComparisonError as error:
                raise ServiceError("BENCHMARK_COMPARISON_INVALID", 422, str(error)) from None
        if format == "json":
            return JsonText(result)
        name = re.sub(r"[^A-Za-z0-9._-]", "_", baseline)[:80]
        return Response(
            comparison_csv(result),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="compare-{name}.csv"'},
        )

    return router
