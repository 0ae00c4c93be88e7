"""The simulator's HTTP/1.1 server (``simulator/http.py``) on a real loopback socket: raw bytes
written by the test for the wire's edge cases, aiohttp's and httpx's clients for the rest."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp
import httpx
import orjson
import pytest

from pytest_srbench.simulator.http import (
    App,
    Headers,
    Request,
    Response,
    StreamResponse,
    json_response,
    start_server,
)

pytestmark = pytest.mark.asyncio
DEADLINE_S = 30.0  # how long a read waits for an answer that must come (never a speed bound)


class Seen:
    """What the test handlers saw."""

    def __init__(self) -> None:
        self.cancelled = asyncio.Event()
        self.streaming = asyncio.Event()


async def echo(request: Request) -> Response:
    return json_response(
        {
            "method": request.method,
            "path": request.path,
            "query": request.query,
            "body": request.body.decode(),
            "token": request.headers.get("X-Token"),
        },
        headers={"X-Echo": "1"},
    )


async def slow_stream(request: Request) -> StreamResponse:
    seen: Seen = request.state
    response = await request.stream({"Content-Type": "text/event-stream"})
    await response.write(b"data: first\n\n")
    seen.streaming.set()
    try:
        await asyncio.sleep(DEADLINE_S)
    except asyncio.CancelledError:
        seen.cancelled.set()
        raise
    await response.finish()
    return response


async def cut_stream(request: Request) -> StreamResponse:
    response = await request.stream({"Content-Type": "text/event-stream"})
    await response.write(b"data: one\n\n")
    response.abort()
    return response


async def broken(request: Request) -> Response:
    raise RuntimeError("a handler's bug")


async def pause(request: Request) -> Response:
    await asyncio.sleep(float(request.query["s"]))
    return json_response({"slept": True})


@contextlib.asynccontextmanager
async def serving(max_body: int = 1024, idle_s: float = 75.0) -> AsyncIterator[tuple[int, Seen]]:
    seen = Seen()
    app = App(seen, max_body_bytes=max_body, idle_s=idle_s)
    app.add_post("/echo", echo)
    app.add_get("/echo", echo)
    app.add_post("/slow", slow_stream)
    app.add_post("/cut", cut_stream)
    app.add_get("/broken", broken)
    app.add_get("/pause", pause)
    server = await start_server(app, "127.0.0.1", 0)
    try:
        yield server.port, seen
    finally:
        await server.close()


async def exchange(port: int, raw: bytes, *, until_closed: bool = False) -> bytes:
    """Write ``raw``; read until the peer closes (``until_closed``) or for a moment."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        if until_closed:
            return await asyncio.wait_for(reader.read(), DEADLINE_S)
        data = b""
        while True:
            try:
                chunk = await asyncio.wait_for(reader.read(65536), 0.5)
            except TimeoutError:
                return data
            if not chunk:
                return data
            data += chunk
    finally:
        writer.close()


def post(path: str, body: bytes, *extra: str) -> bytes:
    head = [f"POST {path} HTTP/1.1", "Host: x", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def bodies(raw: bytes) -> list[dict]:
    """The JSON bodies of the whole answers in ``raw``, in order."""
    found = []
    while raw:
        head, _, rest = raw.partition(b"\r\n\r\n")
        length = next(
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        found.append(orjson.loads(rest[:length]))
        raw = rest[length:]
    return found


async def test_keep_alive_and_pipelined_requests_are_answered_in_order():
    async with serving() as (port, _):
        raw = post("/echo", b"one") + post("/echo?x=1&x=2&y=", b"two")
        answers = bodies(await exchange(port, raw))
    assert [a["body"] for a in answers] == ["one", "two"]
    assert answers[1]["query"] == {"x": "1", "y": ""}  # the first of a repeated name


async def test_a_chunked_request_body_is_read_whole():
    async with serving() as (port, _):
        raw = (
            b"POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
        )
        (answer,) = bodies(await exchange(port, raw))
    assert answer["body"] == "hello world"


async def test_expect_continue_is_answered_before_the_body_is_sent():
    async with serving() as (port, _):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        head = post("/echo", b"", "Expect: 100-continue").replace(
            b"Content-Length: 0", b"Content-Length: 4"
        )
        writer.write(head)
        interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), DEADLINE_S)
        assert interim.startswith(b"HTTP/1.1 100 Continue")
        writer.write(b"body")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), DEADLINE_S)
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        answer = orjson.loads(await asyncio.wait_for(reader.readexactly(length), DEADLINE_S))
        writer.close()
    assert answer["body"] == "body"


async def test_headers_are_read_without_regard_to_case():
    async with serving() as (port, _):
        (answer,) = bodies(await exchange(port, post("/echo", b"", "x-TOKEN: secret")))
    assert answer["token"] == "secret"
    headers = Headers({"Accept": "a"})
    headers.add("ACCEPT", "b")
    assert headers["accept"] == "a, b" and "Accept" in headers and len(headers) == 1


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"BROKEN\r\n\r\n", b"400"),
        (b"GET /echo HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
        (b"POST /echo HTTP/1.1\r\nContent-Length: ten\r\n\r\n", b"400"),
        (b"POST /echo HTTP/1.1\r\nContent-Length: 2048\r\n\r\n", b"413"),
        (b"POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", b"400"),
        (b"GET /echo HTTP/1.1\r\nX: " + b"a" * 70_000 + b"\r\n\r\n", b"431"),
    ],
)
async def test_a_malformed_request_gets_its_status_and_the_connection_closes(raw, status):
    async with serving() as (port, _):
        answer = await exchange(port, raw, until_closed=True)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:200]
    assert b"Connection: close" in answer


async def test_unknown_paths_and_methods():
    async with serving() as (port, _):
        missing = await exchange(port, post("/nowhere", b""))
        wrong = await exchange(port, b"DELETE /echo HTTP/1.1\r\nHost: x\r\n\r\n")
    assert missing.startswith(b"HTTP/1.1 404 Not Found")
    assert wrong.startswith(b"HTTP/1.1 405 Method Not Allowed")


async def test_http_1_0_is_closed_after_its_answer():
    async with serving() as (port, _):
        answer = await exchange(port, b"GET /echo HTTP/1.0\r\n\r\n", until_closed=True)
    assert answer.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" in answer


async def test_a_handlers_bug_is_a_500_with_its_traceback_on_stderr(capsys):
    async with serving() as (port, _):
        answer = await exchange(port, b"GET /broken HTTP/1.1\r\n\r\n", until_closed=True)
    assert answer.startswith(b"HTTP/1.1 500")
    assert "a handler's bug" in capsys.readouterr().err


async def test_a_client_that_goes_away_cancels_the_stream_it_was_given():
    async with serving() as (port, seen):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(post("/slow", b"{}"))
        await asyncio.wait_for(seen.streaming.wait(), DEADLINE_S)
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), DEADLINE_S)
        assert b"Transfer-Encoding: chunked" in head
        writer.close()
        await asyncio.wait_for(seen.cancelled.wait(), DEADLINE_S)


async def test_an_aborted_stream_is_a_broken_body_for_the_client():
    async with serving() as (port, _):
        url = f"http://127.0.0.1:{port}/cut"
        async with aiohttp.ClientSession() as session, session.post(url, data=b"{}") as response:
            assert response.status == 200
            with pytest.raises(aiohttp.ClientPayloadError):
                await response.read()
        async with httpx.AsyncClient() as client:
            with pytest.raises(httpx.RemoteProtocolError):
                await client.post(f"http://127.0.0.1:{port}/cut", content=b"{}")


async def test_clients_reuse_one_connection_for_many_requests():
    async with (
        serving(max_body=1 << 20) as (port, _),
        httpx.AsyncClient(
            limits=httpx.Limits(max_connections=1), base_url=f"http://127.0.0.1:{port}"
        ) as client,
    ):
        answers = [await client.post("/echo", content=b"x" * n) for n in (0, 1, 70_000)]
    assert [len(a.json()["body"]) for a in answers] == [0, 1, 70_000]
    assert all(a.headers["x-echo"] == "1" for a in answers)


async def test_a_quiet_connection_is_closed_but_never_while_its_answer_is_made():
    async with serving(idle_s=0.3) as (port, _):
        # kept alive after its answer, then nothing: closed by the server
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
        rest = await asyncio.wait_for(reader.read(), DEADLINE_S)  # EOF ends the read
        assert rest.startswith(b"HTTP/1.1 200 OK") and b"Connection: close" not in rest
        writer.close()
        # a request never finished: closed too
        stalled = await exchange(port, b"GET /echo HTTP/1.1\r\nHost:", until_closed=True)
        assert stalled == b""
        # an answer that takes longer than the quiet limit is still made and sent
        answer = await exchange(port, b"GET /pause?s=1.0 HTTP/1.1\r\n\r\n", until_closed=True)
        assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b'{"slept":true}')
