"""Which embedder the built-in retrieval engine would load, and the variable that picks it.

``EMBEDDER_ENV`` (``$SRBENCH_SIM_EMBEDDER``: ``auto``, ``hashing`` or ``minilm``) is read by
the simulator that serves this engine (``simulator/retrieval_http.py``). ``local_embedding``
is the local embedding baseline a RAG config snapshot records: the embedder the engine would
load on this installation — all-MiniLM-L6-v2 when its model package and readers are
installed, else the hashing fallback with the reason, as the variable prefers — read without
loading any model (and without importing numpy). It is a baseline, not what a sample used:
each sample's own ``embedding`` record says that."""

from __future__ import annotations

import importlib.util
import os
from typing import Any

from pytest_srbench.core.benchmark_errors import without_paths

EMBEDDER_ENV = "SRBENCH_SIM_EMBEDDER"


def local_embedding() -> dict[str, Any]:
    """``{model_id, version, dimensions, fallback_reason}``; null fields when unknown."""
    from pytest_srbench.notes import embedding

    prefer = os.environ.get(EMBEDDER_ENV, "").strip() or "auto"
    hashing = {"model_id": embedding.HASHING_MODEL_ID, "version": embedding.HashingEmbedder.version,
               "dimensions": embedding.DIMENSIONS, "fallback_reason": None}  # fmt: skip
    if prefer == "hashing":
        return hashing
    if prefer not in ("auto", "minilm"):  # the engine would refuse to start: nothing known
        return dict.fromkeys(hashing)
    try:
        embedding.minilm_model_dir()
        for reader in ("safetensors", "tokenizers"):
            if importlib.util.find_spec(reader) is None:
                raise embedding.EmbedderUnavailable(f"{reader} is not installed")
    except embedding.EmbedderUnavailable as error:
        reason = without_paths(str(error))
        if prefer == "minilm":  # no fallback: the engine would fail to load
            return {**dict.fromkeys(hashing), "fallback_reason": reason}
        return {**hashing, "fallback_reason": reason}
    from importlib import metadata  # (here: the simulator imports this module at start)

    try:
        version: str | None = metadata.version(embedding.MINILM_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        version = None
    return {"model_id": embedding.MINILM_MODEL_ID, "version": version,
            "dimensions": embedding.DIMENSIONS, "fallback_reason": None}  # fmt: skip
