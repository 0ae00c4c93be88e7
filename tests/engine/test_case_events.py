"""A RAG cell through the engine against real HTTP retrieval services: its terminal event
carries the case result (metrics and the search's embedding record unchanged), and a search
that fails records an ``unavailable`` embedding in its row and event, with the public code."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from pytest_srbench.benchmarks.rag import RagAdapter
from pytest_srbench.benchmarks.registry import AdapterRegistry
from pytest_srbench.core.models import DatasetInfo, Target
from pytest_srbench.core.plan.budget import Budget
from pytest_srbench.engine import Engine, EngineOptions
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.store import GroupCommitWriter, open_store
from pytest_srbench.transport import make_transport
from tests.core.helpers import manifest
from tests.engine.helpers import assert_declared

ROW = {"case_id": "q1", "query": "Which command promotes the replica?",
       "expected_note_ids": ["n01"], "expected_block_ids": ["n01-b3"], "citation_required": True}  # fmt: skip
EMBEDDING = {"source": "api", "model_id": "e5", "dimensions": 8, "version": None,
             "fallback_reason": None, "route_version": 2,
             "requested_route": {"provider_id": "p", "model": "e5", "endpoint": "embeddings",
                                 "dimensions": 8},
             "attempted_space": "p/e5/8"}  # fmt: skip


class Search(BaseHTTPRequestHandler):
    """``/up/retrieval/search`` answers one hit; ``/down/…`` is a 503."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        up = self.path.startswith("/up/")
        body = json.dumps({"results": [{"note_id": "n01", "block_id": "n01-b3"}], "mode": "vector",
                           "took_ms": 1.5, "embedding": EMBEDDING} if up else {"error": "down"})  # fmt: skip
        self.send_response(200 if up else 503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def search_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Search)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_case_events_carry_the_result_and_a_failed_search_is_unavailable(
    tmp_path: Path, search_url
):
    adapter = RagAdapter.for_dataset("rag-x")
    targets = [Target(id=name, kind="retrieval", model="notes", base_url=f"{search_url}/{name}",
                      retrieval={"mode": "vector"}) for name in ("up", "down")]  # fmt: skip
    plan = manifest([adapter.render(ROW, 1)], targets, target_kinds={"rag-x": ["retrieval"]},
                    dataset=DatasetInfo(profile="smoke", seed=1, suites=[
                        {"benchmark": "rag-x", "kind": "rag", "selected": 1}]))  # fmt: skip
    store = open_store(tmp_path / "store")
    store.create_run("run-rag", plan)
    runtime = RunRuntime(
        run_id="run-rag", manifest=plan, store=store, writer=GroupCommitWriter(store),
        transport=make_transport("aiohttp", connections=2), adapters=AdapterRegistry([adapter]),
        base_urls={}, budget=Budget(cap_usd=plan.limits.max_cost_usd),
    )  # fmt: skip
    engine = Engine(runtime, EngineOptions(concurrency=2))
    engine.start([(plan.cases[0], target) for target in targets])
    for future in engine.slots.values():
        future.result(timeout=60)
    assert engine.join(60)

    rows = {row["target_id"]: row for row in store.results("run-rag")}
    assert_declared([], rows.values())
    assert rows["up"]["status"] == "completed" and rows["down"]["status"] == "failed"
    assert rows["down"]["details"]["rag"]["embedding"] == {
        "source": "unavailable", "model_id": None, "dimensions": None, "version": None,
        "fallback_reason": "Retrieval HTTP 503", "route_version": None,
        "requested_route": None, "attempted_space": None}  # fmt: skip
    events = {e["data"]["target_id"]: e for e in store.events("run-rag", limit=100)
              if e["kind"] in ("case_completed", "case_failed")}  # fmt: skip
    done, failed = events["up"]["data"], events["down"]["data"]
    assert done["correct"] is True and done["answer_status"] == "answered"
    assert done["embedding"] == EMBEDDING  # the search's own record, unchanged
    assert done["metrics"]["hit_at_1"] == 1.0 and done["latency_s"] > 0
    assert "answer" not in done and "code" not in done
    assert failed["code"] == "BENCHMARK_CASE_EVALUATION_FAILED"
    assert failed["reason"] == "Retrieval HTTP 503" and failed["correct"] is None
    assert failed["embedding"] == rows["down"]["details"]["rag"]["embedding"]
