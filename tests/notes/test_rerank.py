"""The late-interaction reranker: MaxSim scoring, the token embeddings of both embedders, the
bounded passage cache, and reranked searches of the shipped corpus with the real MiniLM."""

from __future__ import annotations

from collections.abc import Sequence

import numpy
import pytest

from pytest_srbench.core.models import RETRIEVAL_RERANKERS
from pytest_srbench.notes.embedding import HashingEmbedder, TokenEmbedder, Vectors
from pytest_srbench.notes.index import QueryError
from pytest_srbench.notes.rerank import (
    RERANK_DEPTH,
    RERANKERS,
    TokenCache,
    UnknownReranker,
    maxsim_scores,
    rerank,
    reranker_name,
)

RPO = "How much data can we lose at most when the invoice database fails over?"  # n01 answers


def unit(*rows: Sequence[float]) -> Vectors:
    matrix = numpy.array(rows, dtype=numpy.float32)
    return matrix / numpy.linalg.norm(matrix, axis=1, keepdims=True)


def notes(result):
    return [item["note_id"] for item in result["results"]]


# --- pure scoring -----------------------------------------------------------------------------


def test_maxsim_sums_each_query_tokens_best_cosine():
    query = unit([1, 0], [0, 1])
    close = unit([1, 0], [0.6, 0.8])  # best for token 1: 1.0, for token 2: 0.8
    far = unit([-1, 0])  # best: -1.0 and 0.0
    empty = numpy.zeros((0, 2), dtype=numpy.float32)
    scores = maxsim_scores(query, [close, far, empty])
    assert scores.tolist() == pytest.approx([1.8, -1.0, 0.0])
    assert maxsim_scores(numpy.zeros((0, 2), dtype=numpy.float32), [close]).tolist() == [0.0]
    assert maxsim_scores(query, []).shape == (0,)


def test_rerank_orders_by_score_and_keeps_the_first_stage_order_on_ties():
    query = unit([1, 0])
    passages = [unit([0, 1]), unit([1, 0]), unit([0, 1]), unit([1, 1])]
    ranked = rerank([7, 3, 9, 4], query, passages)
    assert [item for item, _ in ranked] == [3, 4, 7, 9]
    assert ranked[0][1] == pytest.approx(1.0) and ranked[1][1] == pytest.approx(0.7071, abs=1e-4)


def test_reranker_names_and_the_plan_checks_agree():
    assert reranker_name(None) is None and reranker_name("none") is None
    assert reranker_name("minilm-maxsim") == "minilm-maxsim"
    assert RERANKERS == RETRIEVAL_RERANKERS  # core checks plans without importing notes
    for bad in ("cross-encoder", "", 1, ["minilm-maxsim"]):
        with pytest.raises(UnknownReranker, match="null or one of: none, minilm-maxsim"):
            reranker_name(bad)


def test_the_token_cache_evicts_the_least_recently_used_within_its_bound():
    cache = TokenCache(max_tokens=5)

    def tokens(count: int) -> Vectors:
        return numpy.ones((count, 2), dtype=numpy.float32)

    cache.put(1, tokens(2))
    cache.put(2, tokens(2))
    assert set(cache.get([1])) == {1}  # 1 is now the most recently used
    cache.put(3, tokens(2))  # 6 > 5: 2 goes
    assert set(cache.get([1, 2, 3])) == {1, 3} and cache.tokens == 4
    cache.put(4, tokens(6))  # larger than the whole bound: not kept, nothing evicted
    assert set(cache.get([1, 3, 4])) == {1, 3} and len(cache) == 2
    cache.put(1, tokens(1))  # replaced, counted once
    assert cache.tokens == 3


# --- token embeddings -------------------------------------------------------------------------


def test_hashing_token_embeddings_are_one_signed_bucket_per_word():
    embedder = HashingEmbedder()
    assert isinstance(embedder, TokenEmbedder)
    first, empty = embedder.token_embeddings(["The fridge, the FRIDGE!", "?!"])
    assert first.shape == (4, 384) and empty.shape == (0, 384)
    assert numpy.count_nonzero(first, axis=1).tolist() == [1, 1, 1, 1]
    assert numpy.array_equal(first[0], first[2]) and numpy.array_equal(first[1], first[3])
    (passage,) = embedder.token_embeddings(["clean the fridge on friday"])
    # MaxSim over words counts the query's words the passage holds: the, fridge, the, fridge
    assert maxsim_scores(first, [passage])[0] == pytest.approx(4.0)


def test_minilm_token_embeddings_are_the_word_pieces_unit_states(minilm):
    assert isinstance(minilm, TokenEmbedder)
    short = "Who approves travel?"
    long = "The second parent may take 12 weeks of paid leave within the first year."
    pieces = len(minilm.token_ids([short])[0]) - 2  # [CLS] and [SEP] left out
    alone = minilm.token_embeddings([short])[0]
    batched = minilm.token_embeddings([long, short, ""])
    assert alone.shape == (pieces, 384) and batched[2].shape == (0, 384)
    assert numpy.allclose(numpy.linalg.norm(alone, axis=1), 1.0, atol=1e-5)
    assert numpy.abs(batched[1] - alone).max() < 1e-4  # padding in a batch changes nothing
    cut = minilm.token_embeddings([" ".join(["word"] * 400)])[0]
    assert len(cut) == 254  # 256 word pieces at most, [CLS] and [SEP] among them


# --- reranked searches ------------------------------------------------------------------------


def test_the_reranker_rescores_the_first_stage_candidates_by_maxsim(minilm_index, minilm):
    plain = minilm_index.search(RPO, "vector", top_k=RERANK_DEPTH, embedder=minilm)
    reranked = minilm_index.search(
        RPO, "vector", top_k=5, embedder=minilm, reranker="minilm-maxsim"
    )
    assert notes(plain)[0] != "n01" and notes(reranked)[0] == "n01"  # the paraphrase, fixed
    # the candidates are the first stage's 20 best; their token embeddings are now cached
    first = minilm_index.vector_ranking(minilm.embed([RPO])[0], RERANK_DEPTH)
    candidates = [item for item, _ in first]
    cached = minilm_index.passage_tokens.get(candidates)
    assert sorted(cached) == sorted(candidates)
    top = plain["results"][0]
    (fresh,) = minilm.token_embeddings([f"{top['title']}\n{top['text']}"])
    assert numpy.abs(cached[candidates[0]] - fresh).max() < 1e-4  # the passage, title first
    block_of = dict(zip(candidates, [r["block_id"] for r in plain["results"]], strict=True))
    query = minilm.token_embeddings([RPO])[0]
    expected = rerank(candidates, query, [cached[item] for item in candidates])[:5]
    assert [(r["block_id"], r["score"]) for r in reranked["results"]] == [
        (block_of[item], pytest.approx(score, abs=1e-4)) for item, score in expected
    ]
    assert [r["rank"] for r in reranked["results"]] == [1, 2, 3, 4, 5]
    assert reranked["reranker"] == {
        "name": "minilm-maxsim",
        "source": "local",
        "model_id": "sentence-transformers/all-MiniLM-L6-v2",
        "dimensions": 384,
        "version": "0.1.0",
        "fallback_reason": None,
        "candidates": RERANK_DEPTH,
    }
    assert reranked["embedding"] == plain["embedding"]  # the first stage's query vector
    assert reranked["took_ms"] > 0


def test_an_fts_search_can_be_reranked_and_keeps_its_not_used_embedding(minilm_index, minilm):
    plain = minilm_index.search("fridge", "fts", top_k=RERANK_DEPTH)  # two blocks say fridge
    result = minilm_index.search(
        "fridge", "fts", top_k=1, embedder=minilm, reranker="minilm-maxsim"
    )
    assert len(plain["results"]) == result["reranker"]["candidates"] == 2
    assert len(result["results"]) == 1 and result["embedding"]["source"] == "not_used"
    assert minilm_index.search("fridge", "fts", reranker="none")["reranker"] is None


def test_passage_token_embeddings_are_cached_per_index(hashing_index):
    class Counting(HashingEmbedder):
        passages = 0

        def token_embeddings(self, texts: Sequence[str]) -> list[Vectors]:
            self.passages += len(texts)
            return super().token_embeddings(texts)

    embedder = Counting()
    hashing_index.passage_tokens = type(hashing_index.passage_tokens)()  # a fresh cache

    def search() -> dict[str, object]:
        return hashing_index.search(
            "paid time off", "hybrid", top_k=2, embedder=embedder, reranker="minilm-maxsim"
        )

    first = search()
    assert embedder.passages == 1 + RERANK_DEPTH  # the query, then every candidate once
    assert search()["results"] == first["results"] and embedder.passages == 2 + RERANK_DEPTH
    assert len(hashing_index.passage_tokens) == RERANK_DEPTH
    assert first["reranker"]["model_id"] == "srbench-hashing-384"  # word overlap, said so


def test_top_k_beyond_the_rerank_depth_reranks_all_it_returns(hashing_index):
    result = hashing_index.search(
        "policy", "fts", top_k=30, embedder=HashingEmbedder(), reranker="minilm-maxsim"
    )
    assert result["reranker"]["candidates"] == len(result["results"]) > RERANK_DEPTH
    scores = [item["score"] for item in result["results"]]
    assert scores == sorted(scores, reverse=True)


def test_a_query_the_reranker_cannot_embed_keeps_the_first_stage_order(hashing_index):
    class Failing(HashingEmbedder):
        def token_embeddings(self, texts: Sequence[str]) -> list[Vectors]:
            raise RuntimeError("out of memory")

    plain = hashing_index.search("fridge", "fts")
    result = hashing_index.search("fridge", "fts", embedder=Failing(), reranker="minilm-maxsim")
    assert result["results"] == plain["results"]
    assert result["reranker"]["source"] == "unavailable"
    assert result["reranker"]["fallback_reason"] == "embedding failed: out of memory"


@pytest.mark.parametrize(
    ("reranker", "embedder", "message"),
    [
        (
            "cross-encoder",
            HashingEmbedder(),
            "reranker must be null or one of: none, minilm-maxsim",
        ),
        ("minilm-maxsim", None, "needs the index's embedder"),
    ],
)
def test_a_reranker_that_cannot_run_is_a_query_error(hashing_index, reranker, embedder, message):
    with pytest.raises(QueryError, match=message):
        hashing_index.search("fridge", "fts", embedder=embedder, reranker=reranker)


def test_a_reranker_with_another_model_than_the_index_is_refused(minilm_index):
    with pytest.raises(QueryError, match="does not match"):
        minilm_index.search("fridge", "fts", embedder=HashingEmbedder(), reranker="minilm-maxsim")


def test_an_embedder_without_token_embeddings_cannot_rerank(hashing_index):
    class VectorsOnly:
        model_id, dimensions, version = "srbench-hashing-384", 384, "1"

        def embed(self, texts: Sequence[str]) -> Vectors:
            return HashingEmbedder().embed(texts)

    with pytest.raises(QueryError, match="srbench-hashing-384 gives no token embeddings"):
        hashing_index.search("fridge", "fts", embedder=VectorsOnly(), reranker="minilm-maxsim")
