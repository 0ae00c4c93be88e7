"""Catalog routes: health, datasets and their cases, targets, and the plan review of a run
request (zero model requests, nothing created)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query

from pytest_srbench import __version__
from pytest_srbench.service.catalog import Catalog
from pytest_srbench.service.routes_runs import ERRORS, alias
from pytest_srbench.service.schemas import (
    CasePage,
    DatasetDetail,
    DatasetList,
    Health,
    PlanReview,
    TargetList,
)
from pytest_srbench.service.worker import RunRequest, RunService

DatasetId = Annotated[str, Query(max_length=200)]


def catalog_router(service: RunService, catalog: Catalog) -> APIRouter:
    router = APIRouter(prefix="/api", responses=ERRORS)

    @router.get("/health", response_model=Health, tags=["service"])
    async def health() -> dict[str, Any]:  # on the event loop: never queued behind threads
        return {
            "status": "ok",
            "version": __version__,
            # its name only (or its kind): where it lives is not public
            "store": "postgresql"
            if service.store_location.startswith(("postgresql://", "postgres://"))
            else service.store_path.name,
            "active_runs": len(service.active_runs()),
            "max_runs": service.max_runs,
        }

    @router.get("/datasets", response_model=DatasetList, tags=["datasets"])
    @alias(router, "GET", "/benchmarks/datasets", response_model=DatasetList)
    def list_datasets(
        q: Annotated[str | None, Query(max_length=200)] = None,
        kind: Literal["suite", "rag", "agent"] | None = None,
        profile: Literal["smoke", "quick", "standard"] | None = None,
        benchmark: DatasetId | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 100,
        offset: Annotated[int, Query(ge=0, le=10**9)] = 0,
    ) -> dict[str, Any]:
        """Suites (shipped and project, raw and prepared) and RAG / agent datasets."""
        needle = (q or "").casefold()
        found = [
            view
            for view in catalog.datasets()
            if (needle in view["id"].casefold() or needle in view["benchmark"].casefold())
            and (kind is None or view["kind"] == kind)
            and (profile is None or view["profiles"].get(profile, 0) > 0)
            and (benchmark is None or view["benchmark"] == benchmark)
        ]
        return {"datasets": found[offset : offset + limit], "total": len(found),
                "notes": catalog.dataset_notes()}  # fmt: skip

    @router.get("/datasets/{dataset_id}", response_model=DatasetDetail, tags=["datasets"])
    def get_dataset(dataset_id: str) -> dict[str, Any]:
        """One dataset with its coverage per profile and its groups."""
        return catalog.rendered(dataset_id).detail

    @router.get("/datasets/{dataset_id}/cases", response_model=CasePage, tags=["datasets"])
    def get_cases(
        dataset_id: str,
        page: Annotated[int, Query(ge=1, le=10**6)] = 1,
        q: Annotated[str | None, Query(max_length=200)] = None,
        benchmark: Annotated[
            str | None, Query(max_length=200, description="only the cases of this benchmark")
        ] = None,
        group: Annotated[
            str | None,
            Query(max_length=200, description="only the cases of this group (subject)"),
        ] = None,
    ) -> dict[str, Any]:
        """25 cases per page (public fields only), ``q`` searching ids and prompts,
        ``benchmark`` and ``group`` (the subject, as the dataset's ``groups`` name it)
        keeping only the cases with exactly that value."""
        return catalog.case_page(dataset_id, page, q, benchmark, group)

    @router.get("/targets", response_model=TargetList, tags=["targets"])
    def list_targets() -> dict[str, Any]:
        return {"targets": catalog.targets()}

    @router.post("/plans", response_model=PlanReview, tags=["runs"])
    def review_plan(body: RunRequest) -> dict[str, Any]:
        """The frozen plan a request makes, for review: zero model requests, no run created."""
        return service.review(body)

    return router
