"""HTTP transports behind one small interface; the engine never imports an HTTP library.

Importing the package loads no HTTP library: ``make_transport`` (and with it aiohttp, or
httpx) loads on first use, so collecting items or building a plan never pays for it.
"""

from typing import TYPE_CHECKING, Any

from pytest_srbench.transport.base import HttpRequest, HttpResponse, Transport, TransportFailure

if TYPE_CHECKING:
    from pytest_srbench.transport.factory import make_transport

__all__ = ["HttpRequest", "HttpResponse", "Transport", "TransportFailure", "make_transport"]


def __getattr__(name: str) -> Any:
    if name == "make_transport":
        from pytest_srbench.transport.factory import make_transport

        return make_transport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
