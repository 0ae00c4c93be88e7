"""Which failures of a Hub download are asked for again (the rest are answers that would repeat)."""

from __future__ import annotations

import http.client

import pytest

from pytest_srbench.datasets.hubfetch import is_transfer_error

huggingface_hub = pytest.importorskip("huggingface_hub")


class ChunkedEncodingError(OSError):
    """Named like requests' error for a body cut short (matched by name, as the library's is)."""


def transfer_errors() -> list[BaseException]:
    found: list[BaseException] = [
        http.client.IncompleteRead(b"x" * 10, 20),
        ChunkedEncodingError("Connection broken"),
    ]
    httpx = pytest.importorskip("httpx")
    found.append(httpx.RemoteProtocolError("peer closed connection"))
    found.append(httpx.ReadTimeout("timed out"))
    found.append(httpx.ConnectError("refused"))
    return found


def test_a_cut_refused_or_timed_out_transfer_is_asked_for_again():
    for error in transfer_errors():
        assert is_transfer_error(error), error


def test_answers_from_the_hub_and_other_errors_are_not():
    from huggingface_hub import errors

    httpx = pytest.importorskip("httpx")
    response = httpx.Response(404, request=httpx.Request("GET", "http://127.0.0.1/x"))
    try:  # huggingface_hub >= 1.0 asks for the response (an httpx one)
        answered = errors.HfHubHTTPError("404 Client Error", response=response)
    except TypeError:  # before 1.0 it is optional (and a requests one)
        answered = errors.HfHubHTTPError("404 Client Error")
    assert not is_transfer_error(answered)
    assert not is_transfer_error(ValueError("bad parquet"))
    assert not is_transfer_error(PermissionError("read-only cache"))
    httpx = pytest.importorskip("httpx")
    assert not is_transfer_error(httpx.LocalProtocolError("a header we sent is invalid"))
    assert not is_transfer_error(httpx.UnsupportedProtocol("ftp://"))
