"""``srbench serve``: the HTTP API (and the dashboard, when installed) over a store.

The token comes from ``SRBENCH_SERVICE_TOKEN`` only (never a flag, never printed); without it
the service binds to loopback only. FastAPI and uvicorn load when the command runs.
"""

from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path
from typing import Any

from pytest_srbench.service.token_env import TOKEN_ENV


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from pytest_srbench.service.api import add_dashboard, create_app
    from pytest_srbench.service.connections import bounded_protocol
    from pytest_srbench.service.guard import RedactQueries, check_bind
    from pytest_srbench.service.worker import RunService
    from pytest_srbench.store.opening import describe_location

    token = os.environ.get(TOKEN_ENV) or None
    check_bind(args.host, token)  # a BindError is one line, from cli.main
    service = RunService(Path(args.project), args.store, max_runs=args.max_runs)
    app = create_app(service, token=token, dashboard=False)
    pages = add_dashboard(app, service)
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{args.port}/"
    print(
        f"srbench serve: {url} (API {url}api/, docs {url}docs) over the store "
        f"{describe_location(service.store_location)}"
    )
    if not pages:
        print("srbench serve: the dashboard is not installed; serving the API only")
    if token:
        print(f"srbench serve: /api/ requests need the bearer token from {TOKEN_ENV}")
    # the request head and body read deadlines and the stream caps: service/connections.py
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="info",
                            http=bounded_protocol())  # fmt: skip
    for name in ("uvicorn.access", "uvicorn.error"):  # a token sent in a query is never logged
        logging.getLogger(name).addFilter(RedactQueries(token))
    uvicorn.Server(config).run()
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def add_serve_command(subparsers: Any) -> None:
    """Register ``serve`` on an argparse sub-parsers object (``--store`` is the global one)."""
    serve = subparsers.add_parser(
        "serve",
        help="serve the HTTP API and dashboard over the store",
        description=f"Serve the HTTP API (and the dashboard) over --store. Binding to anything "
        f"but loopback needs a token in {TOKEN_ENV}.",
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument(
        "--max-runs", type=_positive, default=100, help="runs tracked in memory (default 100)"
    )
    serve.add_argument("--project", default=".", help="project folder (its [tool.srbench])")
    serve.set_defaults(func=cmd_serve)
