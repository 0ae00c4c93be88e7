"""The dashboard of ``srbench serve``: server-rendered pages (jinja2, autoescaped) whose one
inline script each calls the JSON API. Every page carries a Content-Security-Policy that
pins its script by hash and allows no remote source; data from the API (model output
included) only ever enters a page through ``textContent``.

The full run report and the comparison page are the very pages ``srbench report --html`` and
``srbench compare --html`` write, rendered here from the same store.
"""

from __future__ import annotations

import hmac
import tempfile
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Annotated, Any, get_args

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from jinja2 import Environment

from pytest_srbench.app.reports import report_from_store, stored_details
from pytest_srbench.core.compare.runs import ComparisonError, compare_many
from pytest_srbench.core.models import RunStatus
from pytest_srbench.render.html import (
    render_compare_html,
    report_script_hash,
    run_html_chunks,
    script_hash,
)
from pytest_srbench.render.html import template_asset as report_asset
from pytest_srbench.render.templating import make_environment
from pytest_srbench.service.compare_options import compare_options
from pytest_srbench.service.routes_ops import store_side
from pytest_srbench.service.worker import RunService, ServiceError
from pytest_srbench.store.base import StoreError

PAGES = {
    "runs": ("Runs", "runs.js"),
    "new": ("Create evaluation", "new.js"),
    "datasets": ("Datasets", "datasets.js"),
    "dataset": ("Dataset", "dataset.js"),
    "run": ("Run", "run.js"),
    "compare": ("Compare iterations", "compare.js"),
}
MOST_CANDIDATES = 200  # the comparison page renders every selected candidate
NAV = [("/", "runs", "Runs"), ("/new", "new", "Create evaluation"),
       ("/datasets", "datasets", "Datasets"), ("/compare", "compare", "Compare")]  # fmt: skip


@cache
def environment() -> Environment:
    env = make_environment("pytest_srbench.service")
    env.globals["nav"] = NAV
    env.globals["run_statuses"] = get_args(RunStatus)
    return env


def _source(name: str) -> str:
    env = environment()
    assert env.loader is not None
    return env.loader.get_source(env, name)[0]


@cache
def page_script(page: str) -> str:
    """The page's only script: the shared helpers, then the page's own code."""
    return _source("common.js") + "\n" + _source(PAGES[page][1])


@cache
def styles() -> str:
    return report_asset("report.css") + "\n" + _source("dashboard.css")


def page_csp(page: str) -> str:
    """Scripts by hash only (the page's, and the report's for an embedded report page);
    requests to this origin only; no remote source of any kind."""
    return (
        "default-src 'none'; "
        f"script-src '{script_hash(page_script(page))}' '{report_script_hash()}'; "
        "style-src 'unsafe-inline'; img-src data:; connect-src 'self'; frame-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


REPORT_CSP = (
    f"default-src 'none'; script-src '{report_script_hash()}'; style-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)
HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store"}  # fmt: skip


def render_page(page: str, status: int = 200, **context: Any) -> HTMLResponse:
    title = context.pop("title", PAGES[page][0])
    html = (
        environment()
        .get_template(f"{page}.html.j2")
        .render(page=page, title=title, css=styles(), script=page_script(page), **context)
    )
    return HTMLResponse(
        html, status_code=status, headers={**HEADERS, "Content-Security-Policy": page_csp(page)}
    )


def _report_response(html: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(
        html, status_code=status, headers={**HEADERS, "Content-Security-Policy": REPORT_CSP}
    )


def _spooled_report(chunks: Iterable[str]) -> StreamingResponse:
    """A report page written to a temporary file while the store is open (a page of cells at
    a time), then sent from that file."""
    spool = tempfile.TemporaryFile(prefix="srbench-page-")  # noqa: SIM115 - closed when sent
    for chunk in chunks:
        spool.write(chunk.encode("utf-8"))
    spool.seek(0)

    def sent() -> Iterator[bytes]:
        with spool:
            while block := spool.read(1 << 20):
                yield block

    return StreamingResponse(
        sent(),
        media_type="text/html; charset=utf-8",
        headers={**HEADERS, "Content-Security-Policy": REPORT_CSP},
    )


def _error_page(status: int, code: str, message: str) -> HTMLResponse:
    html = (
        environment()
        .get_template("error.html.j2")
        .render(title=code, css=styles(), code=code, message=message)
    )
    return _report_response(html, status)


def _token(app: FastAPI) -> str | None:
    """The API's bearer token: ``app.state.token``, else the one the API guard was given."""
    token = getattr(app.state, "token", None)
    if not token:
        for middleware in app.user_middleware:
            if getattr(middleware.cls, "__name__", "") == "ApiGuard":
                token = middleware.kwargs.get("token")
    return token if isinstance(token, str) and token else None


def _authorized(app: FastAPI, request: Request) -> bool:
    """The report pages hold run data: they need the API's token when one is set."""
    token = _token(app)
    if token is None:
        return True
    given = request.headers.get("authorization", "")
    scheme, _, value = given.partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(value.encode(), token.encode())


def add_dashboard(app: FastAPI, service: RunService) -> None:
    """Mount the dashboard pages on ``app`` (the API lives under ``/api/``)."""

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def runs_page() -> HTMLResponse:
        return render_page("runs")

    @app.get("/new", response_class=HTMLResponse, include_in_schema=False)
    def new_page() -> HTMLResponse:
        return render_page("new")

    @app.get("/datasets", response_class=HTMLResponse, include_in_schema=False)
    def datasets_page() -> HTMLResponse:
        return render_page("datasets")

    @app.get("/datasets/{dataset_id:path}", response_class=HTMLResponse, include_in_schema=False)
    def dataset_page(dataset_id: str) -> HTMLResponse:
        return render_page("dataset", title=f"Dataset {dataset_id}", dataset_id=dataset_id)

    @app.get("/compare", response_class=HTMLResponse, include_in_schema=False)
    def compare_page() -> HTMLResponse:
        return render_page("compare")

    @app.get("/compare/options.json", include_in_schema=False)
    def compare_choices(request: Request) -> Response:
        """The runs Compare iterations offers (``compare_options``)."""
        if not _authorized(app, request):
            return _error_page(401, "BENCHMARK_UNAUTHORIZED", "a valid bearer token is required")
        store = service.store()
        try:
            return JSONResponse(compare_options(store), headers=HEADERS)
        finally:
            store.close()

    @app.get("/compare/report.html", response_class=HTMLResponse, include_in_schema=False)
    def compare_report(
        request: Request,
        baseline: Annotated[str, Query(max_length=200)] = "",
        candidate: Annotated[list[str] | None, Query()] = None,
        margin: Annotated[float, Query(gt=0, lt=1)] = 0.05,
        allow_mixed_sources: bool = False,
    ) -> Response:
        if not _authorized(app, request):
            return _error_page(401, "BENCHMARK_UNAUTHORIZED", "a valid bearer token is required")
        if not baseline or not candidate or len(candidate) > MOST_CANDIDATES:
            return _error_page(
                422,
                "BENCHMARK_INVALID_REQUEST",
                f"choose a baseline and 1 to {MOST_CANDIDATES} candidates",
            )
        store = service.store()
        try:  # run ids in the store only: a client never names a file
            sides = [store_side(store, run_id) for run_id in (baseline, *candidate)]
            result = compare_many(
                sides[0], sides[1:], margin=margin, allow_mixed_sources=allow_mixed_sources
            )
        except ServiceError as error:
            return _error_page(error.status, error.code, error.message)
        except ComparisonError as error:
            return _error_page(422, "BENCHMARK_COMPARISON_INVALID", str(error)[:400])
        finally:
            store.close()
        return _report_response(render_compare_html(result))

    @app.get("/runs/{run_id}", response_class=HTMLResponse, include_in_schema=False)
    def run_page(run_id: str) -> HTMLResponse:
        return render_page("run", title=f"Run {run_id}", run_id=run_id)

    @app.get("/runs/{run_id}/report.html", response_class=HTMLResponse, include_in_schema=False)
    def run_report(request: Request, run_id: str) -> Response:
        if not _authorized(app, request):
            return _error_page(401, "BENCHMARK_UNAUTHORIZED", "a valid bearer token is required")
        store = service.store()
        try:
            if store.get_run(run_id) is None:
                return _error_page(404, "BENCHMARK_RUN_NOT_FOUND", f"no run {run_id!r}")
            report = report_from_store(store, run_id)
            details = stored_details(store, run_id, store.get_manifest(run_id))
            return _spooled_report(run_html_chunks(report, details))
        except StoreError:
            return _error_page(409, "BENCHMARK_RUN_FAILED", "the run's report cannot be built")
        finally:
            store.close()
