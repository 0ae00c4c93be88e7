"""Choosing a transport by name: ``aiohttp`` (default, measured fastest here), ``httpx-aiohttp``
(the httpx API on aiohttp's pool) or ``httpx`` (httpx's own pool). Each HTTP library loads
when its transport is made."""

from __future__ import annotations

from pytest_srbench.core.plan.choices import TRANSPORTS
from pytest_srbench.transport.base import Transport

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
