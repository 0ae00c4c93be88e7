"""The HTTP API of ``srbench serve`` (docs/service-api.md): routes under ``/api/``, OpenAPI at
``/openapi.json``, one error shape, and an optional bearer token (see ``guard``)."""

from __future__ import annotations

import importlib
import importlib.util

from fastapi import FastAPI

from pytest_srbench import __version__
from pytest_srbench.service.catalog import Catalog
from pytest_srbench.service.guard import ApiGuard, check_bind, install_error_handlers
from pytest_srbench.service.routes_catalog import catalog_router
from pytest_srbench.service.routes_ops import ops_router
from pytest_srbench.service.routes_runs import runs_router
from pytest_srbench.service.run_views import RunViews
from pytest_srbench.service.worker import RunService

__all__ = ["add_dashboard", "check_bind", "create_app"]
DASHBOARD = "pytest_srbench.service.dashboard"


def create_app(service: RunService, *, token: str | None = None, dashboard: bool = True) -> FastAPI:
    """The API over ``service``; ``dashboard`` mounts the pages when they are installed."""
    app = FastAPI(
        title="pytest-srbench service",
        version=__version__,
        description="Plan, start, watch and compare benchmark runs over one store.",
    )
    views = RunViews()
    app.include_router(catalog_router(service, Catalog(service.project_root)))
    app.include_router(runs_router(service, views, token))
    app.include_router(ops_router(service, views))
    install_error_handlers(app)
    app.add_middleware(ApiGuard, token=token)
    if dashboard:
        add_dashboard(app, service)
    return app


def add_dashboard(app: FastAPI, service: RunService) -> bool:
    """Mount the dashboard pages when ``pytest_srbench.service.dashboard`` is installed;
    False (the API alone) when it is not."""
    if importlib.util.find_spec(DASHBOARD) is None:
        return False
    importlib.import_module(DASHBOARD).add_dashboard(app, service)
    return True
