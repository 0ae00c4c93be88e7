"""Choosing a transport by name: ``aiohttp`` (default, measured fastest here), ``httpx-aiohttp``
(the httpx API on aiohttp's pool) or ``httpx`` (httpx's own pool). Each HTTP library loads
when its transport is made."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from pytest_srbench.core.plan.choices import TRANSPORTS
from pytest_srbench.transport.base import HttpRequest, HttpResponse, Transport

DEFAULT_TRANSPORT = "aiohttp"


def make_transport(
    name: str = DEFAULT_TRANSPORT, *, connections: int = 64, keep_alive: bool = True
) -> Transport:
    """Build the named transport with a pool of ``connections`` sockets.

    ``keep_alive=False`` opens a fresh connection per request, for servers that close the
    connection after a streamed response without announcing it (llama.cpp's llama-server).
    """
    if name == "aiohttp" or not keep_alive:
        # loaded when a run starts, not when the plugin loads (collection never needs it)
        from pytest_srbench.transport.aiohttp_transport import AiohttpTransport

        return AiohttpTransport(limit=connections, keep_alive=keep_alive)
    import httpx  # only for the httpx transports: the default path never loads it

    from pytest_srbench.transport.httpx_transport import HttpxTransport

    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    if name == "httpx-aiohttp":
        from httpx_aiohttp import AiohttpTransport as HttpxAiohttp

        return HttpxTransport(
            httpx.AsyncClient(transport=HttpxAiohttp(limits=limits), trust_env=False), name
        )
    if name == "httpx":
        return HttpxTransport(httpx.AsyncClient(limits=limits, trust_env=False), name)
    raise ValueError(f"unknown transport {name!r}; choose one of {', '.join(TRANSPORTS)}")


class DeferredTransport:
    """The named transport, made (its HTTP library loaded) when the first request is sent: a
    run answered from the response cache may send none. The name is checked at once."""

    def __init__(
        self, name: str = DEFAULT_TRANSPORT, *, connections: int = 64, keep_alive: bool = True
    ) -> None:
        if name not in TRANSPORTS:
            raise ValueError(f"unknown transport {name!r}; choose one of {', '.join(TRANSPORTS)}")
        self.name = name
        self._settings = (connections, keep_alive)
        self._made: Transport | None = None

    @property
    def made(self) -> bool:
        """Whether a request was sent (the transport exists)."""
        return self._made is not None

    def post(self, request: HttpRequest) -> AbstractAsyncContextManager[HttpResponse]:
        if self._made is None:
            connections, keep_alive = self._settings
            self._made = make_transport(self.name, connections=connections, keep_alive=keep_alive)
        return self._made.post(request)

    async def aclose(self) -> None:
        if self._made is not None:
            await self._made.aclose()


def transport_for_run(
    name: str = DEFAULT_TRANSPORT,
    *,
    connections: int = 64,
    keep_alive: bool = True,
    cached: bool = False,
) -> Transport:
    """A run's transport: made now, or with ``cached`` (the response cache is on and may
    answer every call) when its first request leaves."""
    if cached:
        return DeferredTransport(name, connections=connections, keep_alive=keep_alive)
    return make_transport(name, connections=connections, keep_alive=keep_alive)
