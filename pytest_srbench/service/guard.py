"""The API's error answers and its guard: every failure leaves as ``{"error": {"code",
"message"}}`` with a short, safe message (tracebacks go to the ``pytest_srbench.service``
log only), and with a token every ``/api/`` route but health needs ``Authorization: Bearer``.

Without a token the service answers only requests that name a loopback host (``Host:
127.0.0.1:8765``, ``localhost``, ``[::1]``): a web page whose name an attacker points at
127.0.0.1 (DNS rebinding) sends its own host name and is refused. A request body is at most
``MAX_BODY_BYTES``, checked before it is read whole.

A state-changing request (any method but GET, HEAD and OPTIONS) from a web page of another
origin is refused ``403 BENCHMARK_CROSS_ORIGIN`` before it reaches a route, so nothing
changes: a browser names the page's origin in ``Origin`` and the relation in
``Sec-Fetch-Site``; the request passes only when ``Sec-Fetch-Site`` (when sent) is
``same-origin`` or ``none`` and ``Origin`` (when sent) is this very host and port. Clients that
are not browsers (curl, scripts) send neither and are unaffected.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
from typing import Any
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pytest_srbench.core.benchmark_errors import safe_message, without_paths
from pytest_srbench.core.errors import InputError, SrbenchError
from pytest_srbench.service.worker import ServiceError

logger = logging.getLogger("pytest_srbench.service")
OPEN_PATHS = frozenset({"/api/health"})
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CROSS_ORIGIN = (
    403,
    "BENCHMARK_CROSS_ORIGIN",
    "a state-changing request from a page of another origin is refused",
)
MAX_BODY_BYTES = 1 << 20  # a run or plan request is a few kilobytes
TOO_LARGE = (
    413,
    "BENCHMARK_REQUEST_TOO_LARGE",
    f"a request body is at most {MAX_BODY_BYTES} bytes",
)
INTERNAL = "internal error; the service log has the details"


class BindError(InputError):
    """Serving on a non-loopback address without a token."""


def check_bind(host: str, token: str | None) -> None:
    """Refuse a non-loopback ``host`` unless a token protects the API."""
    if token:
        return
    if host.strip().lower() == "localhost":
        return
    try:
        if ipaddress.ip_address(host.strip("[]")).is_loopback:
            return
    except ValueError:
        pass
    raise BindError(
        f"refusing to serve on {host!r} without a token: anything but loopback (127.0.0.1, ::1, "
        "localhost) needs SRBENCH_SERVICE_TOKEN in the environment"
    )


def is_loopback_host(host_header: str) -> bool:
    """Whether a ``Host`` header names a loopback address (any port)."""
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8765
        name = host[1 : host.find("]")] if "]" in host else host
    else:
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def cross_origin(headers: dict[bytes, bytes]) -> bool:
    """Whether a browser says the request comes from a page of another origin."""
    site = headers.get(b"sec-fetch-site")
    if site is not None and site.strip().lower() not in (b"same-origin", b"none"):
        return True
    origin = headers.get(b"origin")
    if origin is None:
        return False
    text = origin.decode("latin-1").strip().lower()
    host = headers.get(b"host", b"").decode("latin-1").strip().lower()
    parts = urlsplit(text)
    return text == "null" or parts.scheme not in ("http", "https") or parts.netloc != host


SECRET_QUERY = re.compile(
    r"(?i)([?&][^=&#\s]*(?:token|key|auth|secret|password|bearer)[^=&#\s]*=)[^&#\s\"']*"
)


def redact_query(text: str, token: str | None = None) -> str:
    """``text`` with the value of every query parameter named like a secret (``token``,
    ``api_key``, ``auth``, …) and the service token itself replaced by ``[REDACTED]``."""
    text = SECRET_QUERY.sub(r"\1[REDACTED]", text)
    return text.replace(token, "[REDACTED]") if token else text


class RedactQueries(logging.Filter):
    """A log filter (uvicorn's access log): a secret sent in a query string is never logged."""

    def __init__(self, token: str | None = None) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact_query(a, self.token) if isinstance(a, str) else a
                                for a in record.args)  # fmt: skip
        if isinstance(record.msg, str):
            record.msg = redact_query(record.msg, self.token)
        return True


def error_body(code: str, message: str) -> dict[str, Any]:
    """The one error shape; the message on one line, bounded, and naming no server path."""
    return {"error": {"code": code, "message": safe_message(without_paths(message), 400)}}


def error_response(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status)


def _validation_message(error: RequestValidationError) -> str:
    problems = error.errors()
    if not problems:
        return "invalid request"
    first = problems[0]
    where = ".".join(str(part)[:60] for part in first.get("loc", ()))
    more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{where}: {str(first.get('msg', 'invalid'))[:200]}{more}"


async def _service_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    response = error_response(exc.status, exc.code, exc.message)
    response.headers.update(exc.headers)
    return response


async def _validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    return error_response(422, "BENCHMARK_INVALID_REQUEST", _validation_message(exc))


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    if not request.url.path.startswith("/api/"):
        return await http_exception_handler(request, exc)
    code = "BENCHMARK_UNAUTHORIZED" if exc.status_code == 401 else "BENCHMARK_INVALID_REQUEST"
    response = error_response(exc.status_code, code, str(exc.detail)[:200])
    response.headers.update(exc.headers or {})
    if exc.status_code == 405:
        response.headers["Allow"] = allowed_methods(request)
    return response


def _leaf_routes(routes: Any) -> Any:
    for route in routes:
        included = getattr(route, "original_router", None)  # an included router (FastAPI)
        if included is not None:
            yield from _leaf_routes(included.routes)
        else:
            yield route


def allowed_methods(request: Request) -> str:
    """Every method some route serves at the request's path (Starlette names the first
    route's only)."""
    methods: set[str] = set()
    scope = {**request.scope, "method": "\x00"}
    for route in _leaf_routes(request.app.routes):
        if route.matches(scope)[0] == Match.PARTIAL:
            methods |= set(getattr(route, "methods", None) or ())
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


async def _deliberate_error(request: Request, exc: Exception) -> Response:
    """Any other deliberate error a route did not turn into a ``ServiceError``: bad input is a
    400, a part that cannot be reached a 503; the message is the error's one line."""
    assert isinstance(exc, SrbenchError)
    if isinstance(exc, InputError):
        return error_response(400, "BENCHMARK_INVALID_REQUEST", str(exc)[:500])
    return error_response(503, "BENCHMARK_UNAVAILABLE", str(exc)[:500])


def install_error_handlers(app: FastAPI) -> None:
    """The service's one mapping of errors to responses (the most specific class wins)."""
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(SrbenchError, _deliberate_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)


class ApiGuard:
    """ASGI middleware: the bearer token check, and a generic 500 for anything unexpected."""

    def __init__(self, app: ASGIApp, token: str | None = None) -> None:
        self.app = app
        self.token = token.encode("utf-8") if token else None

    def _authorized(self, scope: Scope) -> bool:
        path = str(scope.get("path", ""))
        if self.token is None or not path.startswith("/api/") or path in OPEN_PATHS:
            return True
        headers = dict(scope.get("headers") or ())
        scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token)

    def _refusal(self, scope: Scope) -> tuple[int, str, str] | None:
        """(status, code, message) when the request is refused before it reaches a route."""
        headers = dict(scope.get("headers") or ())
        if self.token is None and not is_loopback_host(headers.get(b"host", b"").decode("latin-1")):
            return (403, "BENCHMARK_FORBIDDEN_HOST",
                    "without a token the service answers only requests to a loopback host "
                    "(127.0.0.1, localhost, ::1)")  # fmt: skip
        if str(scope.get("method", "GET")).upper() not in SAFE_METHODS and cross_origin(headers):
            return CROSS_ORIGIN
        length = headers.get(b"content-length", b"0")
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            return TOO_LARGE
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self._refusal(scope)
        if refused is not None:
            status, code, message = refused
            await _send_json(send, status, error_body(code, message))
            return
        if not self._authorized(scope):
            await _send_json(send, 401, error_body("BENCHMARK_UNAUTHORIZED", "a valid bearer token is required"),
                             {b"www-authenticate": b"Bearer"})  # fmt: skip
            return
        started = False
        cut_off = False  # the body went over the limit: the 413 is sent, the app's answer dropped

        async def tracked(message: Message) -> None:
            nonlocal started
            if cut_off:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        received = 0

        async def bounded() -> Message:
            """The body as it arrives (also without a length: chunked), cut off at the limit:
            the client gets the 413 and the app sees a disconnected client."""
            nonlocal received, started, cut_off
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > MAX_BODY_BYTES:
                    if not started:
                        status, code, text = TOO_LARGE
                        await _send_json(send, status, error_body(code, text))
                        started = True
                    cut_off = True
                    return {"type": "http.disconnect"}
            return message

        try:
            await self.app(scope, bounded, tracked)
        except Exception:
            logger.exception("%s %s failed", scope.get("method"), scope.get("path"))
            if not started:
                await _send_json(send, 500, error_body("BENCHMARK_INTERNAL", INTERNAL))


async def _send_json(
    send: Send, status: int, body: dict[str, Any], extra: dict[bytes, bytes] | None = None
) -> None:
    payload = json.dumps(body).encode("utf-8")
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(payload)).encode())]  # fmt: skip
    headers += list((extra or {}).items())
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
