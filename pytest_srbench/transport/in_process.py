"""HTTP clients whose requests never leave the process: each one is answered by a handler
function (how ``srbench_client`` plugs the engine's journaled calls into an SDK that takes an
``http_client``, such as the ``openai`` SDK).

The clients are built from whichever httpx flavour the SDK uses (``httpx``, or ``httpx2`` for
the SDKs that moved to it): both have the same transport interface.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Awaitable, Callable
from types import ModuleType
from typing import Any

# (method, path, body) -> (status, headers, body)
Reply = tuple[int, dict[str, str], bytes]
AsyncHandler = Callable[[str, str, bytes], Awaitable[Reply]]
SyncHandler = Callable[[str, str, bytes], Reply]

BASE_URL = "http://srbench.invalid/v1"  # never resolved: the transport answers every request


def async_client(httpx: ModuleType, handle: AsyncHandler) -> Any:
    """An ``httpx.AsyncClient`` (of the given flavour) answered by ``handle``."""

    class InProcessAsyncTransport(httpx.AsyncBaseTransport):  # type: ignore[misc,name-defined]
        async def handle_async_request(self, request: Any) -> Any:
            body = await request.aread()
            status, headers, content = await handle(request.method, request.url.path, body)
            return httpx.Response(status, headers=headers, content=content, request=request)

    return httpx.AsyncClient(
        transport=InProcessAsyncTransport(), base_url=BASE_URL, trust_env=False
    )


def sync_client(httpx: ModuleType, handle: SyncHandler) -> Any:
    """An ``httpx.Client`` (of the given flavour) answered by ``handle``."""

    class InProcessTransport(httpx.BaseTransport):  # type: ignore[misc,name-defined]
        def handle_request(self, request: Any) -> Any:
            body = request.read()
            status, headers, content = handle(request.method, request.url.path, body)
            return httpx.Response(status, headers=headers, content=content, request=request)

    return httpx.Client(transport=InProcessTransport(), base_url=BASE_URL, trust_env=False)


def default_httpx() -> ModuleType:
    import httpx

    return httpx


def sdk_httpx(sdk: ModuleType) -> ModuleType:
    """The httpx flavour an SDK's clients are built on (``httpx``, or ``httpx2``)."""
    base = sys.modules.get(f"{sdk.__name__}._base_client")
    for name in ("httpx2", "httpx"):
        if base is not None and isinstance(getattr(base, name, None), ModuleType):
            return importlib.import_module(name)
    return default_httpx()
