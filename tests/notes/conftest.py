"""Shared retrieval fixtures: the real MiniLM embedder and indexes of the shipped corpus."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_srbench.notes.embedding import (
    EmbedderUnavailable,
    HashingEmbedder,
    MiniLmEmbedder,
    load_embedder,
)
from pytest_srbench.notes.index import RetrievalIndex, load_corpus
from tests.optional import part_missing


@pytest.fixture(scope="session")
def minilm() -> MiniLmEmbedder:
    """The numpy all-MiniLM-L6-v2; skipped with the reason where the model package is absent
    (CI installs it, so there a missing model fails instead)."""
    try:
        embedder, reason = load_embedder("minilm")
    except EmbedderUnavailable as error:
        part_missing(f"all-MiniLM-L6-v2 unavailable: {error}")
    assert reason is None and isinstance(embedder, MiniLmEmbedder)
    return embedder


@pytest.fixture(scope="session")
def corpus() -> dict[str, object]:
    return load_corpus()


@pytest.fixture(scope="session")
def minilm_index(
    tmp_path_factory: pytest.TempPathFactory, minilm: MiniLmEmbedder, corpus: dict[str, object]
) -> Iterator[RetrievalIndex]:
    index = RetrievalIndex.build(tmp_path_factory.mktemp("minilm") / "index.sqlite", corpus, minilm)
    yield index
    index.close()


@pytest.fixture(scope="session")
def hashing_index(
    tmp_path_factory: pytest.TempPathFactory, corpus: dict[str, object]
) -> Iterator[RetrievalIndex]:
    index = RetrievalIndex.build(
        tmp_path_factory.mktemp("hashing") / "index.sqlite", corpus, HashingEmbedder()
    )
    yield index
    index.close()
