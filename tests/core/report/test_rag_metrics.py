"""RAG metrics: hand-computed samples and per-mode aggregates (arithmetic in the comments)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_srbench.core.report.rag_metrics import RagSample, aggregate_rag, sample_metrics


def sample(
    case_id: str = "q1",
    *,
    mode: str = "fts",
    repeat: int = 1,
    ok: bool = True,
    notes: list[str] | None = None,
    cited: list[str] | None = None,
    expected: list[str] | None = None,
    blocks: list[str] | None = None,
    citation_required: bool = False,
    top_k: int = 5,
    latency_ms: float | None = 10.0,
) -> RagSample:
    ranked = notes or []
    return RagSample(
        mode=mode,
        case_id=case_id,
        repeat=repeat,
        ok=ok,
        ranked_note_ids=ranked,
        ranked_block_ids=[f"b-{i}" for i in range(len(ranked))],
        cited_block_ids=cited or [],
        expected_note_ids=expected or ["n1"],
        expected_block_ids=blocks or [],
        citation_required=citation_required,
        top_k=top_k,
        latency_ms=latency_ms,
    )


def test_sample_metrics_of_a_successful_search():
    # results (top_k 3): n2, n1, n1 | n3 ignored (rank 4 > top_k); expected {n1, n3}
    # hit@1: n2 not expected -> 0; hit@5: n1 at rank 2 -> 1; recall: {n1} / {n1, n3} = 1/2;
    # mrr: first expected at rank 2 -> 1/2; citation: b1 is cited -> 1
    s = sample(
        notes=["n2", "n1", "n1", "n3"],
        expected=["n1", "n3"],
        cited=["b1", "b9"],
        blocks=["b1"],
        citation_required=True,
        top_k=3,
    )
    assert sample_metrics(s) == {
        "hit_at_1": 0.0,
        "hit_at_5": 1.0,
        "recall_at_k": 0.5,
        "mrr": 0.5,
        "citation_hit": 1.0,
    }


def test_hit_at_5_and_mrr_beyond_rank_five():
    # top_k 10, the only expected note at rank 6: hit@5 0, recall 1/1, mrr 1/6
    s = sample(notes=["x1", "x2", "x3", "x4", "x5", "n1"], top_k=10)
    assert sample_metrics(s) == {
        "hit_at_1": 0.0,
        "hit_at_5": 0.0,
        "recall_at_k": 1.0,
        "mrr": pytest.approx(1 / 6),
        "citation_hit": None,
    }


def test_results_past_top_k_are_ignored_and_citation_miss_is_zero():
    # top_k 2, n1 only at rank 3 -> every metric 0; cited b2 is not the expected b1 -> 0
    s = sample(
        notes=["x1", "x2", "n1"], top_k=2, cited=["b2"], blocks=["b1"], citation_required=True
    )
    assert sample_metrics(s) == dict.fromkeys(
        ["hit_at_1", "hit_at_5", "recall_at_k", "mrr", "citation_hit"], 0.0
    )


def test_failed_sample_scores_zero_whatever_it_carries():
    s = sample(ok=False, notes=["n1"], cited=["b1"], blocks=["b1"], citation_required=True)
    assert set(sample_metrics(s).values()) == {0.0}
    assert sample_metrics(sample(ok=False, notes=["n1"]))["citation_hit"] is None


def test_aggregate_counts_failures_as_zero_and_times_successes_only():
    samples = [
        # s1: hit@1 0, hit@5 1, recall 1/2, mrr 1/2, citation 1, latency 10
        sample(
            "q1",
            notes=["n2", "n1", "n1"],
            expected=["n1", "n3"],
            cited=["b1"],
            blocks=["b1"],
            citation_required=True,
            top_k=3,
            latency_ms=10.0,
        ),
        # s2: hit@1 1, hit@5 1, recall 1, mrr 1, no citation required, latency 30
        sample("q2", notes=["n5"], expected=["n5"], latency_ms=30.0),
        # s3: failed -> 0 everywhere, citation 0 (required), its latency is ignored
        sample(
            "q3",
            ok=False,
            notes=["n7"],
            expected=["n7"],
            blocks=["b7"],
            citation_required=True,
            latency_ms=999.0,
        ),
        sample("q1", mode="vector", notes=["n1"], latency_ms=5.0),
    ]
    fts, vector = aggregate_rag(samples)
    assert fts == {
        "mode": "fts",
        "total_cases": 3,
        "successful_cases": 2,
        "failed_cases": 1,
        "failure_rate": pytest.approx(1 / 3),
        "hit_at_1": pytest.approx(1 / 3),  # (0 + 1 + 0) / 3
        "hit_at_5": pytest.approx(2 / 3),  # (1 + 1 + 0) / 3
        "recall_at_k": 0.5,  # (0.5 + 1 + 0) / 3
        "mrr": 0.5,  # (0.5 + 1 + 0) / 3
        "citation_hit_rate": 0.5,  # (1 + 0) / 2 citation-required samples (s1, s3)
        "citation_cases": 2,
        "p50_latency_ms": 20.0,  # [10, 30]: 10 + (30 - 10) * 0.5
        "p90_latency_ms": 28.0,  # 10 + (30 - 10) * 0.9
        "p95_latency_ms": 29.0,  # 10 + (30 - 10) * 0.95
    }
    assert vector["mode"] == "vector" and vector["total_cases"] == 1
    assert vector["citation_hit_rate"] is None and vector["citation_cases"] == 0
    assert vector["p50_latency_ms"] == vector["p95_latency_ms"] == 5.0


def test_null_rules():
    assert aggregate_rag([]) == []
    (empty,) = aggregate_rag([], modes=["fts"])
    assert empty["total_cases"] == 0 and empty["citation_cases"] == 0
    for key in (
        "failure_rate",
        "hit_at_1",
        "hit_at_5",
        "recall_at_k",
        "mrr",
        "citation_hit_rate",
        "p50_latency_ms",
        "p90_latency_ms",
        "p95_latency_ms",
    ):
        assert empty[key] is None
    # all failed: quality 0 over 1, no latency; a success without latency gives none either
    (failed,) = aggregate_rag([sample(ok=False)])
    assert failed["hit_at_1"] == 0.0 and failed["failure_rate"] == 1.0
    assert failed["p50_latency_ms"] is None
    (untimed,) = aggregate_rag([sample(notes=["n1"], latency_ms=None)])
    assert untimed["p95_latency_ms"] is None and untimed["hit_at_1"] == 1.0


def test_named_modes_come_first_then_first_seen_order():
    rows = aggregate_rag([sample(mode="b"), sample(mode="a")], modes=["hybrid"])
    assert [row["mode"] for row in rows] == ["hybrid", "b", "a"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"expected_note_ids": []}, "expected_note_ids is empty"),
        ({"citation_required": True}, "citation_required without expected_block_ids"),
        ({"top_k": 0}, "top_k must be >= 1"),
        ({"ranked_block_ids": []}, "1 ranked note ids for 0 ranked block ids"),
    ],
)
def test_invalid_samples_are_rejected(change: dict[str, Any], message: str):
    fields: dict[str, Any] = {
        "mode": "fts",
        "case_id": "q",
        "repeat": 1,
        "ok": True,
        "ranked_note_ids": ["n1"],
        "ranked_block_ids": ["b1"],
        "cited_block_ids": [],
        "expected_note_ids": ["n1"],
        "expected_block_ids": [],
        "citation_required": False,
        "top_k": 5,
        "latency_ms": 1.0,
    }
    with pytest.raises(ValueError, match=message):
        RagSample(**{**fields, **change})


def test_duplicate_samples_are_rejected():
    with pytest.raises(ValueError, match="duplicate sample fts/q1/1"):
        aggregate_rag([sample("q1"), sample("q1")])
    assert len(aggregate_rag([sample("q1"), sample("q1", repeat=2)])) == 1
