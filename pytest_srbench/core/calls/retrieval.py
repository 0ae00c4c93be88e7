"""Retrieval targets, pure: the search request a retrieval target receives, the checks on
its answer, and the index compatibility check that must pass before any query
(docs/retrieval-protocol.md).

An incompatible index (empty, built with another embedding model or dimension than the
engine queries with or the target expects, or without vectors for a vector / hybrid mode)
refuses the run with ``BENCHMARK_INDEX_INCOMPATIBLE``, so an environment problem is never
reported as poor retrieval.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_srbench.core.benchmark_errors import BenchmarkError
from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.models import Target

SEARCH_PATH = "/retrieval/search"
INDEX_PATH = "/retrieval/index"


def search_params(target: Target) -> dict[str, Any]:
    """The retrieval parameters every search of the target sends, defaults filled in."""
    params = target.retrieval
    return {
        "mode": params["mode"],
        "top_k": int(params.get("top_k", 5)),
        "rrf_k": int(params.get("rrf_k", 60)),
        "reranker": params.get("reranker"),
    }


def search_body(target: Target, query: str) -> dict[str, Any]:
    """The frozen retrieval parameters of the target plus the case's query."""
    return {"query": query, **search_params(target)}


def parse_search(raw: bytes) -> dict[str, Any]:
    """A search answer: ``results`` ranked (each with note and block ids), or a call failure."""
    try:
        answer = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise CallFailure("Retrieval response is not valid JSON") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("results"), list):
        raise CallFailure("Retrieval response has no results list")
    for position, item in enumerate(answer["results"], start=1):
        missing = missing_id(item)
        if missing is not None:
            raise CallFailure(f"Retrieval result {position} has no {missing}")
    return answer


def missing_id(result: object) -> str | None:
    """The first of ``note_id`` / ``block_id`` that a ranked result lacks as a string (a
    result that is not a mapping lacks ``note_id``), or None when it has both."""
    if not isinstance(result, Mapping) or not isinstance(result.get("note_id"), str):
        return "note_id"
    if not isinstance(result.get("block_id"), str):
        return "block_id"
    return None


def cited_block_ids(result: Mapping[str, Any]) -> list[str]:
    """The blocks a result cites (its ``citation`` / ``citations``, else its own block)."""
    cited: list[str] = []
    citations = result.get("citations")
    if isinstance(citations, list):
        cited += [
            str(c.get("block_id")) for c in citations if isinstance(c, dict) and c.get("block_id")
        ]
    citation = result.get("citation")
    if isinstance(citation, dict) and citation.get("block_id"):
        cited.append(str(citation["block_id"]))
    return cited or [str(result["block_id"])]


def check_index(info: Mapping[str, Any], target: Target) -> None:
    """Raise ``BENCHMARK_INDEX_INCOMPATIBLE`` unless the engine's index can serve ``target``."""

    def refuse(reason: str) -> BenchmarkError:
        return BenchmarkError("BENCHMARK_INDEX_INCOMPATIBLE", f"target {target.id}: {reason}")

    if not isinstance(info, Mapping):
        raise refuse("the index description is not an object")
    if not info.get("blocks") or not info.get("fts_rows"):
        raise refuse("the index is empty")
    mode = target.retrieval["mode"]
    built: Mapping[str, Any] = (
        info["embedding"] if isinstance(info.get("embedding"), Mapping) else {}
    )
    engine: Mapping[str, Any] | None = (
        info["engine_embedding"] if isinstance(info.get("engine_embedding"), Mapping) else None
    )
    if mode in ("vector", "hybrid"):
        if not info.get("vector_rows"):
            raise refuse(f"mode {mode} needs a vector index, and it is empty")
        if not built.get("model_id") or not built.get("dimensions"):
            raise refuse("the index does not say which embedding model built it")
        if engine is not None and (
            engine.get("model_id") != built.get("model_id")
            or engine.get("dimensions") != built.get("dimensions")
        ):
            raise refuse(
                f"the engine embeds queries with {engine.get('model_id')} ({engine.get('dimensions')} dims) "
                f"but the index was built with {built.get('model_id')} ({built.get('dimensions')} dims)"
            )
    expected_model = target.retrieval.get("embedding_model")
    expected_dims = target.retrieval.get("embedding_dimensions")
    if expected_model is not None and built.get("model_id") != expected_model:
        raise refuse(
            f"embedding model {built.get('model_id')!r} differs from the expected {expected_model!r}"
        )
    if expected_dims is not None and built.get("dimensions") != expected_dims:
        raise refuse(
            f"embedding dimension {built.get('dimensions')} differs from the expected {expected_dims}"
        )
