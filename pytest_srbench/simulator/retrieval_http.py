"""The retrieval protocol served by the simulator: ``POST /v1/retrieval/search`` and
``GET /v1/retrieval/index`` over the shipped notes corpus (docs/retrieval-protocol.md).

The index and the embedder are loaded lazily on the first retrieval request, in a worker
thread, so the simulator starts as fast as without them; the retrieval modules (numpy, SQLite,
the model) are imported only then."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_srbench.notes.local_embedding import EMBEDDER_ENV
from pytest_srbench.simulator.http import App, Request, Response, json_response

if TYPE_CHECKING:
    from pytest_srbench.notes.embedding import Embedder
    from pytest_srbench.notes.index import RetrievalIndex

MAX_QUERY_CHARS = 2000
MAX_TOP_K = 50
MAX_RRF_K = 1000
SEARCH_FIELDS = frozenset({"query", "mode", "top_k", "rrf_k", "reranker"})
STATS_KEY = "retrieval"


@dataclass
class Loaded:
    """A ready index with the embedder its vectors were made with."""

    index: RetrievalIndex
    embedder: Embedder
    fallback_reason: str | None


class BadRequest(ValueError):
    """The search body does not follow the protocol."""


def _load_default(prefer: str) -> Loaded:
    from pytest_srbench.notes.embedding import load_embedder
    from pytest_srbench.notes.index import cached_index

    embedder, reason = load_embedder(prefer)
    return Loaded(cached_index(None, embedder), embedder, reason)


class RetrievalService:
    """One simulator's retrieval backend, built on first use (at most once at a time).

    ``prefer`` picks the embedder (``auto``, ``hashing``, ``minilm``; default from
    ``$SRBENCH_SIM_EMBEDDER``); ``loader`` replaces the whole loading step (tests)."""

    def __init__(
        self, prefer: str | None = None, loader: Callable[[], Loaded] | None = None
    ) -> None:
        self.prefer = prefer or os.environ.get(EMBEDDER_ENV, "").strip() or "auto"
        self._loader = loader or (lambda: _load_default(self.prefer))
        self._loaded: Loaded | None = None
        self._lock: asyncio.Lock | None = None

    @property
    def loaded(self) -> Loaded | None:
        return self._loaded

    async def ready(self) -> Loaded:
        """The loaded backend; the first call builds or opens the cached index off the loop.
        A failed load raises and is retried by the next request."""
        if self._loaded is not None:
            return self._loaded
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._loaded is None:
                self._loaded = await asyncio.get_running_loop().run_in_executor(None, self._loader)
        return self._loaded


def _problem(status: int, code: str, message: str) -> Response:
    return json_response(
        {"error": {"code": code, "message": message}},
        status=status,
        headers={"x-srbench-simulator": "1"},
    )


def _integer(body: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = body.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise BadRequest(f"'{name}' must be an integer from {low} to {high}")
    return value


def parse_search(body: Any) -> dict[str, Any]:
    """The validated search arguments of a request body, or BadRequest saying what is wrong."""
    from pytest_srbench.notes.index import MODES
    from pytest_srbench.notes.rerank import RERANKERS

    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    unknown = sorted(set(body) - SEARCH_FIELDS)
    if unknown:
        raise BadRequest(f"unknown field(s): {', '.join(unknown)}")
    query = body.get("query")
    if not isinstance(query, str) or not 1 <= len(query) <= MAX_QUERY_CHARS:
        raise BadRequest(f"'query' must be a string of 1 to {MAX_QUERY_CHARS} characters")
    if not query.strip():
        raise BadRequest("'query' is blank")
    mode = body.get("mode")
    if mode not in MODES:
        raise BadRequest(f"'mode' must be one of {', '.join(MODES)}")
    reranker = body.get("reranker")
    if reranker is not None and reranker not in RERANKERS:
        raise BadRequest(f"'reranker' must be null or one of: {', '.join(RERANKERS)}")
    return {
        "query": query,
        "mode": mode,
        "top_k": _integer(body, "top_k", 5, 1, MAX_TOP_K),
        "rrf_k": _integer(body, "rrf_k", 60, 0, MAX_RRF_K),
        "reranker": reranker,
    }


def _service(request: Request) -> RetrievalService:
    state = request.state
    state.by_model[STATS_KEY] += 1
    service: RetrievalService = state.retrieval
    return service


async def _ready(service: RetrievalService) -> Loaded | Response:
    try:
        return await service.ready()
    except Exception as error:  # corpus, model or disk trouble: the client sees a 503
        return _problem(
            503, "index_unavailable", f"the retrieval index could not be loaded: {error}"
        )


async def search(request: Request) -> Response:
    """``POST /v1/retrieval/search``."""
    from pytest_srbench.notes.index import IndexUnavailable, QueryError

    service = _service(request)
    try:
        body = request.json()
    except ValueError:
        return _problem(400, "invalid_request", "the body is not valid JSON")
    try:
        arguments = parse_search(body)
    except BadRequest as error:
        return _problem(400, "invalid_request", str(error))
    loaded = await _ready(service)
    if isinstance(loaded, Response):
        return loaded

    def run() -> dict[str, Any]:
        return loaded.index.search(
            **arguments, embedder=loaded.embedder, fallback_reason=loaded.fallback_reason
        )

    try:
        result = await asyncio.get_running_loop().run_in_executor(None, run)
    except QueryError as error:
        return _problem(400, "invalid_request", str(error))
    except IndexUnavailable as error:
        return _problem(503, "index_unavailable", str(error))
    return json_response(result, headers={"x-srbench-simulator": "1"})


async def index_info(request: Request) -> Response:
    """``GET /v1/retrieval/index``: the index's ``info()`` plus ``engine_embedding``, the
    embedder the engine embeds queries with."""
    loaded = await _ready(_service(request))
    if isinstance(loaded, Response):
        return loaded
    engine = {
        "model_id": loaded.embedder.model_id,
        "dimensions": loaded.embedder.dimensions,
        "version": loaded.embedder.version,
        "fallback_reason": loaded.fallback_reason,
    }
    body = loaded.index.info() | {"engine_embedding": engine}
    return json_response(body, headers={"x-srbench-simulator": "1"})


def add_routes(app: App) -> None:
    """Register the retrieval routes on a simulator application."""
    app.add_post("/v1/retrieval/search", search)
    app.add_get("/v1/retrieval/index", index_info)
