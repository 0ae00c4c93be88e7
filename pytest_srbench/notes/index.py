"""The retrieval index: one SQLite file holding a notes corpus, an FTS5 table over its blocks
and their embedding vectors; search by ``fts`` (bm25), ``vector`` (cosine) or ``hybrid``
(reciprocal-rank fusion), optionally reranked (``notes/rerank.py``), the shipped corpus loader
and the build-once cache of index files.

Why one long module: the reference search engine is a self-contained program under test
(benchmarks call it over HTTP); it shares nothing with the harness."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy
from numpy.typing import NDArray

from pytest_srbench.core.errors import InputError, UnavailableError
from pytest_srbench.notes.embedding import Embedder, TokenEmbedder
from pytest_srbench.notes.rerank import (
    RERANK_DEPTH,
    TokenCache,
    Tokens,
    UnknownReranker,
    rerank,
    reranker_name,
)

ENGINE_VERSION = "1"
MODES = ("fts", "vector", "hybrid")
RRF_DEPTH = 100
MAX_QUERY_TERMS = 64
TITLE_WEIGHT = 0.5
DEFAULT_CORPUS = "corpus/notes.json"

_TERM = re.compile(r"[^\W_]+")
_STOPWORDS = frozenset(
    (
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "so",
        "than",
        "that",
        "the",
        "their",
        "them",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "you",
        "your",
    )
)

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE notes (
  note_id TEXT PRIMARY KEY, position INTEGER NOT NULL, title TEXT NOT NULL, tags TEXT NOT NULL
);
CREATE TABLE blocks (
  id INTEGER PRIMARY KEY, block_id TEXT NOT NULL UNIQUE,
  note_id TEXT NOT NULL REFERENCES notes(note_id), position INTEGER NOT NULL, text TEXT NOT NULL
);
CREATE VIRTUAL TABLE blocks_fts USING fts5(title, text, tokenize = 'porter unicode61');
CREATE TABLE vectors (id INTEGER PRIMARY KEY REFERENCES blocks(id), vector BLOB NOT NULL);
"""


class CorpusError(InputError):
    """The corpus file is missing or does not have the notes layout."""


class QueryError(InputError):
    """The search request cannot be answered as asked (bad mode, empty query, ...)."""


class IndexUnavailable(UnavailableError):
    """The part of the index that the mode needs is empty."""


# --- the corpus -------------------------------------------------------------------------------


def _require(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise CorpusError(f"{where}: {message}")


def validate_corpus(corpus: Any, source: str = "corpus") -> dict[str, Any]:
    """``corpus`` itself when it has the notes layout, else CorpusError naming the first fault."""
    _require(isinstance(corpus, dict), source, "expected a JSON object")
    _require(
        isinstance(corpus.get("corpus_id"), str) and bool(corpus["corpus_id"]),
        source,
        "'corpus_id' must be a non-empty string",
    )
    notes = corpus.get("notes")
    _require(isinstance(notes, list) and bool(notes), source, "'notes' must be a non-empty list")
    note_ids: set[str] = set()
    block_ids: set[str] = set()
    for n, note in enumerate(notes):
        where = f"{source}: notes[{n}]"
        _require(isinstance(note, dict), where, "expected an object")
        note_id = note.get("note_id")
        _require(isinstance(note_id, str) and bool(note_id), where, "'note_id' must be a string")
        _require(note_id not in note_ids, where, f"duplicate note_id {note_id!r}")
        note_ids.add(note_id)
        _require(isinstance(note.get("title"), str), where, "'title' must be a string")
        tags = note.get("tags", [])
        _require(
            isinstance(tags, list) and all(isinstance(tag, str) for tag in tags),
            where,
            "'tags' must be a list of strings",
        )
        blocks = note.get("blocks")
        _require(
            isinstance(blocks, list) and bool(blocks), where, "'blocks' must be a non-empty list"
        )
        for b, block in enumerate(blocks):
            at = f"{where}.blocks[{b}]"
            _require(isinstance(block, dict), at, "expected an object")
            block_id = block.get("block_id")
            _require(
                isinstance(block_id, str) and bool(block_id), at, "'block_id' must be a string"
            )
            _require(block_id not in block_ids, at, f"duplicate block_id {block_id!r}")
            block_ids.add(block_id)
            text = block.get("text")
            _require(isinstance(text, str) and bool(text.strip()), at, "'text' must be non-empty")
    return corpus  # type: ignore[no-any-return]


def default_corpus_path() -> Path:
    """The shipped corpus, ``pytest_srbench/notes/corpus/notes.json``."""
    return Path(str(resources.files("pytest_srbench.notes").joinpath(DEFAULT_CORPUS)))


def load_corpus(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Read and validate a corpus file (default: the shipped one)."""
    source = Path(path) if path is not None else default_corpus_path()
    try:
        raw = source.read_text(encoding="utf-8")
    except OSError as error:
        raise CorpusError(f"{source}: cannot read the corpus ({error.strerror})") from error
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as error:
        raise CorpusError(f"{source}: not valid JSON ({error})") from error
    return validate_corpus(data, str(source))


def corpus_sha256(corpus: Mapping[str, Any]) -> str:
    """Digest of the corpus content (canonical JSON: sorted keys, no spaces)."""
    canonical = json.dumps(corpus, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def block_passage(title: str, text: str) -> str:
    """What is embedded for a block: the note's title, then the block's text."""
    return f"{title}\n{text}"


# --- query helpers (pure) ---------------------------------------------------------------------


def fts_query(query: str) -> str:
    """An FTS5 MATCH expression for natural-language ``query``: its words, each quoted as a
    string (so no user text is read as FTS syntax), joined with OR. Stop words are dropped
    unless nothing else is left. QueryError when the query has no word at all."""
    words = list(dict.fromkeys(word.lower() for word in _TERM.findall(query)))
    if not words:
        raise QueryError("the query has no searchable words")
    kept = [word for word in words if word not in _STOPWORDS] or words
    return " OR ".join(f'"{word}"' for word in kept[:MAX_QUERY_TERMS])


def rrf_fuse(rankings: Sequence[Sequence[int]], rrf_k: int = 60) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion: each item scores Σ 1/(rrf_k + rank) over the rankings it is in
    (ranks from 1). Sorted best first; ties go to the better best rank, then the smaller id."""
    scores: dict[int, float] = {}
    best: dict[int, int] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (rrf_k + rank)
            best[item] = min(best.get(item, rank), rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], best[pair[0]], pair[0]))


def vector_space(model_id: str, version: str, dimensions: int) -> str:
    """The identity of an embedding vector space, ``model_id@version/dimensions`` (vectors
    compare only within one space)."""
    return f"{model_id}@{version}/{dimensions}"


def not_used_embedding() -> dict[str, Any]:
    """The ``embedding`` record of a search that did not embed anything."""
    return {
        "source": "not_used",
        "model_id": None,
        "dimensions": None,
        "version": None,
        "fallback_reason": None,
        "route_version": None,
        "requested_route": None,
        "attempted_space": None,
    }


# --- the index --------------------------------------------------------------------------------


def _connect(path: Path, *, read_only: bool) -> sqlite3.Connection:
    if read_only:
        uri = path.resolve().as_uri() + "?mode=ro"
        return sqlite3.connect(uri, uri=True, check_same_thread=False)
    return sqlite3.connect(path, check_same_thread=False)


def _index_id(meta: Mapping[str, str]) -> str:
    key = "|".join(
        meta[name]
        for name in ("corpus_sha256", "model_id", "dimensions", "version", "engine_version")
    )
    return "idx-" + hashlib.sha256(key.encode()).hexdigest()[:16]


class RetrievalIndex:
    """An opened index file (read-only). Thread-safe: SQLite reads are serialised by a lock and
    the block vectors are loaded once into memory."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection
        self._lock = threading.Lock()
        self.passage_tokens = TokenCache()  # the reranker's, filled on demand
        self._token_fill = threading.Lock()  # one thread embeds missing passages at a time
        self.meta: dict[str, str] = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        rows = self._db.execute("SELECT id, vector FROM vectors ORDER BY id").fetchall()
        dimensions = int(self.meta["dimensions"])
        self.vector_ids: NDArray[numpy.int64] = numpy.array(
            [row[0] for row in rows], dtype=numpy.int64
        )
        self.vectors: NDArray[numpy.float32] = (
            numpy.frombuffer(b"".join(row[1] for row in rows), dtype=numpy.float32)
            .reshape(len(rows), dimensions)
            .copy()
        )
        self.counts = {
            table: int(self._db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
            for table in ("notes", "blocks", "blocks_fts")
        }

    # building and opening

    @classmethod
    def build(
        cls, db_path: str | os.PathLike[str], corpus: Mapping[str, Any], embedder: Embedder
    ) -> RetrievalIndex:
        """Write a new index file at ``db_path`` (replacing any) and open it."""
        corpus = validate_corpus(dict(corpus))
        path = Path(db_path)
        path.unlink(missing_ok=True)
        notes: list[tuple[str, int, str, str]] = []
        blocks: list[tuple[int, str, str, int, str]] = []
        passages: list[str] = []
        titles: list[str] = []
        for position, note in enumerate(corpus["notes"]):
            notes.append(
                (note["note_id"], position, note["title"], json.dumps(note.get("tags", [])))
            )
            for index, block in enumerate(note["blocks"]):
                blocks.append(
                    (len(blocks) + 1, block["block_id"], note["note_id"], index, block["text"])
                )
                passages.append(block_passage(note["title"], block["text"]))
                titles.append(note["title"])
        vectors = numpy.asarray(embedder.embed(passages), dtype=numpy.float32)
        if vectors.shape != (len(passages), embedder.dimensions):
            raise ValueError(f"embedder returned shape {vectors.shape}")
        meta = {
            "corpus_id": corpus["corpus_id"],
            "corpus_sha256": corpus_sha256(corpus),
            "model_id": embedder.model_id,
            "dimensions": str(embedder.dimensions),
            "version": embedder.version,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "engine_version": ENGINE_VERSION,
        }
        with contextlib.closing(_connect(path, read_only=False)) as db, db:
            db.executescript(_SCHEMA)
            db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(meta.items()))
            db.executemany("INSERT INTO notes VALUES (?, ?, ?, ?)", notes)
            db.executemany("INSERT INTO blocks VALUES (?, ?, ?, ?, ?)", blocks)
            db.executemany(
                "INSERT INTO blocks_fts (rowid, title, text) VALUES (?, ?, ?)",
                [(row[0], title, row[4]) for row, title in zip(blocks, titles, strict=True)],
            )
            db.executemany(
                "INSERT INTO vectors VALUES (?, ?)",
                [(row[0], vector.tobytes()) for row, vector in zip(blocks, vectors, strict=True)],
            )
        return cls.open(path)

    @classmethod
    def open(cls, db_path: str | os.PathLike[str]) -> RetrievalIndex:
        """Open an existing index file read-only."""
        path = Path(db_path)
        if not path.is_file():
            raise FileNotFoundError(f"no retrieval index at {path}")
        connection = _connect(path, read_only=True)
        try:
            return cls(path, connection)
        except BaseException:
            connection.close()
            raise

    def close(self) -> None:
        self._db.close()

    def info(self) -> dict[str, Any]:
        """What the index holds and how it was built."""
        return {
            "index_id": _index_id(self.meta),
            "corpus_id": self.meta["corpus_id"],
            "corpus_sha256": self.meta["corpus_sha256"],
            "notes": self.counts["notes"],
            "blocks": self.counts["blocks"],
            "fts_rows": self.counts["blocks_fts"],
            "vector_rows": len(self.vector_ids),
            "embedding": {
                "model_id": self.meta["model_id"],
                "dimensions": int(self.meta["dimensions"]),
                "version": self.meta["version"],
            },
            "engine_version": self.meta["engine_version"],
        }

    # rankings

    def fts_ranking(self, query: str, limit: int) -> list[tuple[int, float]]:
        """(block id, bm25 score, higher is better) of blocks matching any query word."""
        match = fts_query(query)
        sql = (
            "SELECT rowid, bm25(blocks_fts, ?, 1.0) AS rank FROM blocks_fts "
            "WHERE blocks_fts MATCH ? ORDER BY rank, rowid LIMIT ?"
        )
        with self._lock:
            rows = self._db.execute(sql, (TITLE_WEIGHT, match, limit)).fetchall()
        return [(int(row[0]), -float(row[1])) for row in rows]

    def vector_ranking(
        self, query_vector: NDArray[numpy.float32], limit: int
    ) -> list[tuple[int, float]]:
        """(block id, cosine) of the ``limit`` nearest blocks."""
        if not len(self.vector_ids):
            return []
        scores = self.vectors @ query_vector.astype(numpy.float32)
        order = numpy.lexsort((self.vector_ids, -scores))[:limit]
        return [(int(self.vector_ids[i]), float(scores[i])) for i in order]

    def _blocks(self, ids: Sequence[int]) -> dict[int, tuple[str, str, str, str]]:
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        sql = (
            "SELECT b.id, b.note_id, b.block_id, n.title, b.text FROM blocks b "
            f"JOIN notes n ON n.note_id = b.note_id WHERE b.id IN ({marks})"
        )
        with self._lock:
            rows = self._db.execute(sql, list(ids)).fetchall()
        return {int(row[0]): (row[1], row[2], row[3], row[4]) for row in rows}

    def _embedding_record(self, embedder: Embedder, fallback_reason: str | None) -> dict[str, Any]:
        """The record of a query embedded by ``embedder``; ``attempted_space`` stays null
        until a query vector was made."""
        return {
            "source": "local",
            "model_id": embedder.model_id,
            "dimensions": embedder.dimensions,
            "version": embedder.version,
            "fallback_reason": fallback_reason,
            "route_version": None,
            "requested_route": None,
            "attempted_space": None,
        }

    def _check_embedder(self, embedder: Embedder) -> None:
        if (embedder.model_id, str(embedder.dimensions), embedder.version) != (
            self.meta["model_id"],
            self.meta["dimensions"],
            self.meta["version"],
        ):
            raise QueryError(
                f"the query embedder {embedder.model_id} {embedder.version} does not match the "
                f"index's {self.meta['model_id']} {self.meta['version']}"
            )

    def _embed_query(
        self, query: str, embedder: Embedder | None, fallback_reason: str | None
    ) -> tuple[NDArray[numpy.float32] | None, dict[str, Any]]:
        if embedder is None:
            record = not_used_embedding() | {"source": "unavailable"}
            return None, record | {"fallback_reason": "no embedder was given for the query"}
        self._check_embedder(embedder)
        record = self._embedding_record(embedder, fallback_reason)
        try:
            vector = numpy.asarray(embedder.embed([query]), dtype=numpy.float32)[0]
        except Exception as error:  # the model failed on this text: report, don't crash
            return None, record | {
                "source": "unavailable",
                "fallback_reason": f"embedding failed: {error}",
            }
        if not numpy.any(vector):
            return None, record | {
                "source": "unavailable",
                "fallback_reason": "the query embeds to the zero vector",
            }
        space = vector_space(embedder.model_id, embedder.version, embedder.dimensions)
        return vector, record | {"attempted_space": space}

    # the second stage

    def _reranker(
        self, reranker: object, embedder: Embedder | None
    ) -> tuple[str, TokenEmbedder] | None:
        """The reranker to apply and the embedder it uses (QueryError when it cannot)."""
        try:
            name = reranker_name(reranker)
        except UnknownReranker as error:
            raise QueryError(str(error)) from None
        if name is None:
            return None
        if embedder is None:
            raise QueryError(f"reranker {name} needs the index's embedder for the query")
        self._check_embedder(embedder)
        if not isinstance(embedder, TokenEmbedder):
            raise QueryError(f"reranker {name}: {embedder.model_id} gives no token embeddings")
        return name, embedder

    def _passage_tokens(self, ids: Sequence[int], embedder: TokenEmbedder) -> list[Tokens]:
        """The token embeddings of blocks ``ids`` (title and text, as embedded for the index),
        from the cache or embedded now and cached."""
        with self._token_fill:
            found = self.passage_tokens.get(ids)
            missing = [item for item in ids if item not in found]
            if missing:
                blocks = self._blocks(missing)
                texts = [block_passage(blocks[item][2], blocks[item][3]) for item in missing]
                for item, tokens in zip(missing, embedder.token_embeddings(texts), strict=True):
                    found[item] = tokens
                    self.passage_tokens.put(item, tokens)
        return [found[item] for item in ids]

    def _rerank(
        self,
        name: str,
        embedder: TokenEmbedder,
        query: str,
        ranked: list[tuple[int, float]],
        fallback_reason: str | None,
    ) -> tuple[list[tuple[int, float]], dict[str, Any]]:
        """The first stage's candidates in MaxSim order, and the ``reranker`` record. When the
        query or a passage cannot be embedded the first stage's order stands, with
        ``source: unavailable`` and the reason."""
        record = {
            "name": name,
            "source": "local",
            "model_id": embedder.model_id,
            "dimensions": embedder.dimensions,
            "version": embedder.version,
            "fallback_reason": fallback_reason,
            "candidates": len(ranked),
        }
        if not ranked:
            return ranked, record
        ids = [item for item, _ in ranked]
        try:
            query_tokens = embedder.token_embeddings([query])[0]
            passages = self._passage_tokens(ids, embedder)
        except Exception as error:  # the model failed on this text: report, don't crash
            return ranked, record | {
                "source": "unavailable",
                "fallback_reason": f"embedding failed: {error}",
            }
        if not len(query_tokens):
            return ranked, record | {
                "source": "unavailable",
                "fallback_reason": "the query has no tokens to compare",
            }
        return rerank(ids, query_tokens, passages), record

    def search(
        self,
        query: str,
        mode: str,
        top_k: int = 5,
        rrf_k: int = 60,
        embedder: Embedder | None = None,
        *,
        fallback_reason: str | None = None,
        reranker: str | None = None,
    ) -> dict[str, Any]:
        """The ``top_k`` best blocks for ``query`` by ``mode``, reranked when ``reranker`` is
        ``"minilm-maxsim"``: the mode's ``max(top_k, RERANK_DEPTH)`` best are re-scored by
        MaxSim over ``embedder``'s token embeddings (the answer's ``reranker`` record says so;
        null without a reranker). ``took_ms`` covers both stages.

        QueryError for an unknown mode or reranker, a bad ``top_k``/``rrf_k``, an fts/hybrid
        query without words, or a reranker without a matching token embedder; IndexUnavailable
        when the FTS rows (fts, hybrid) or the vectors (vector, hybrid) are empty. A query that
        cannot be embedded gives vector no results and hybrid the fts ranking alone, with
        ``embedding.source == "unavailable"``."""
        started = time.perf_counter()
        if mode not in MODES:
            raise QueryError(f"mode must be one of {', '.join(MODES)}")
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            raise QueryError("top_k must be a positive integer")
        if not isinstance(rrf_k, int) or isinstance(rrf_k, bool) or rrf_k < 0:
            raise QueryError("rrf_k must be a non-negative integer")
        if mode in ("fts", "hybrid") and self.counts["blocks_fts"] == 0:
            raise IndexUnavailable("the full-text part of the index is empty")
        if mode in ("vector", "hybrid") and not len(self.vector_ids):
            raise IndexUnavailable("the vector part of the index is empty")
        second = self._reranker(reranker, embedder)
        first = max(top_k, RERANK_DEPTH) if second else top_k
        depth = max(first, RRF_DEPTH) if mode == "hybrid" else first
        fts = self.fts_ranking(query, depth) if mode in ("fts", "hybrid") else []
        embedding = not_used_embedding()
        vector: list[tuple[int, float]] = []
        if mode in ("vector", "hybrid"):
            query_vector, embedding = self._embed_query(query, embedder, fallback_reason)
            if query_vector is not None:
                vector = self.vector_ranking(query_vector, depth)
        if mode == "fts":
            ranked = fts[:first]
        elif mode == "vector":
            ranked = vector[:first]
        else:
            fused = rrf_fuse([[item for item, _ in fts], [item for item, _ in vector]], rrf_k)
            ranked = fused[:first]
        reranked: dict[str, Any] | None = None
        if second is not None:
            ranked, reranked = self._rerank(*second, query, ranked, fallback_reason)
        ranked = ranked[:top_k]
        found = self._blocks([item for item, _ in ranked])
        results = []
        for rank, (item, score) in enumerate(ranked, start=1):
            note_id, block_id, title, text = found[item]
            results.append(
                {
                    "rank": rank,
                    "note_id": note_id,
                    "block_id": block_id,
                    "score": round(score, 6),
                    "title": title,
                    "text": text,
                    "citation": {"note_id": note_id, "block_id": block_id},
                }
            )
        took_ms = round((time.perf_counter() - started) * 1000.0, 3)
        return {
            "results": results,
            "mode": mode,
            "took_ms": took_ms,
            "embedding": embedding,
            "reranker": reranked,
        }


# --- the cache of built indexes ---------------------------------------------------------------


def default_cache_dir() -> Path:
    """``$SRBENCH_CACHE_DIR``, else ``$SRBENCH_CACHE/retrieval``, else
    ``~/.cache/pytest-srbench/retrieval``."""
    explicit = os.environ.get("SRBENCH_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    shared = os.environ.get("SRBENCH_CACHE")
    if shared:
        return Path(shared).expanduser() / "retrieval"
    return Path.home() / ".cache" / "pytest-srbench" / "retrieval"


def cache_file_name(sha256: str, embedder: Embedder) -> str:
    """The index file name for one (corpus, embedding model, model version, engine version)."""
    model = re.sub(r"[^A-Za-z0-9.]+", "-", embedder.model_id).strip("-")
    version = re.sub(r"[^A-Za-z0-9.]+", "-", embedder.version).strip("-")
    return f"{sha256[:16]}-{model}-{version}-e{ENGINE_VERSION}.sqlite"


@contextlib.contextmanager
def _temporary_sibling(path: Path) -> Iterator[Path]:
    fd, name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def _matches(path: Path, sha256: str, embedder: Embedder) -> RetrievalIndex | None:
    try:
        index = RetrievalIndex.open(path)
    except (OSError, sqlite3.Error, KeyError, ValueError):
        return None
    expected = (
        sha256,
        embedder.model_id,
        str(embedder.dimensions),
        embedder.version,
        ENGINE_VERSION,
    )
    meta = index.meta
    if (meta.get("corpus_sha256"), meta.get("model_id"), meta.get("dimensions"),
            meta.get("version"), meta.get("engine_version")) == expected:  # fmt: skip
        return index
    index.close()
    return None


def cached_index(
    corpus_path: str | os.PathLike[str] | None,
    embedder: Embedder,
    cache_dir: str | os.PathLike[str] | None = None,
) -> RetrievalIndex:
    """The index of the corpus at ``corpus_path`` (None: the shipped one) for ``embedder``,
    built once per (corpus sha256, model id, model version) into ``cache_dir`` and reused.
    A build writes a temporary file next to the target and renames it into place."""
    corpus = load_corpus(corpus_path)
    sha256 = corpus_sha256(corpus)
    folder = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / cache_file_name(sha256, embedder)
    if target.exists():
        found = _matches(target, sha256, embedder)
        if found is not None:
            return found
    with _temporary_sibling(target) as scratch:
        RetrievalIndex.build(scratch, corpus, embedder).close()
        os.replace(scratch, target)
    return RetrievalIndex.open(target)
