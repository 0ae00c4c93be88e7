"""Issue 46, points 4 and 8 over real HTTP: a resume cursor past the store's range is a 400
(never a stream that dies of an ``OverflowError``), and the API's conventions: the OpenAPI
document's types, statuses and bearer scheme, ``Allow`` on a 405, the ``Idempotency-Key``
header, a query-string token never logged whole, workers without the service token, a note for
a dataset file whose name cannot be an id."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.service.conftest import free_port, make_project
from tests.service.helpers import assert_error, create, find_worker, serve, wait_for, wait_up

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


def test_openapi_types_statuses_and_bearer_scheme(client):
    document = client.get("/openapi.json").json()
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http", "scheme": "bearer",
        "description": "SRBENCH_SERVICE_TOKEN, needed when the service has one"}  # fmt: skip
    strings = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, answer in operation["responses"].items():
                schema = answer.get("content", {}).get("application/json", {}).get("schema")
                if status.startswith("2") and schema == {"type": "string"}:
                    strings.append(f"{method} {path}")
            if path.startswith("/api/") and path != "/api/health":
                assert {"bearer": []} in operation["security"], path
                assert {"401", "403", "413"} <= set(operation["responses"]), path
    assert strings == []  # JSON objects are declared as objects
    create_run = document["paths"]["/api/runs"]["post"]
    assert {"202", "409", "422", "429", "503"} <= set(create_run["responses"])
    assert "Idempotency-Key" in {p["name"] for p in create_run["parameters"]}
    events = document["paths"]["/api/runs/{run_id}/events"]["get"]["responses"]
    assert {"400", "429", "503"} <= set(events)


def test_405_names_the_allowed_methods(client):
    refused = client.delete("/api/runs")
    assert_error(refused, 405, "BENCHMARK_INVALID_REQUEST")
    assert set(refused.headers["Allow"].split(", ")) == {"GET", "HEAD", "POST"}
    assert client.put("/api/runs/x/cancel").headers["Allow"] == "POST"


def test_the_idempotency_key_header_is_honoured(client):
    body = {"benchmarks": ["mmlu-pro"], "limit": 1}
    first = client.post("/api/runs", json=body, headers={"Idempotency-Key": "header-key-1"})
    assert first.status_code == 202, first.text
    again = client.post("/api/runs", json=body, headers={"Idempotency-Key": "header-key-1"})
    assert again.status_code == 200 and again.json()["run"]["id"] == first.json()["run"]["id"]
    same = client.post("/api/runs", json={**body, "idempotency_key": "header-key-1"})
    assert same.status_code == 200 and same.json()["run"]["id"] == first.json()["run"]["id"]
    clash = client.post("/api/runs", json={**body, "idempotency_key": "other"},
                        headers={"Idempotency-Key": "header-key-1"})  # fmt: skip
    assert_error(clash, 422, "BENCHMARK_INVALID_REQUEST")
    bad = client.post("/api/runs", json=body, headers={"Idempotency-Key": "-bad key"})
    assert_error(bad, 422, "BENCHMARK_INVALID_REQUEST")
    wait_for(client, first.json()["run"]["id"], {"completed"})


def test_a_dataset_file_whose_name_is_not_an_id_gets_a_note(client, api):
    (api.project / "suites" / "données.json").write_text('{"dataset_id": "donnees"}')
    try:
        notes = client.get("/api/datasets").json()["notes"]
    finally:
        (api.project / "suites" / "données.json").unlink()
    (note,) = [n for n in notes if n["file"] == "données.json"]
    assert note["code"] == "BENCHMARK_DATASET_INVALID"
    assert "not a dataset id" in note["message"] and "ASCII" in note["message"]
    assert str(api.project) not in note["message"]


def test_serve_never_logs_a_query_token_and_workers_do_not_inherit_it(tmp_path):
    token = "tok-" + "s3cr3t" * 6
    project = make_project(tmp_path / "project")
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = serve(project, port, stdout=sink, SRBENCH_SERVICE_TOKEN=token)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_up(url)
        with httpx.Client(base_url=url, timeout=60) as http:
            refused = http.get("/api/runs", params={"token": token, "limit": 5})
            assert_error(refused, 401, "BENCHMARK_UNAUTHORIZED")
            http.headers["Authorization"] = f"Bearer {token}"
            run = create(http, limit=1)
            worker = find_worker(project, run["id"])
            environ = Path(f"/proc/{worker}/environ").read_bytes()
            assert token.encode() not in environ and b"SRBENCH_SERVICE_TOKEN" not in environ
            wait_for(http, run["id"], {"completed"})
    finally:
        process.terminate()
        process.wait(30)
    said = log.read_text()
    assert "GET /api/runs?token=[REDACTED]&limit=5" in said and token not in said
    worker_log = next((project / ".srbench").rglob("worker.log")).read_text()
    assert token not in worker_log
