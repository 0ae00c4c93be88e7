"""Transport straight on aiohttp's client: the cheapest per request and per chunk here."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import aiohttp
from aiohttp.payload import BytesPayload

from pytest_srbench.transport.base import HttpRequest, TransportFailure


def _failure(error: BaseException) -> TransportFailure:
    if isinstance(error, aiohttp.ConnectionTimeoutError):
        return TransportFailure("ConnectTimeout: could not connect in time", transient=True)
    if isinstance(error, aiohttp.SocketTimeoutError | asyncio.TimeoutError):
        return TransportFailure("ReadTimeout: no bytes within the idle timeout")
    if isinstance(error, aiohttp.ClientConnectorError):
        return TransportFailure(f"ConnectionError: {error}", transient=True)
    if isinstance(error, aiohttp.ClientPayloadError | aiohttp.ServerDisconnectedError):
        return TransportFailure(
            f"ConnectionError: stream ended early ({type(error).__name__})", transient=True
        )
    return TransportFailure(f"ConnectionError: {type(error).__name__}", transient=True)


@dataclass
class _Response:
    status: int
    headers: Mapping[str, str]
    inner: aiohttp.ClientResponse

    def chunks(self) -> _Chunks:
        return _Chunks(self.inner.content)


class _Chunks:
    """Byte chunks as they arrive (a class, not an async generator: no finaliser hooks)."""

    __slots__ = ("_content",)

    def __init__(self, content: aiohttp.StreamReader) -> None:
        self._content = content

    def __aiter__(self) -> _Chunks:
        return self

    async def __anext__(self) -> bytes:
        try:
            chunk = await self._content.readany()
        except (TimeoutError, aiohttp.ClientError) as error:
            raise _failure(error) from error
        if not chunk:
            raise StopAsyncIteration
        return chunk


IDLE_KEEPALIVE_S = 4.0
# Response header fields may be large (a router's model-usage receipt is allowed 12,288 bytes);
# read them whole so the receipt check, not the HTTP parser, decides.
HEADER_FIELD_LIMIT = 65_536


class AiohttpTransport:
    """One ``aiohttp.ClientSession`` with a connection pool of ``limit`` sockets."""

    name = "aiohttp"

    def __init__(self, limit: int = 64, *, keep_alive: bool = True) -> None:
        self.limit = limit
        self.keep_alive = keep_alive
        self._session: aiohttp.ClientSession | None = None
        self._timeouts: dict[tuple[float, float], aiohttp.ClientTimeout] = {}

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # Idle pooled connections are dropped after 4 s, before common servers drop them
            # (llama.cpp's HTTP library and uvicorn close idle keep-alive sockets after 5 s);
            # reusing a socket the server just closed fails the call before it is sent.
            connector = (
                aiohttp.TCPConnector(
                    limit=self.limit,
                    limit_per_host=0,
                    ttl_dns_cache=300,
                    keepalive_timeout=IDLE_KEEPALIVE_S,
                )
                if self.keep_alive
                else aiohttp.TCPConnector(limit=self.limit, limit_per_host=0, force_close=True)
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=True,
                trust_env=False,
                raise_for_status=False,
                max_field_size=HEADER_FIELD_LIMIT,
                max_line_size=HEADER_FIELD_LIMIT,
            )
        return self._session

    @asynccontextmanager
    async def post(self, request: HttpRequest) -> AsyncIterator[_Response]:
        key = (request.connect_timeout_s, request.read_timeout_s)
        timeout = self._timeouts.get(key)
        if timeout is None:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=key[0], sock_read=key[1])
            self._timeouts[key] = timeout
        try:
            async with self._client().post(
                request.url,
                data=BytesPayload(request.body),
                headers=request.headers,
                timeout=timeout,
            ) as response:
                headers = {key.lower(): value for key, value in response.headers.items()}
                yield _Response(response.status, headers, response)
        except (TimeoutError, aiohttp.ClientError) as error:
            raise _failure(error) from error

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
