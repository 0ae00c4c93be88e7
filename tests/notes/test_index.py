"""The retrieval index over the shipped corpus: building, the three search modes, FTS query
sanitising, fusion, error cases, the corpus loader and the build-once cache."""

import json
import os
import random
import sqlite3
from pathlib import Path

import pytest

from pytest_srbench.notes.embedding import HashingEmbedder
from pytest_srbench.notes.index import (
    CorpusError,
    IndexUnavailable,
    QueryError,
    RetrievalIndex,
    cache_file_name,
    cached_index,
    corpus_sha256,
    default_cache_dir,
    default_corpus_path,
    fts_query,
    load_corpus,
    rrf_fuse,
)

LEXICAL = "hbk_ prefix"  # a literal token only n08-b1 contains
PARAPHRASE = "How long can a new dad stay home with the baby?"  # n14 says "second parent", "leave"


def ids(result):
    return [item["block_id"] for item in result["results"]]


def notes(result):
    return [item["note_id"] for item in result["results"]]


# --- the shipped corpus -----------------------------------------------------------------------


def test_shipped_corpus_has_about_thirty_notes_of_three_to_six_blocks(corpus):
    assert corpus["corpus_id"] == "srbench-notes-v1"
    assert 28 <= len(corpus["notes"]) <= 40
    for note in corpus["notes"]:
        assert 3 <= len(note["blocks"]) <= 6 and note["title"] and note["tags"]
        for number, block in enumerate(note["blocks"], start=1):
            assert block["block_id"] == f"{note['note_id']}-b{number}"


def test_shipped_corpus_is_package_data():
    assert default_corpus_path().is_file()
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text()
    assert '"notes/corpus/*.json"' in pyproject


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[]", "expected a JSON object"),
        ('{"notes": []}', "'corpus_id' must be a non-empty string"),
        ('{"corpus_id": "c", "notes": []}', "'notes' must be a non-empty list"),
        (
            '{"corpus_id": "c", "notes": [{"note_id": "a", "title": "t", "blocks": []}]}',
            "notes[0]: 'blocks'",
        ),
        (
            '{"corpus_id": "c", "notes": [{"note_id": "a", "title": "t", "blocks": '
            '[{"block_id": "x", "text": "one"}, {"block_id": "x", "text": "two"}]}]}',
            "notes[0].blocks[1]: duplicate block_id 'x'",
        ),
        (
            '{"corpus_id": "c", "notes": [{"note_id": "a", "title": "t", "blocks": '
            '[{"block_id": "x", "text": "  "}]}]}',
            "'text' must be non-empty",
        ),
    ],
)
def test_malformed_corpus_is_rejected_with_where_and_why(tmp_path, content, message):
    path = tmp_path / "corpus.json"
    path.write_text(content)
    with pytest.raises(CorpusError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_corpus(path)


def test_missing_corpus_file_is_a_corpus_error(tmp_path):
    with pytest.raises(CorpusError, match="cannot read the corpus"):
        load_corpus(tmp_path / "absent.json")


# --- building ---------------------------------------------------------------------------------


def test_info_counts_every_note_block_fts_row_and_vector(minilm_index, corpus):
    info = minilm_index.info()
    blocks = sum(len(note["blocks"]) for note in corpus["notes"])
    assert info["corpus_id"] == "srbench-notes-v1"
    assert info["corpus_sha256"] == corpus_sha256(corpus)
    assert (info["notes"], info["blocks"]) == (len(corpus["notes"]), blocks)
    assert info["fts_rows"] == info["vector_rows"] == blocks
    assert info["embedding"] == {
        "model_id": "sentence-transformers/all-MiniLM-L6-v2",
        "dimensions": 384,
        "version": "0.1.0",
    }
    assert info["engine_version"] == "1" and info["index_id"].startswith("idx-")
    assert set(info) == {"index_id", "corpus_id", "corpus_sha256", "notes", "blocks", "fts_rows", "vector_rows", "embedding", "engine_version"}  # fmt: skip


def test_the_file_has_the_documented_tables(minilm_index):
    with sqlite3.connect(minilm_index.path) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        meta = dict(db.execute("SELECT key, value FROM meta"))
    assert {"notes", "blocks", "blocks_fts", "vectors", "meta"} <= tables
    assert set(meta) == {"corpus_id", "corpus_sha256", "model_id", "dimensions", "version", "built_at", "engine_version"}  # fmt: skip


# --- the three modes --------------------------------------------------------------------------


def test_a_lexical_query_is_found_by_fts_but_not_by_vector(minilm_index, minilm):
    fts = minilm_index.search(LEXICAL, "fts")
    vector = minilm_index.search(LEXICAL, "vector", embedder=minilm)
    assert ids(fts)[0] == "n08-b1"
    assert ids(vector)[0] != "n08-b1"


def test_a_paraphrase_is_found_by_vector_but_not_by_fts(minilm_index, minilm):
    fts = minilm_index.search(PARAPHRASE, "fts", top_k=3)
    vector = minilm_index.search(PARAPHRASE, "vector", top_k=3, embedder=minilm)
    assert notes(vector) == ["n14", "n14", "n14"]
    assert notes(fts)[0] != "n14"


def test_a_synonym_without_any_shared_word_has_no_fts_hit_but_a_vector_one(minilm_index, minilm):
    assert minilm_index.search("throttling", "fts")["results"] == []
    assert notes(minilm_index.search("throttling", "vector", embedder=minilm))[0] == "n07"


def test_hybrid_fuses_both_rankings_by_reciprocal_rank(minilm_index, minilm):
    for query, expected in ((LEXICAL, "n08"), (PARAPHRASE, "n14")):
        hybrid = minilm_index.search(query, "hybrid", top_k=5, rrf_k=60, embedder=minilm)
        fts = ids(minilm_index.search(query, "fts", top_k=100))
        vector = ids(minilm_index.search(query, "vector", top_k=100, embedder=minilm))
        assert expected in notes(hybrid)[:3]
        for item in hybrid["results"]:
            score = sum(1 / (60 + ranking.index(item["block_id"]) + 1) for ranking in (fts, vector) if item["block_id"] in ranking)  # fmt: skip
            assert item["score"] == pytest.approx(score, abs=1e-6)
    lexical = minilm_index.search(LEXICAL, "hybrid", embedder=minilm)
    assert ids(lexical)[0] == "n08-b1"


def test_result_records_ranks_citations_and_embedding_metadata(minilm_index, minilm):
    fts = minilm_index.search("fridge cleaned Friday", "fts", top_k=3)
    assert [item["rank"] for item in fts["results"]] == [1, 2, 3]
    first = fts["results"][0]
    assert first["block_id"] == "n23-b1" and first["title"] == "Office kitchen rules"
    assert first["citation"] == {"note_id": "n23", "block_id": "n23-b1"}
    assert "16:00" in first["text"]
    scores = [item["score"] for item in fts["results"]]
    assert scores == sorted(scores, reverse=True)
    assert fts["mode"] == "fts" and fts["took_ms"] >= 0
    assert fts["embedding"] == {
        "source": "not_used",
        "model_id": None,
        "dimensions": None,
        "version": None,
        "fallback_reason": None,
        "route_version": None,
        "requested_route": None,
        "attempted_space": None,
    }
    assert fts["reranker"] is None
    for mode in ("vector", "hybrid"):
        record = minilm_index.search("fridge", mode, embedder=minilm)["embedding"]
        assert record == {
            "source": "local",
            "model_id": "sentence-transformers/all-MiniLM-L6-v2",
            "dimensions": 384,
            "version": "0.1.0",
            "fallback_reason": None,
            "route_version": None,
            "requested_route": None,
            "attempted_space": "sentence-transformers/all-MiniLM-L6-v2@0.1.0/384",
        }


def test_top_k_bounds_the_results(minilm_index, minilm):
    assert len(minilm_index.search("policy", "vector", top_k=1, embedder=minilm)["results"]) == 1
    everything = minilm_index.search("policy", "vector", top_k=1000, embedder=minilm)
    assert len(everything["results"]) == minilm_index.info()["blocks"]


def test_the_hashing_fallback_is_reported_in_the_embedding_record(hashing_index):
    result = hashing_index.search(
        "paid time off", "vector", embedder=HashingEmbedder(), fallback_reason="no model here"
    )
    assert notes(result)[0] == "n15"
    assert result["embedding"]["model_id"] == "srbench-hashing-384"
    assert result["embedding"]["fallback_reason"] == "no model here"
    assert result["embedding"]["attempted_space"] == "srbench-hashing-384@1/384"


def test_a_query_that_cannot_be_embedded_is_reported_unavailable(hashing_index):
    vector = hashing_index.search("???", "vector", embedder=HashingEmbedder())
    assert vector["results"] == [] and vector["embedding"]["source"] == "unavailable"
    assert vector["embedding"]["model_id"] == "srbench-hashing-384"  # the one attempted
    assert vector["embedding"]["attempted_space"] is None  # no query vector was made
    hybrid = hashing_index.search("paid time off", "hybrid", embedder=None)
    assert hybrid["embedding"]["source"] == "unavailable"
    assert hybrid["embedding"]["attempted_space"] is None
    assert ids(hybrid) == ids(hashing_index.search("paid time off", "fts"))


def test_an_embedder_of_another_model_is_refused(minilm_index):
    with pytest.raises(QueryError, match="does not match"):
        minilm_index.search("fridge", "vector", embedder=HashingEmbedder())


@pytest.mark.parametrize(
    ("mode", "top_k", "rrf_k", "message"),
    [
        ("semantic", 5, 60, "mode must be one of"),
        ("fts", 0, 60, "top_k"),
        ("fts", True, 60, "top_k"),
        ("hybrid", 5, -1, "rrf_k"),
    ],
)
def test_bad_arguments_are_query_errors(hashing_index, mode, top_k, rrf_k, message):
    with pytest.raises(QueryError, match=message):
        hashing_index.search("fridge", mode, top_k=top_k, rrf_k=rrf_k, embedder=HashingEmbedder())


def test_empty_index_parts_are_unavailable(tmp_path, corpus):
    path = tmp_path / "index.sqlite"
    RetrievalIndex.build(path, corpus, HashingEmbedder()).close()
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM vectors")
    index = RetrievalIndex.open(path)
    try:
        assert index.info()["vector_rows"] == 0
        assert ids(index.search("fridge", "fts"))
        for mode in ("vector", "hybrid"):
            with pytest.raises(IndexUnavailable, match="vector part"):
                index.search("fridge", mode, embedder=HashingEmbedder())
    finally:
        index.close()


# --- FTS query sanitising ---------------------------------------------------------------------


def test_fts_query_quotes_each_word_and_ors_them():
    assert fts_query("How many vacation days?") == '"many" OR "vacation" OR "days"'
    assert fts_query('say "hi" AND NOT bye*') == '"say" OR "hi" OR "not" OR "bye"'
    assert (
        fts_query("title:secret NEAR(a b) -x ^y")
        == '"title" OR "secret" OR "near" OR "b" OR "x" OR "y"'
    )
    assert fts_query("the and of") == '"the" OR "and" OR "of"'  # only stop words: keep them
    assert fts_query("hbk_ prefix") == '"hbk" OR "prefix"'
    assert fts_query("Café CAFÉ") == '"café"'


@pytest.mark.parametrize("query", ["", "   ", "?!", '""', "*", "() - ^ :", "___"])
def test_a_query_without_words_is_a_query_error(hashing_index, query):
    with pytest.raises(QueryError, match="no searchable words"):
        fts_query(query)
    with pytest.raises(QueryError):
        hashing_index.search(query, "fts")


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "OR",
        "AND AND",
        "NOT fridge",
        "fridge*",
        "NEAR(fridge",
        "blocks_fts:x",
        "a'b",
        "{title}: x",
    ],
)
def test_fts_syntax_in_user_text_never_breaks_the_match(hashing_index, query):
    hashing_index.search(query, "fts")  # no sqlite3.OperationalError


FUZZ_ALPHABET = "abcXYZ019 _-\"'*^:().,;{}[]+NEAROTDéß\u00a0\t\n\\/"
FUZZ_WORDS = [
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(",
    "title:",
    "text:",
    '"',
    "*",
    "^",
    "fridge",
    "{title text}:",
]


def test_random_text_is_a_result_list_or_a_query_error(hashing_index):
    rng = random.Random(20240521)
    for _ in range(400):
        parts = [
            rng.choice(FUZZ_WORDS)
            if rng.random() < 0.4
            else "".join(rng.choices(FUZZ_ALPHABET, k=rng.randint(0, 8)))
            for _ in range(rng.randint(0, 6))
        ]
        query = rng.choice(["", " "]).join(parts)
        try:
            result = hashing_index.search(query, "fts", top_k=3)
        except QueryError:
            continue
        assert len(result["results"]) <= 3


def test_rrf_fuse_sums_reciprocal_ranks_and_breaks_ties_deterministically():
    fused = rrf_fuse([[1, 2, 3], [3, 1]], rrf_k=60)
    assert [item for item, _ in fused] == [1, 3, 2]
    assert dict(fused)[1] == pytest.approx(1 / 61 + 1 / 62)
    assert dict(fused)[3] == pytest.approx(1 / 63 + 1 / 61)
    assert [item for item, _ in rrf_fuse([[5], [7]], rrf_k=0)] == [5, 7]
    assert rrf_fuse([[], []]) == []


# --- the cache --------------------------------------------------------------------------------


class CountingEmbedder(HashingEmbedder):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        return super().embed(texts)


def test_cached_index_builds_once_and_reuses_the_file(tmp_path):
    embedder = CountingEmbedder()
    first = cached_index(None, embedder, cache_dir=tmp_path)
    path = first.path
    mtime = path.stat().st_mtime_ns
    first.close()
    second = cached_index(None, embedder, cache_dir=tmp_path)
    try:
        assert second.path == path and path.stat().st_mtime_ns == mtime
        assert embedder.calls == 1
        assert second.info()["corpus_sha256"] == corpus_sha256(load_corpus())
        assert path.name == cache_file_name(corpus_sha256(load_corpus()), embedder)
        assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left
    finally:
        second.close()


def test_another_corpus_or_model_gets_its_own_file(tmp_path, corpus):
    edited = json.loads(json.dumps(corpus))
    edited["notes"][0]["blocks"][0]["text"] += " Edited."
    corpus_path = tmp_path / "edited.json"
    corpus_path.write_text(json.dumps(edited))
    cache = tmp_path / "cache"
    shipped = cached_index(None, HashingEmbedder(), cache_dir=cache)
    other = cached_index(corpus_path, HashingEmbedder(), cache_dir=cache)
    try:
        assert shipped.path != other.path
        assert len(list(cache.iterdir())) == 2
    finally:
        shipped.close()
        other.close()


def test_a_corrupt_cache_file_is_rebuilt(tmp_path):
    embedder = CountingEmbedder()
    target = tmp_path / cache_file_name(corpus_sha256(load_corpus()), embedder)
    target.write_bytes(b"not a database")
    index = cached_index(None, embedder, cache_dir=tmp_path)
    try:
        assert embedder.calls == 1 and index.info()["fts_rows"] > 0
    finally:
        index.close()


def test_the_cache_directory_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("SRBENCH_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_cache_dir() == tmp_path / "explicit"
    index = cached_index(None, HashingEmbedder())
    try:
        assert index.path.parent == tmp_path / "explicit"
    finally:
        index.close()
    monkeypatch.delenv("SRBENCH_CACHE_DIR")
    monkeypatch.setenv("SRBENCH_CACHE", str(tmp_path / "shared"))
    assert default_cache_dir() == tmp_path / "shared" / "retrieval"
    monkeypatch.delenv("SRBENCH_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert (
        default_cache_dir()
        == Path(os.path.expanduser("~")) / ".cache" / "pytest-srbench" / "retrieval"
    )
