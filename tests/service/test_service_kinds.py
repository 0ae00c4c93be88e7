"""The Benchmark Service kinds over real HTTP: one run of each kind (a RAG run against a real
retrieval service whose second search fails, an agent run, a suite run and a mixed one)
created through the API and its ``/api/benchmarks/…`` aliases, then their ``kind``, the kind
filter, the config snapshot on the run (the same as the report's), the case events in the
stream and the report cells' embedding records."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from tests.service.helpers import TERMINAL, assert_error, sse_events, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("service-kinds")]

EMBEDDING = {"source": "not_used", "model_id": None, "dimensions": None, "version": None,
             "fallback_reason": None, "route_version": None, "requested_route": None,
             "attempted_space": None}  # fmt: skip
SEARCH_TARGET = """
[[tool.srbench.targets]]
id = "flaky-search"
kind = "retrieval"
model = "notes-fts"
base_url = "{url}"
retrieval = {{ mode = "fts" }}
"""


class FlakySearch(BaseHTTPRequestHandler):
    """A retrieval service with a usable index whose every second search answers 503."""

    searches = 0
    lock = threading.Lock()

    def answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.answer(200, {"blocks": 3, "fts_rows": 3, "vector_rows": 0, "embedding": {}})

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        with self.lock:
            FlakySearch.searches += 1
            up = FlakySearch.searches % 2 == 1
        if not up:
            self.answer(503, {"error": "overloaded"})
            return
        hit = {"note_id": "n01", "block_id": "n01-b3"}
        self.answer(200, {"results": [hit], "mode": "fts", "took_ms": 1.0, "embedding": EMBEDDING})

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def live(start_api) -> Iterator[Any]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), FlakySearch)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = start_api()
    config = api.project / "pyproject.toml"
    url = f"http://127.0.0.1:{server.server_address[1]}"
    config.write_text(config.read_text() + SEARCH_TARGET.format(url=url))
    yield api
    server.shutdown()


@pytest.fixture(scope="module")
def http(live) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live.base_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def runs(http) -> dict[str, dict[str, Any]]:
    """One finished run of each kind, started together (the RAG and agent ones by alias)."""
    requests = {
        "rag": ("/api/benchmarks/rag/runs", {"benchmarks": ["rag-smoke"], "limit": 2,
                                              "targets": ["flaky-search"], "concurrency": 1}),
        "agent": ("/api/benchmarks/agent/runs", {"benchmarks": ["agent-smoke"], "limit": 1,
                                                  "targets": ["sim-small"], "offline": True}),
        "suite": ("/api/runs", {"benchmarks": ["mmlu-pro"], "limit": 1, "targets": ["sim-small"]}),
        "mixed": ("/api/runs", {"benchmarks": ["mmlu-pro", "agent-smoke"], "limit": 1,
                                "targets": ["sim-small"], "offline": True}),
    }  # fmt: skip
    started = {}
    for kind, (path, body) in requests.items():
        response = http.post(path, json={**body, "idempotency_key": f"kind-{kind}"})
        assert response.status_code == 202, response.text
        started[kind] = response.json()["run"]
    return {kind: wait_for(http, run["id"], TERMINAL) for kind, run in started.items()}


def test_each_run_has_its_kind_and_the_kind_filter_pages_right(http, runs):
    assert {kind: run["kind"] for kind, run in runs.items()} == {
        "rag": "rag", "agent": "agent", "suite": "suite", "mixed": "mixed"}  # fmt: skip
    # issue 46, point 7: one failed RAG sample counts as zero in the metrics (failure_rate
    # says how many), so the run's metrics are complete and the run is completed
    assert {run["status"] for run in runs.values()} == {"completed"}
    assert all(run["error_code"] is None and run["error"] is None for run in runs.values())
    for kind, run in runs.items():
        listed = http.get("/api/runs", params={"kind": kind}).json()
        assert [r["id"] for r in listed["runs"]] == [run["id"]] and listed["total"] == 1
    page = http.get("/api/runs", params={"kind": "rag", "status": "completed"}).json()
    assert [r["id"] for r in page["runs"]] == [runs["rag"]["id"]] and page["total"] == 1
    assert http.get("/api/runs", params={"kind": "rag", "status": "failed"}).json()["total"] == 0
    offset = http.get("/api/runs", params={"kind": "agent", "offset": 1}).json()
    assert offset["runs"] == [] and offset["total"] == 1
    assert_error(http.get("/api/runs", params={"kind": "chat"}), 422, "BENCHMARK_INVALID_REQUEST")


def test_the_run_record_and_the_report_share_the_config_snapshot(http, runs):
    rag = runs["rag"]["config_snapshot"]
    assert set(rag) == {"rag"}
    assert rag["rag"]["retrieval"]["flaky-search"] == {"mode": "fts", "top_k": 5, "rrf_k": 60,
                                                       "reranker": "none"}  # fmt: skip
    assert rag["rag"]["reranker"] == {"flaky-search": "none"}
    assert set(rag["rag"]["local_embedding"]) == {"model_id", "version", "dimensions",
                                                  "fallback_reason"}  # fmt: skip
    for kind in ("rag", "agent", "mixed"):
        run = runs[kind]
        report = http.get(f"/api/runs/{run['id']}/report").json()
        for section, snapshot in run["config_snapshot"].items():
            reported = report[section]["config_snapshot"]
            assert {key: reported[key] for key in snapshot if key != "embedding"} == {
                key: value for key, value in snapshot.items() if key != "embedding"}  # fmt: skip
            if "embedding" in snapshot:
                assert reported["embedding"]["policy"] == snapshot["embedding"]["policy"]
    assert set(runs["agent"]["config_snapshot"]) == {"agent"}
    assert set(runs["mixed"]["config_snapshot"]) == {"agent"}
    assert runs["suite"]["config_snapshot"] is None


def saved_metrics(http, run_id: str, timeout: float = 60) -> dict[str, Any]:
    """The run record once its metric summary is there (the saved report's)."""
    deadline = time.monotonic() + timeout
    while True:
        run = http.get(f"/api/runs/{run_id}").json()["run"]
        if run["metrics"] is not None or time.monotonic() > deadline:
            assert run["metrics"] is not None, run
            return run
        time.sleep(0.1)


def test_the_run_record_carries_the_metric_summary(http, runs):
    """Issue 46, point 7: GET /api/runs/{id} has the status and the metric summary (null
    until the worker has saved the report, a moment after the run's status is final)."""
    run = saved_metrics(http, runs["rag"]["id"])
    (row,) = run["metrics"]["rag"]
    assert row["target_id"] == "flaky-search" and row["failure_rate"] == 0.5
    assert (row["total_cases"], row["successful_cases"], row["failed_cases"]) == (2, 1, 1)
    (target,) = run["metrics"]["targets"]
    assert target["id"] == "flaky-search" and target["failed"] == 1
    suite = saved_metrics(http, runs["suite"]["id"])["metrics"]
    assert suite["rag"] is None and suite["targets"][0]["accuracy"] is not None
    assert all("metrics" not in r or r["metrics"] is None
               for r in http.get("/api/runs").json()["runs"])  # fmt: skip


def test_service_created_rag_runs_record_the_index_as_pytest_does(http, runs):
    """Issue 46, point 3: the worker that adopts the service's queued run records the index."""
    rag = runs["rag"]
    report = http.get(f"/api/runs/{rag['id']}/report").json()
    index = report["rag"]["config_snapshot"]["index"]
    assert set(index) == {"flaky-search"} and index["flaky-search"]["blocks"] == 3
    assert rag["config_snapshot"]["rag"]["index"] == index  # the run record has the same


def test_report_cells_carry_the_embedding_records(http, runs):
    report = http.get(f"/api/runs/{runs['rag']['id']}/report").json()
    by_status = {cell["status"]: cell for cell in report["cells"]}
    assert by_status["completed"]["embedding"] == EMBEDDING  # the service's record, unchanged
    assert by_status["failed"]["embedding"] == {**EMBEDDING, "source": "unavailable",
                                                "fallback_reason": "Retrieval HTTP 503"}  # fmt: skip
    assert report["rag"]["config_snapshot"]["embedding"]["sources"] == {"not_used": 1,
                                                                        "unavailable": 1}  # fmt: skip


def test_case_events_in_the_stream_carry_the_case_results(http, runs):
    with http.stream("GET", f"/api/runs/{runs['rag']['id']}/events") as stream:
        events = [(e["event"], json.loads(e["data"])) for e in sse_events(stream.iter_lines())]
    cases = {name: data for name, data in events if name in ("CaseCompleted", "CaseFailed")}
    done, failed = cases["CaseCompleted"], cases["CaseFailed"]
    assert done["correct"] is not None and done["answer_status"] == "answered"
    assert done["embedding"] == EMBEDDING and set(done["metrics"]) >= {"hit_at_1", "mrr"}
    assert done["latency_s"] > 0 and done["cost_usd"] is None and "answer" not in done
    assert failed["status"] == "failed" and failed["code"] == "BENCHMARK_CASE_EVALUATION_FAILED"
    assert failed["reason"] == "Retrieval HTTP 503" and failed["correct"] is None
    assert failed["embedding"]["source"] == "unavailable"
    name, ended = events[-1]  # one failed sample: the run completed (issue 46, point 7)
    assert name == "RunCompleted" and ended["error_code"] is None
    assert ended["error"] == runs["rag"]["error"] is None
    with http.stream("GET", f"/api/runs/{runs['agent']['id']}/events") as stream:
        agent = [json.loads(e["data"]) for e in sse_events(stream.iter_lines())
                 if e["event"] == "CaseCompleted"]  # fmt: skip
    assert agent[0]["agent"]["status"] == "completed"
    assert isinstance(agent[0]["agent"]["succeeded"], bool) and agent[0]["agent"]["tool_calls"] >= 1


def test_benchmark_service_paths_are_aliases(http, runs, live):
    rag = runs["rag"]["id"]
    pairs = [("/api/benchmarks/datasets?kind=agent", "/api/datasets?kind=agent"),
             ("/api/benchmarks/runs?kind=rag&status=failed&limit=5&offset=0",
              "/api/runs?kind=rag&status=failed&limit=5&offset=0"),
             (f"/api/benchmarks/runs/{rag}", f"/api/runs/{rag}"),
             (f"/api/benchmarks/runs/{rag}/report", f"/api/runs/{rag}/report")]  # fmt: skip
    for alias, route in pairs:
        answer = http.get(alias)
        assert answer.status_code == 200 and answer.json() == http.get(route).json(), alias
    with http.stream("GET", f"/api/benchmarks/runs/{rag}/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        aliased = [e["id"] for e in sse_events(stream.iter_lines()) if "id" in e]
    assert aliased == [str(e["seq"]) for e in live.service.store().events(rag, limit=1000)]
    cancelled = http.post(f"/api/benchmarks/runs/{rag}/cancel")  # terminal: unchanged
    assert cancelled.status_code == 200
    unchanged = {**cancelled.json()["run"], "metrics": None}  # read once the report was saved
    assert unchanged == {**runs["rag"], "metrics": None}
    assert_error(http.get("/api/benchmarks/runs/run-nope"), 404, "BENCHMARK_RUN_NOT_FOUND")
    assert_error(http.post("/api/benchmarks/runs/run-nope/cancel"), 404, "BENCHMARK_RUN_NOT_FOUND")
    paths = http.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/api/benchmarks")]


def test_a_kinds_create_route_refuses_other_benchmarks_without_a_run(http, runs):
    before = http.get("/api/runs").json()["total"]
    wrong = http.post("/api/benchmarks/rag/runs", json={"benchmarks": ["rag-smoke", "mmlu-pro"],
                                                        "targets": ["flaky-search"]})  # fmt: skip
    assert_error(wrong, 422, "BENCHMARK_PLAN_INVALID")
    assert "runs rag datasets only, and mmlu-pro is not one" in wrong.json()["error"]["message"]
    everything = http.post("/api/benchmarks/agent/runs", json={"offline": True})  # sr-bench suites
    assert_error(everything, 422, "BENCHMARK_PLAN_INVALID")
    assert_error(http.post("/api/benchmarks/agent/runs", json={"benchmarks": ["rag-smoke"]}), 422,
                 "BENCHMARK_PLAN_INVALID")  # fmt: skip
    assert http.get("/api/runs").json()["total"] == before
