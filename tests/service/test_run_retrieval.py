"""The dashboard's retrieval settings in a run request: the plan review shows them on every
retrieval target, and a bad one is a 422 naming it."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.slow

SETTINGS = {"mode": "fts", "top_k": 7, "rrf_k": 60, "reranker": "minilm-maxsim"}


def test_the_reviewed_plan_searches_with_the_requests_retrieval_settings(api):
    with httpx.Client(base_url=api.base_url, timeout=30) as http:
        review = http.post("/api/plans", json={"benchmarks": ["rag-smoke"],
                                               "targets": ["sim-rag-hybrid"],
                                               "retrieval": SETTINGS})  # fmt: skip
        assert review.status_code == 200, review.text
        (target,) = review.json()["targets"]
        assert target["request_params"] == SETTINGS
        refused = http.post("/api/plans", json={"benchmarks": ["rag-smoke"],
                                                "retrieval": {**SETTINGS, "rerankr": "none"}})  # fmt: skip
    assert refused.status_code == 422, refused.text
    message = refused.json()["error"]["message"]
    assert "unknown retrieval setting(s) 'rerankr'; a run may set mode, top_k, rrf_k, reranker" in (
        message
    )
