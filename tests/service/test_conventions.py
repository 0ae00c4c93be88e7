"""Issue 46, points 4 and 8 over real HTTP: a resume cursor past the store's range is a 400
(never a stream that dies of an ``OverflowError``), and the API's conventions: the OpenAPI
document's types, statuses and bearer scheme, ``Allow`` on a 405, the ``Idempotency-Key``
header, a query-string token never logged whole, workers without the service token, a note for
a dataset file whose name cannot be an id."""

from __future__ import annotations

import httpx
import pytest

from tests.service.helpers import assert_error, create, wait_for

pytestmark = pytest.mark.slow


@pytest.fixture
def client(api):
    with httpx.Client(base_url=api.base_url, timeout=60) as http:
        yield http


@pytest.fixture(scope="module")
def one_run(api) -> dict:
    with httpx.Client(base_url=api.base_url, timeout=60) as http:
        return create(http, limit=1)


@pytest.mark.parametrize("cursor", [str(2**63), str(2**64 + 5), "9" * 40, "-1", "1e3"])
def test_last_event_id_out_of_range_is_a_400(client, one_run, cursor):
    run = one_run
    url = f"/api/runs/{run['id']}/events"
    with client.stream("GET", url, headers={"Last-Event-ID": cursor}) as stream:
        stream.read()
        assert stream.status_code == 400, stream.text
        assert stream.json()["error"]["code"] == "BENCHMARK_INVALID_REQUEST"
    wait_for(client, run["id"], {"completed"})
    ok = client.get(url, headers={"Last-Event-ID": str(2**62)})
    assert ok.status_code == 200 and ok.text == ""  # nothing past the end; the stream ends
    assert_error(client.get(url, params={"after_sequence": 2**63}), 422,
                 "BENCHMARK_INVALID_REQUEST")  # fmt: skip
