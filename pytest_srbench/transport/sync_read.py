"""The one synchronous HTTP reader: the few small JSON reads made before a run starts (a
router's configuration for its recipe, a retrieval target's index description). Every failure
is a ``ReadFailure`` whose ``str()`` is one line; ``kind`` names what went wrong."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pytest_srbench.core.errors import SrbenchError


class ReadFailure(SrbenchError):
    """A JSON read failed: no answer, an error status, or a body that is not JSON."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class JsonAnswer:
    """A successful read: the decoded body and the response headers (lower-case names)."""

    body: Any
    headers: Mapping[str, str]


class JsonReader:
    """GET requests on one connection pool; redirects are never followed."""

    def __init__(self, client: Any) -> None:
        self._client = client

    def get(self, url: str, headers: Mapping[str, str]) -> JsonAnswer:
        import httpx

        try:
            response = self._client.get(url, headers=dict(headers))
            response.raise_for_status()
            body = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise ReadFailure(type(error).__name__, str(error).split("\n")[0]) from None
        return JsonAnswer(body=body, headers={k.lower(): v for k, v in response.headers.items()})


@contextmanager
def json_reader(timeout_s: float, *, trust_env: bool = True) -> Iterator[JsonReader]:
    """A reader whose connections are closed when the block ends."""
    import httpx

    with httpx.Client(timeout=timeout_s, follow_redirects=False, trust_env=trust_env) as client:
        yield JsonReader(client)
