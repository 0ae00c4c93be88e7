"""The transport interface: POST a JSON body and iterate the response bytes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

from pytest_srbench.core.calls.failures import CallFailure


class TransportFailure(CallFailure):
    """A connection, timeout or protocol error below HTTP; message starts with its kind."""


@dataclass(frozen=True)
class HttpRequest:
    """One POST with its timeouts (connect, and idle time allowed between received bytes)."""

    url: str
    body: bytes
    headers: Mapping[str, str]
    connect_timeout_s: float
    read_timeout_s: float


class HttpResponse(Protocol):
    """Status, lower-cased headers and the body as a stream of byte chunks."""

    status: int
    headers: Mapping[str, str]

    def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive; raises ``TransportFailure`` on errors."""
        ...


class Transport(Protocol):
    """Sends requests; one instance per process, shared by every concurrent call."""

    name: str

    def post(self, request: HttpRequest) -> AbstractAsyncContextManager[HttpResponse]: ...

    async def aclose(self) -> None: ...
