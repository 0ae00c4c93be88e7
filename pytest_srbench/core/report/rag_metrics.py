"""Retrieval (RAG) quality and latency: one sample's metrics and their per-mode aggregate (pure).

A sample is one (mode, case, repeat) search. Its *results* are the first ``top_k`` entries of
``ranked_note_ids`` / ``ranked_block_ids`` (one entry per ranked block, so a note may repeat);
entries past ``top_k`` are ignored. ``E`` is the set of distinct ``expected_note_ids`` (never
empty: such a case is rejected when the dataset loads, and here by ``RagSample``).

Per sample (``sample_metrics``), for a successful search (``ok`` True):

- ``hit_at_1``  = 1.0 if the note of result 1 is in ``E``, else 0.0 (0.0 with no results).
- ``hit_at_5``  = 1.0 if a note of results 1..5 is in ``E``, else 0.0.
- ``recall_at_k`` = |distinct notes of results 1..top_k ∩ E| / |E|.
- ``mrr``       = 1 / r for the smallest rank r whose note is in ``E``; 0.0 if there is none.
- ``citation_hit`` (only when ``citation_required``) = 1.0 if an ``expected_block_ids`` entry
  is in ``cited_block_ids``, else 0.0; ``None`` when citations are not required. The caller
  collects ``cited_block_ids`` from the same ``top_k`` results.

A failed search (``ok`` False) scores 0.0 on every quality metric (``citation_hit`` 0.0 when
required, else ``None``) whatever results it carries: a failure is never read as poor
retrieval, and it stays in every denominator below.

Per mode (``aggregate_rag``), over that mode's samples (n = ``total_cases``):

- ``successful_cases`` / ``failed_cases``: samples with ``ok`` True / False;
  ``failure_rate`` = failed / n.
- ``hit_at_1``, ``hit_at_5``, ``recall_at_k``, ``mrr``: the mean over all n samples, failed
  samples counted as 0.0.
- ``citation_hit_rate``: the mean of ``citation_hit`` over the ``citation_cases`` samples that
  require citations (failed ones counted as 0.0); null when ``citation_cases`` is 0.
- ``p50_latency_ms`` / ``p90_latency_ms`` / ``p95_latency_ms``: ``stats.percentile`` (linear
  interpolation) at 0.5 / 0.9 / 0.95 of ``latency_ms`` over successful samples that carry one; null when there are none.
- Every rate and mean is null when n is 0 (a mode named in ``modes`` without samples).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_srbench.core.stats import percentile

QUALITY_METRICS = ("hit_at_1", "hit_at_5", "recall_at_k", "mrr")


@dataclass(frozen=True)
class RagSample:
    """One search of one case in one mode (``repeat`` numbers the repetitions)."""

    mode: str
    case_id: str
    repeat: int
    ok: bool
    ranked_note_ids: list[str]
    ranked_block_ids: list[str]
    cited_block_ids: list[str]
    expected_note_ids: list[str]
    expected_block_ids: list[str]
    citation_required: bool
    top_k: int
    latency_ms: float | None

    def __post_init__(self) -> None:
        where = f"sample {self.mode}/{self.case_id}/{self.repeat}"
        if not self.expected_note_ids:
            raise ValueError(f"{where}: expected_note_ids is empty")
        if self.citation_required and not self.expected_block_ids:
            raise ValueError(f"{where}: citation_required without expected_block_ids")
        if self.top_k < 1:
            raise ValueError(f"{where}: top_k must be >= 1, got {self.top_k}")
        if len(self.ranked_note_ids) != len(self.ranked_block_ids):
            raise ValueError(
                f"{where}: {len(self.ranked_note_ids)} ranked note ids for "
                f"{len(self.ranked_block_ids)} ranked block ids (one of each per result)"
            )


def sample_metrics(sample: RagSample) -> dict[str, float | None]:
    """``hit_at_1``, ``hit_at_5``, ``recall_at_k``, ``mrr`` and ``citation_hit`` of one sample."""
    failed_citation = 0.0 if sample.citation_required else None
    if not sample.ok:
        return {**dict.fromkeys(QUALITY_METRICS, 0.0), "citation_hit": failed_citation}
    expected = set(sample.expected_note_ids)
    notes = sample.ranked_note_ids[: sample.top_k]
    first = next((rank for rank, note in enumerate(notes, 1) if note in expected), None)
    citation_hit: float | None = None
    if sample.citation_required:
        citation_hit = float(not set(sample.expected_block_ids).isdisjoint(sample.cited_block_ids))
    return {
        "hit_at_1": float(first == 1),
        "hit_at_5": float(first is not None and first <= 5),
        "recall_at_k": len(expected.intersection(notes)) / len(expected),
        "mrr": 1.0 / first if first is not None else 0.0,
        "citation_hit": citation_hit,
    }


class ModeRunner:
    """One mode's row of ``aggregate_rag``, one sample at a time: running sums (added in
    sample order, as ``sum`` over the list would), and the latencies a percentile needs."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.total = 0
        self.successes = 0
        self.sums: dict[str, float] = dict.fromkeys(QUALITY_METRICS, 0)
        self.citation_sum: float = 0
        self.citation_cases = 0
        self.latencies = array("d")

    def add(self, sample: RagSample) -> None:
        metrics = sample_metrics(sample)
        self.total += 1
        self.successes += sample.ok
        for name in QUALITY_METRICS:
            self.sums[name] += metrics[name] or 0.0
        if metrics["citation_hit"] is not None:
            self.citation_sum += metrics["citation_hit"]
            self.citation_cases += 1
        if sample.ok and sample.latency_ms is not None:
            self.latencies.append(sample.latency_ms)

    def row(self) -> dict[str, Any]:
        total = self.total
        row: dict[str, Any] = {
            "mode": self.mode,
            "total_cases": total,
            "successful_cases": self.successes,
            "failed_cases": total - self.successes,
            "failure_rate": (total - self.successes) / total if total else None,
        }
        for name in QUALITY_METRICS:
            row[name] = self.sums[name] / total if total else None
        row["citation_hit_rate"] = (
            self.citation_sum / self.citation_cases if self.citation_cases else None
        )
        row["citation_cases"] = self.citation_cases
        row["p50_latency_ms"] = percentile(self.latencies, 0.5)
        row["p90_latency_ms"] = percentile(self.latencies, 0.9)
        row["p95_latency_ms"] = percentile(self.latencies, 0.95)
        return row


class SampleKeys:
    """The (mode, case_id, repeat) keys seen so far: a duplicate sample is an error."""

    def __init__(self) -> None:
        self.seen: set[tuple[str, str, int]] = set()

    def check(self, sample: RagSample) -> None:
        key = (sample.mode, sample.case_id, sample.repeat)
        if key in self.seen:
            raise ValueError(f"duplicate sample {key[0]}/{key[1]}/{key[2]}")
        self.seen.add(key)


def aggregate_rag(samples: Sequence[RagSample], modes: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One row per mode: the modes in ``modes`` first (in that order, with null metrics when
    they have no sample), then the other modes in first-seen order.

    Raises ``ValueError`` when two samples share (mode, case_id, repeat): a duplicate would
    silently weigh one search twice.
    """
    by_mode: dict[str, ModeRunner] = {mode: ModeRunner(mode) for mode in modes}
    keys = SampleKeys()
    for sample in samples:
        keys.check(sample)
        runner = by_mode.get(sample.mode)
        if runner is None:
            runner = by_mode[sample.mode] = ModeRunner(sample.mode)
        runner.add(sample)
    return [runner.row() for runner in by_mode.values()]
