"""HTTP transports behind one small interface; the engine never imports an HTTP library."""

from pytest_srbench.transport.base import HttpRequest, HttpResponse, Transport, TransportFailure
from pytest_srbench.transport.factory import make_transport

__all__ = ["HttpRequest", "HttpResponse", "Transport", "TransportFailure", "make_transport"]
