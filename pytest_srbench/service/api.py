"""The HTTP API of ``srbench serve`` (docs/service-api.md): routes under ``/api/``, OpenAPI at
``/openapi.json``, one error shape, and an optional bearer token (see ``guard``)."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

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
    app.openapi = lambda: openapi_document(app)  # type: ignore[method-assign]
    if dashboard:
        add_dashboard(app, service)
    return app


def openapi_document(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, corrected once: a JSON answer built by hand (``JsonText``) is an
    object, not a string; the bearer scheme is declared (required on ``/api/`` but health when
    the service has a token)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    document = get_openapi(title=app.title, version=app.version,
                           description=app.description, routes=app.routes)  # fmt: skip
    for path, operations in document.get("paths", {}).items():
        for operation in operations.values():
            for status, answer in operation.get("responses", {}).items():
                content = answer.get("content", {}).get("application/json")
                if (
                    status.startswith("2")
                    and content
                    and content.get("schema") in ({"type": "string"}, {})
                ):
                    content["schema"] = {"type": "object"}  # fmt: skip
            if path.startswith("/api/") and path != "/api/health":
                operation["security"] = [{"bearer": []}, {}]  # the token when one is set
    components = document.setdefault("components", {})
    components["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer",
                   "description": "SRBENCH_SERVICE_TOKEN, needed when the service has one"}
    }  # fmt: skip
    app.openapi_schema = document
    return document


def add_dashboard(app: FastAPI, service: RunService) -> bool:
    """Mount the dashboard pages when ``pytest_srbench.service.dashboard`` is installed;
    False (the API alone) when it is not."""
    if importlib.util.find_spec(DASHBOARD) is None:
        return False
    importlib.import_module(DASHBOARD).add_dashboard(app, service)
    return True
