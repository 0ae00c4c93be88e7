"""A retrieval target's frozen search parameters (the reranker among them), a run's overrides
of them, and the search request the engine sends."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from pytest_srbench.core.calls.retrieval import search_body
from pytest_srbench.core.models import Target, check_run_retrieval


def retrieval_target(**params: object) -> Target:
    return Target(id="notes", kind="retrieval", model="notes", simulated=True, retrieval=params)


@pytest.mark.parametrize("reranker", [None, "none", "minilm-maxsim"])
def test_the_search_request_carries_the_targets_reranker(reranker):
    target = retrieval_target(mode="hybrid", top_k=8, rrf_k=30, reranker=reranker)
    assert search_body(target, "who approves travel?") == {
        "query": "who approves travel?", "mode": "hybrid", "top_k": 8, "rrf_k": 30,
        "reranker": reranker,
    }  # fmt: skip
    assert search_body(retrieval_target(mode="fts"), "q")["reranker"] is None  # not set


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"mode": "fts", "reranker": "cross-encoder"},
         "retrieval.reranker must be null or one of ['none', 'minilm-maxsim']"),
        ({"mode": "fts", "reranker": 1}, "retrieval.reranker"),
        ({"mode": "hybrid", "rrf_k": -1}, "retrieval.rrf_k must be an integer in 0..1000"),
        ({"mode": "hybrid", "rrf_k": 1001}, "retrieval.rrf_k"),
        ({"mode": "hybrid", "rrf_k": True}, "retrieval.rrf_k"),
        ({"mode": "fts", "top_k": 51}, "retrieval.top_k must be in 1..50"),
        ({"mode": "semantic"}, "retrieval.mode must be one of"),
        ({"top_k": 5}, "retrieval.mode must be one of"),
        ({"mode": "fts", "rerank": "minilm-maxsim"}, "unknown retrieval parameter(s) ['rerank']"),
    ],
)  # fmt: skip
def test_bad_retrieval_parameters_name_the_target_and_the_parameter(params, message):
    with pytest.raises(ValidationError) as caught:
        retrieval_target(**params)
    assert "retrieval target 'notes': " + message in str(caught.value)


def test_run_settings_are_checked_nulls_dropped_and_digit_strings_read():
    assert check_run_retrieval({}) == {}
    assert check_run_retrieval(
        {"mode": "fts", "top_k": "10", "rrf_k": 0, "reranker": "minilm-maxsim"}
    ) == {"mode": "fts", "top_k": 10, "rrf_k": 0, "reranker": "minilm-maxsim"}
    assert check_run_retrieval({"mode": None, "reranker": None, "top_k": 3}) == {"top_k": 3}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"rerankr": "none"},
         "unknown retrieval setting(s) 'rerankr'; a run may set mode, top_k, rrf_k, reranker"),
        ({"embedding_model": "x"}, "unknown retrieval setting(s) 'embedding_model'"),
        ({"top_k": True}, "retrieval.top_k must be in 1..50"),
        ({"top_k": "ten"}, "retrieval.top_k"),
        ({"rrf_k": 2000}, "retrieval.rrf_k"),
        ({"mode": "bm25"}, "retrieval.mode"),
        ({"reranker": "colbert"}, "retrieval.reranker"),
    ],
)  # fmt: skip
def test_bad_run_settings_are_refused_with_the_key(settings, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_run_retrieval(settings)


def test_unknown_run_settings_are_named_briefly():
    with pytest.raises(ValueError) as caught:
        check_run_retrieval({f"key{n}": 1 for n in range(50)} | {"x" * 500: 1})
    message = str(caught.value)
    assert message.startswith("unknown retrieval setting(s) 'key0', 'key1', 'key10', …;")
    assert len(message) < 200
    with pytest.raises(ValueError, match="top_k"):
        check_run_retrieval({"top_k": "²"})  # a digit int() cannot read is refused, not raised
