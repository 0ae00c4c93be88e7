"""The second search stage: late-interaction reranking (MaxSim, as in ColBERT) of a first
stage's best candidates over per-token embeddings, and the bounded cache of the passages'
token embeddings. Pure: arrays in, scores out (the index supplies texts and the embedder).

MaxSim of a query and a passage: for each query token, the highest cosine with any passage
token, summed over the query tokens (the token vectors are L2-normalised, so a dot product)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy
from numpy.typing import NDArray

RERANKERS = ("none", "minilm-maxsim")
RERANK_DEPTH = 20  # the reranker re-scores the first stage's max(top_k, RERANK_DEPTH) best
MAX_CACHED_TOKENS = 32_768  # token vectors kept per index: 48 MiB at 384 float32 dimensions

Tokens = NDArray[numpy.float32]


class UnknownReranker(ValueError):
    """A reranker name that is not one of ``RERANKERS`` (nor null)."""


def reranker_name(value: object) -> str | None:
    """The reranker to apply: None for null or ``"none"``, else a known name; UnknownReranker
    listing the known ones for anything else."""
    if value is None or value == "none":
        return None
    if isinstance(value, str) and value in RERANKERS:
        return value
    raise UnknownReranker(f"reranker must be null or one of: {', '.join(RERANKERS)}")


def maxsim_scores(query: Tokens, passages: Sequence[Tokens]) -> NDArray[numpy.float32]:
    """The MaxSim score of ``query`` (q, d) against each passage (p_i, d): Σ over the query's
    rows of the max dot product with the passage's rows. A passage or query without tokens
    scores 0."""
    scores = numpy.zeros(len(passages), dtype=numpy.float32)
    kept = [i for i, passage in enumerate(passages) if len(passage)]
    if not len(query) or not kept:
        return scores
    stacked = numpy.concatenate([passages[i] for i in kept])
    similarities = stacked @ query.T  # (all passage tokens, query tokens)
    starts = numpy.cumsum([0] + [len(passages[i]) for i in kept[:-1]])
    best = numpy.maximum.reduceat(similarities, starts, axis=0)  # (passages, query tokens)
    scores[kept] = best.sum(axis=1)
    return scores


def rerank(
    candidates: Sequence[int], query: Tokens, passages: Sequence[Tokens]
) -> list[tuple[int, float]]:
    """The candidates (first-stage order, their token embeddings in ``passages``) sorted by
    MaxSim, best first; ties keep the first stage's order."""
    scores = maxsim_scores(query, passages)
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), i))
    return [(candidates[i], float(scores[i])) for i in order]


class TokenCache:
    """Token embeddings of passages by block id, least recently used evicted first so that at
    most ``max_tokens`` token vectors are kept (a passage larger than that is not kept).
    Thread-safe."""

    def __init__(self, max_tokens: int = MAX_CACHED_TOKENS) -> None:
        self.max_tokens = max_tokens
        self._entries: OrderedDict[int, Tokens] = OrderedDict()
        self._tokens = 0
        self._lock = threading.Lock()

    @property
    def tokens(self) -> int:
        """Token vectors held now."""
        return self._tokens

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, keys: Sequence[int]) -> dict[int, Tokens]:
        """The cached entries among ``keys`` (each marked as just used)."""
        with self._lock:
            found = {}
            for key in keys:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    found[key] = self._entries[key]
            return found

    def put(self, key: int, tokens: Tokens) -> None:
        with self._lock:
            if key in self._entries:
                self._tokens -= len(self._entries.pop(key))
            if len(tokens) > self.max_tokens:
                return
            self._entries[key] = tokens
            self._tokens += len(tokens)
            while self._tokens > self.max_tokens:
                _, evicted = self._entries.popitem(last=False)
                self._tokens -= len(evicted)
