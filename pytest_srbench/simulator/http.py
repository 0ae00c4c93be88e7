"""The simulator's HTTP/1.1 server: one ``asyncio.Protocol`` per connection that reads requests
(a ``Content-Length`` or chunked body, ``Expect: 100-continue``, keep-alive), hands each to
the route's handler and writes its answer — a whole body, or a chunked stream (SSE).

It owns the wire only; what the simulator answers is in ``server.py``, ``router_http.py``
and ``retrieval_http.py``. Written here rather than on ``aiohttp.web`` because a simulator is
started by every session that has a simulated target: importing aiohttp (its client and SSL
contexts come with its server) was two thirds of a simulator's start, and its request
machinery a third of the CPU it spends per answer (docs/performance.md).

A handler runs as a task of its connection; when the client goes away the task is cancelled
(a stream stops being played at once) and a write to the closed connection raises
``ConnectionResetError``. One request at a time per connection: a pipelined request waits in
the buffer until the answer before it is written. A connection quiet for ``IDLE_S`` while no
answer is being made (kept alive and unused, or a request never finished) is closed."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import traceback
from collections.abc import Awaitable, Callable, Iterator, Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import orjson

MAX_HEAD_BYTES = 64 * 1024  # request line and headers
IDLE_S = 75.0  # a connection with no request being answered is closed after this long quiet
JSON_TYPE = "application/json"


class Headers(Mapping[str, str]):
    """A request's headers, looked up without regard to case (a repeated header's values
    joined with ", ")."""

    __slots__ = ("_values",)

    def __init__(self, pairs: Mapping[str, str] | None = None) -> None:
        self._values: dict[str, str] = {}
        for name, value in (pairs or {}).items():
            self.add(name, value)

    def add(self, name: str, value: str) -> None:
        key = name.lower()
        seen = self._values.get(key)
        self._values[key] = value if seen is None else f"{seen}, {value}"

    def __getitem__(self, name: str) -> str:
        return self._values[name.lower()]

    def get(self, name: str, default: Any = None) -> Any:
        return self._values.get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


class Request:
    """One request, its body read whole; ``state`` is the application's."""

    __slots__ = ("_connection", "body", "headers", "method", "path", "query", "state")

    def __init__(
        self,
        connection: _Connection,
        method: str,
        path: str,
        query: dict[str, str],
        headers: Headers,
        body: bytes,
    ) -> None:
        self._connection = connection
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.state = connection.app.state

    def json(self) -> Any:
        """The body as JSON (``ValueError`` — a ``json.JSONDecodeError`` — when it is not)."""
        return orjson.loads(self.body)

    async def stream(self, headers: Mapping[str, str], status: int = 200) -> StreamResponse:
        """Start a chunked answer (its head is sent with its first piece)."""
        return StreamResponse(self._connection, status, headers)


class Response:
    """A whole answer: status, headers and body."""

    __slots__ = ("body", "headers", "status")

    def __init__(
        self,
        body: bytes = b"",
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        content_type: str | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.headers = dict(headers or {})
        if content_type is not None:
            self.headers["Content-Type"] = content_type

    def encode(self, keep_alive: bool) -> bytes:
        lines = [_status_line(self.status)]
        lines += [f"{name}: {value}" for name, value in self.headers.items()]
        if self.status >= 200 and self.status not in (204, 304):
            lines.append(f"Content-Length: {len(self.body)}")
        if not keep_alive:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + self.body


def json_response(
    data: Any, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """A JSON answer."""
    return Response(orjson.dumps(data), status=status, headers=headers, content_type=JSON_TYPE)


class StreamResponse:
    """A chunked answer being written (``Request.stream``): ``write`` each piece, ``finish``
    to end it, or ``abort`` to cut the connection mid-answer (a broken stream, on purpose).
    The status line and headers leave with the first piece (one send, not two)."""

    __slots__ = ("_connection", "_head", "finished", "status")

    def __init__(self, connection: _Connection, status: int, headers: Mapping[str, str]) -> None:
        self._connection = connection
        self.status = status
        lines = [_status_line(status), *(f"{name}: {value}" for name, value in headers.items())]
        lines.append("Transfer-Encoding: chunked")
        self._head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        self.finished = False

    def _framed(self, data: bytes) -> bytes:
        head, self._head = self._head, b""
        return head + (b"%x\r\n%b\r\n" % (len(data), data) if data else b"")

    async def write(self, data: bytes) -> None:
        framed = self._framed(data)
        if framed:
            self._connection.write(framed)
            await self._connection.drain()

    async def finish(self, last: bytes = b"") -> None:
        """End the answer, ``last`` its final piece (sent with the end in one write)."""
        if not self.finished:
            self.finished = True
            self._connection.write(self._framed(last) + b"0\r\n\r\n")
            await self._connection.drain()

    def abort(self) -> None:
        self.finished = True
        self._connection.close()


Answer = Response | StreamResponse
Handler = Callable[[Request], Awaitable[Answer]]


class App:
    """Routes by (method, path) and the state every handler sees (``request.state``)."""

    def __init__(self, state: Any, *, max_body_bytes: int, idle_s: float = IDLE_S) -> None:
        self.state = state
        self.max_body_bytes = max_body_bytes
        self.idle_s = idle_s
        self.routes: dict[tuple[str, str], Handler] = {}
        self.paths: set[str] = set()

    def add_get(self, path: str, handler: Handler) -> None:
        self.routes[("GET", path)] = handler
        self.paths.add(path)

    def add_post(self, path: str, handler: Handler) -> None:
        self.routes[("POST", path)] = handler
        self.paths.add(path)

    def handler_for(self, method: str, path: str) -> Handler | None:
        return self.routes.get((method, path))


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _status_line(status: int) -> str:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Unknown"
    return f"HTTP/1.1 {status} {phrase}"


def problem(status: int, message: str, headers: Mapping[str, str] | None = None) -> Response:
    """An OpenAI-style error answer (``type`` ``invalid_request_error``)."""
    return json_response(
        {"error": {"message": message, "type": "invalid_request_error", "code": status}},
        status=status,
        headers=headers,
    )


class _Connection(asyncio.Protocol):
    """One client connection: parse, dispatch, write; one request at a time."""

    def __init__(self, app: App, live: set[_Connection]) -> None:
        self.app = app
        self.live = live
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None
        self.task: asyncio.Task[None] | None = None
        self.closed = False
        self.continued = False  # a "100 Continue" was sent for the request being read
        self._writable: asyncio.Future[None] | None = None
        self._quiet: asyncio.TimerHandle | None = None  # closes a connection left idle

    # -- asyncio.Protocol ------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self.live.add(self)
        self._arm_quiet()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if self.task is None:
            self._next()
            self._arm_quiet()  # a request started, or a partial one still being sent

    def _arm_quiet(self) -> None:
        """While no request is being answered, the connection closes after ``idle_s`` without
        a byte from the client (a kept-alive connection nobody uses, a request never
        finished)."""
        if self._quiet is not None:
            self._quiet.cancel()
            self._quiet = None
        if self.task is None and not self.closed:
            loop = asyncio.get_running_loop()
            self._quiet = loop.call_later(self.app.idle_s, self.close)

    def eof_received(self) -> bool | None:
        return None  # the client is gone (half-closed sockets are not kept): close, and cancel

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.live.discard(self)
        if self.task is not None:
            self.task.cancel()  # the client went away: stop playing its answer
        if self._quiet is not None:
            self._quiet.cancel()
        self._wake()

    def pause_writing(self) -> None:
        if self._writable is None:
            self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        self._wake()

    # -- writing ---------------------------------------------------------------------------
    def write(self, data: bytes) -> None:
        if self.closed or self.transport is None or self.transport.is_closing():
            raise ConnectionResetError("the client closed the connection")
        self.transport.write(data)

    async def drain(self) -> None:
        if self._writable is not None:
            await self._writable
            if self.closed:
                raise ConnectionResetError("the client closed the connection")

    def _wake(self) -> None:
        waiter, self._writable = self._writable, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()
        self.closed = True

    # -- reading ---------------------------------------------------------------------------
    def _next(self) -> None:
        """Start the next complete request in the buffer, if there is one."""
        if self.closed:
            return
        try:
            parsed = self._parse()
        except _BadRequest as error:
            with contextlib.suppress(ConnectionResetError):
                self.write(problem(error.status, str(error)).encode(keep_alive=False))
            self.close()
            return
        if parsed is not None:
            request, keep_alive = parsed
            self.task = asyncio.get_running_loop().create_task(self._serve(request, keep_alive))

    def _parse(self) -> tuple[Request, bool] | None:
        buffer = self.buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > MAX_HEAD_BYTES:
                raise _BadRequest(431, "request line and headers are too long")
            return None
        if end > MAX_HEAD_BYTES:
            raise _BadRequest(431, "request line and headers are too long")
        lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest(400, "not an HTTP/1.x request line")
        method, target, version = parts
        headers = Headers()
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon or not name or name != name.strip():
                raise _BadRequest(400, f"malformed header line {line[:80]!r}")
            headers.add(name, value.strip())
        start = end + 4
        if "chunked" in headers.get("transfer-encoding", "").lower():
            decoded = self._chunked_body(start)
            if decoded is None:
                return None
            body, consumed = decoded
        else:
            raw_length = headers.get("content-length", "0").strip() or "0"
            if not raw_length.isdigit():
                raise _BadRequest(400, f"Content-Length {raw_length[:40]!r} is not a number")
            length = int(raw_length)
            if length > self.app.max_body_bytes:
                raise _BadRequest(413, f"the body is larger than {self.app.max_body_bytes} bytes")
            if len(buffer) - start < length:
                self._continue(headers)
                return None
            body, consumed = bytes(buffer[start : start + length]), start + length
        del buffer[:consumed]
        self.continued = False
        split = urlsplit(target)
        query = dict(reversed(parse_qsl(split.query, keep_blank_values=True)))  # first wins
        connection = headers.get("connection", "").lower()
        keep_alive = "close" not in connection and (
            version != "HTTP/1.0" or "keep-alive" in connection
        )
        request = Request(self, method, unquote(split.path), query, headers, body)
        return request, keep_alive

    def _continue(self, headers: Headers) -> None:
        if not self.continued and headers.get("expect", "").lower() == "100-continue":
            self.continued = True
            self.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def _chunked_body(self, start: int) -> tuple[bytes, int] | None:
        """A chunked body from ``start``: (body, bytes consumed), or None until it is whole."""
        buffer = self.buffer
        pieces: list[bytes] = []
        size_total = 0
        position = start
        while True:
            line_end = buffer.find(b"\r\n", position)
            if line_end < 0:
                return None
            size_text = bytes(buffer[position:line_end]).split(b";")[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise _BadRequest(400, "malformed chunk size") from None
            size_total += size
            if size_total > self.app.max_body_bytes:
                raise _BadRequest(413, f"the body is larger than {self.app.max_body_bytes} bytes")
            if size == 0:
                trailer_end = buffer.find(b"\r\n\r\n", line_end)
                if trailer_end < 0:
                    return None
                return b"".join(pieces), trailer_end + 4
            data_start = line_end + 2
            if len(buffer) < data_start + size + 2:
                return None
            pieces.append(bytes(buffer[data_start : data_start + size]))
            position = data_start + size + 2

    # -- serving ---------------------------------------------------------------------------
    async def _serve(self, request: Request, keep_alive: bool) -> None:
        handler = self.app.handler_for(request.method, request.path)
        try:
            if handler is None:
                allowed = request.path in self.app.paths
                answer: Answer = problem(
                    405 if allowed else 404,
                    f"{request.method} {request.path} is not served here",
                )
            else:
                answer = await handler(request)
            if isinstance(answer, Response):
                self.write(answer.encode(keep_alive))
            elif not answer.finished:
                await answer.finish()
        except (ConnectionResetError, asyncio.CancelledError):
            self.close()
            return
        except Exception:  # a handler's bug: a 500, and the traceback on stderr
            traceback.print_exc(file=sys.stderr)
            with contextlib.suppress(ConnectionResetError):
                self.write(problem(500, "internal simulator error").encode(keep_alive=False))
            self.close()
            return
        finally:
            self.task = None
        if not keep_alive:
            self.close()
            return
        if self.buffer:
            self._next()
        self._arm_quiet()


async def start_server(app: App, host: str, port: int, *, backlog: int = 4096) -> Server:
    """Listen on ``host:port`` (0: a free port)."""
    live: set[_Connection] = set()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Connection(app, live), host, port, backlog=backlog)
    return Server(server, live)


class Server:
    """A listening simulator: its port, and ``close`` to stop accepting and drop every
    connection."""

    def __init__(self, server: asyncio.Server, live: set[_Connection]) -> None:
        self._server = server
        self._live = live
        sockets = server.sockets or ()
        self.port = int(sockets[0].getsockname()[1]) if sockets else 0

    async def close(self) -> None:
        self._server.close()
        for connection in list(self._live):
            connection.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), timeout=5)
