"""The run's transport made at once or on its first request (the response cache may answer
every call), against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pytest

from pytest_srbench.transport.base import HttpRequest
from pytest_srbench.transport.factory import DeferredTransport, transport_for_run


def test_an_unknown_transport_is_refused_at_once():
    with pytest.raises(ValueError, match="unknown transport 'curl'; choose one of aiohttp"):
        transport_for_run("curl", cached=True)


def test_a_deferred_transport_is_made_by_its_first_request_and_closes(sim):
    transport = transport_for_run("aiohttp", connections=4, cached=True)
    assert isinstance(transport, DeferredTransport) and not transport.made
    request = HttpRequest(
        url=f"{sim.base_url}/chat/completions",
        body=b'{"model":"always-right","messages":[{"role":"user","content":"hi"}]}',
        headers={"content-type": "application/json"},
        connect_timeout_s=5.0,
        read_timeout_s=5.0,
    )

    async def send() -> tuple[int, bytes]:
        async with transport.post(request) as response:
            body = b"".join([chunk async for chunk in response.chunks()])
        await transport.aclose()
        return response.status, body

    status, body = asyncio.run(send())
    assert transport.made and status == 200 and b'"choices"' in body


def test_closing_an_unused_deferred_transport_makes_nothing():
    transport = DeferredTransport("httpx")
    asyncio.run(transport.aclose())
    assert not transport.made
