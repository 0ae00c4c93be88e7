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
    """An ``httpx.AsyncClient`` (of the given flavour) answered by ``handle``.

    One client serves every cell of the session, so closing it (``async with`` in a body, an
    SDK client's ``close()``) leaves it open: it holds no connection to release."""

    class InProcessAsyncTransport(httpx.AsyncBaseTransport):  # type: ignore[misc,name-defined]
        async def handle_async_request(self, request: Any) -> Any:
            status, headers, content = await handle(
                request.method, request.url.path, await request.aread()
            )
            return httpx.Response(status, headers=headers, content=content, request=request)

    class InProcessAsyncClient(httpx.AsyncClient):  # type: ignore[misc,name-defined]
        async def aclose(self) -> None:
            pass

        async def __aenter__(self) -> Any:
            return self

        async def __aexit__(self, *exc_info: object) -> None:
            pass

    return InProcessAsyncClient(
        transport=InProcessAsyncTransport(), base_url=BASE_URL, trust_env=False
    )


def sync_client(httpx: ModuleType, handle: SyncHandler) -> Any:
    """An ``httpx.Client`` (of the given flavour) answered by ``handle``; shared, like
    ``async_client``'s, and so never closed."""

    class InProcessTransport(httpx.BaseTransport):  # type: ignore[misc,name-defined]
        def handle_request(self, request: Any) -> Any:
            status, headers, content = handle(request.method, request.url.path, request.read())
            return httpx.Response(status, headers=headers, content=content, request=request)

    class InProcessClient(httpx.Client):  # type: ignore[misc,name-defined]
        def close(self) -> None:
            pass

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc_info: object) -> None:
            pass

    return InProcessClient(transport=InProcessTransport(), base_url=BASE_URL, trust_env=False)


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
