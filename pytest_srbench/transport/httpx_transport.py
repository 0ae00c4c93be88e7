"""Transport through ``httpx.AsyncClient``; the connection layer underneath is pluggable
(``httpx_aiohttp.AiohttpTransport`` by default, httpx's own pool, or a ``MockTransport``)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass

import httpx

from pytest_srbench.transport.base import HttpRequest, TransportFailure


def _failure(error: Exception) -> TransportFailure:
    if isinstance(error, httpx.ConnectTimeout):
        return TransportFailure("ConnectTimeout: could not connect in time", transient=True)
    if isinstance(error, httpx.ReadTimeout | httpx.WriteTimeout | httpx.PoolTimeout):
        return TransportFailure(
            f"ReadTimeout: no bytes within the idle timeout ({type(error).__name__})"
        )
    if isinstance(error, httpx.ConnectError):
        return TransportFailure(f"ConnectionError: {error}", transient=True)
    if isinstance(error, httpx.RemoteProtocolError | httpx.ReadError):
        return TransportFailure(
            f"ConnectionError: stream ended early ({type(error).__name__})", transient=True
        )
    return TransportFailure(f"{type(error).__name__}: transport error", transient=True)


@dataclass
class _Response:
    status: int
    headers: Mapping[str, str]
    inner: httpx.Response

    def chunks(self) -> _Chunks:
        return _Chunks(self.inner.aiter_raw())


class _Chunks:
    """Wraps httpx's byte iterator, mapping its errors to ``TransportFailure``."""

    __slots__ = ("_inner",)

    def __init__(self, inner: AsyncIterator[bytes]) -> None:
        self._inner = inner

    def __aiter__(self) -> _Chunks:
        return self

    async def __anext__(self) -> bytes:
        try:
            return await self._inner.__anext__()
        except httpx.HTTPError as error:
            raise _failure(error) from error


class HttpxTransport:
    """Streams with ``httpx``; ``client`` decides the connection layer."""

    def __init__(self, client: httpx.AsyncClient, name: str = "httpx") -> None:
        self.client = client
        self.name = name

    @asynccontextmanager
    async def post(self, request: HttpRequest) -> AsyncIterator[_Response]:
        timeout = httpx.Timeout(
            connect=request.connect_timeout_s,
            read=request.read_timeout_s,
            write=request.read_timeout_s,
            pool=None,
        )
        try:
            async with self.client.stream(
                "POST",
                request.url,
                content=request.body,
                headers=dict(request.headers),
                timeout=timeout,
            ) as response:
                headers = {key.lower(): value for key, value in response.headers.items()}
                yield _Response(response.status_code, headers, response)
        except httpx.HTTPError as error:
            raise _failure(error) from error

    async def aclose(self) -> None:
        await self.client.aclose()
