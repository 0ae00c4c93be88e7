"""The minilm-maxsim reranker's effect on rag-smoke: for each mode (fts, vector, hybrid), with
and without the reranker, hit@1, hit@5 and MRR (the report's own definitions, over the first
5 results) and the p50 of the engine's search time (``took_ms``), on an index of the shipped
corpus built with the real all-MiniLM-L6-v2.

Times are measured side by side: in every round each query runs without and with the reranker
back to back (alternating which goes first), after warm-up passes that fill the reranker's
passage cache (the cost of filling it is printed apart: a reranked pass on an empty cache minus
one on the full cache). ``ratio`` is p50 with / p50 without; ``paired`` the
median over queries of their own with/without ratio.

    python bench/rerank.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_srbench.core.report.rag_metrics import RagSample, aggregate_rag
from pytest_srbench.core.stats import percentile
from pytest_srbench.datasets.suites import shipped_suites_dir
from pytest_srbench.notes.embedding import EmbedderUnavailable, MiniLmEmbedder, load_embedder
from pytest_srbench.notes.index import RetrievalIndex, load_corpus
from pytest_srbench.notes.rerank import RERANK_DEPTH

MODES = ("fts", "vector", "hybrid")
RERANKER = "minilm-maxsim"
TOP_K = 5


def sample(case: dict[str, Any], mode: str, answer: dict[str, Any]) -> RagSample:
    results = answer["results"]
    return RagSample(
        mode=mode,
        case_id=case["case_id"],
        repeat=1,
        ok=True,
        ranked_note_ids=[r["note_id"] for r in results],
        ranked_block_ids=[r["block_id"] for r in results],
        cited_block_ids=[r["block_id"] for r in results],
        expected_note_ids=case["expected_note_ids"],
        expected_block_ids=case.get("expected_block_ids") or [],
        citation_required=bool(case.get("citation_required")),
        top_k=TOP_K,
        latency_ms=answer["took_ms"],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (default 5)")
    args = parser.parse_args()
    try:
        embedder, _ = load_embedder("minilm")
    except EmbedderUnavailable as error:
        print(f"bench/rerank.py needs all-MiniLM-L6-v2: {error}", file=sys.stderr)
        return 2
    assert isinstance(embedder, MiniLmEmbedder)
    corpus = load_corpus()
    cases = json.loads((shipped_suites_dir() / "rag-smoke.json").read_text())["cases"]
    print(f"{len(cases)} rag-smoke queries, top_k {TOP_K}, reranker depth "
          f"max(top_k, {RERANK_DEPTH}); {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        index = RetrievalIndex.build(Path(folder) / "index.sqlite", corpus, embedder)
        print(f"index built with {embedder.model_id} {embedder.version} in "
              f"{time.perf_counter() - start:.1f} s")  # fmt: skip
        try:
            run(index, embedder, cases, args.rounds)
        finally:
            index.close()
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    return 0


def run(
    index: RetrievalIndex, embedder: MiniLmEmbedder, cases: list[dict[str, Any]], rounds: int
) -> None:
    def search(case: dict[str, Any], mode: str, reranker: str | None) -> dict[str, Any]:
        return index.search(case["query"], mode, top_k=TOP_K, embedder=embedder,
                            reranker=reranker)  # fmt: skip

    def one_pass(reranker: str | None) -> tuple[float, list[RagSample]]:
        start = time.perf_counter()
        found = []
        for mode in MODES:
            label = f"{mode}+{reranker}" if reranker else mode
            found += [sample(case, label, search(case, mode, reranker)) for case in cases]
        return time.perf_counter() - start, found

    # warm-up: the model, then the reranker with an empty passage cache and with a full one
    plain_s, samples = one_pass(None)
    cold_s, reranked = one_pass(RERANKER)
    warm_s, _ = one_pass(RERANKER)
    samples += reranked
    searches = len(cases) * len(MODES)
    print(f"warm-up, {searches} searches a pass: without the reranker {plain_s:.2f} s; with it "
          f"{cold_s:.2f} s on an empty passage cache, {warm_s:.2f} s once "
          f"{len(index.passage_tokens)} passages ({index.passage_tokens.tokens} token vectors) "
          f"were cached: filling the cache cost about {cold_s - warm_s:.2f} s")  # fmt: skip
    quality = {row["mode"]: row for row in aggregate_rag(samples)}
    took: dict[tuple[str, bool], list[float]] = {}
    paired: dict[str, list[float]] = {mode: [] for mode in MODES}
    for round_number in range(rounds):
        for case in cases:
            for mode in MODES:
                order = (False, True) if round_number % 2 == 0 else (True, False)
                times = {}
                for reranked in order:
                    answer = search(case, mode, RERANKER if reranked else None)
                    times[reranked] = answer["took_ms"]
                    took.setdefault((mode, reranked), []).append(answer["took_ms"])
                paired[mode].append(times[True] / max(times[False], 1e-3))
    print(f"{'mode':<8}{'reranker':<15}{'hit@1':>7}{'hit@5':>7}{'MRR':>7}"
          f"{'p50 ms':>9}{'ratio':>8}{'paired':>8}")  # fmt: skip
    for mode in MODES:
        base = percentile(took[(mode, False)], 0.5)
        for reranked in (False, True):
            row = quality[f"{mode}+{RERANKER}" if reranked else mode]
            p50 = percentile(took[(mode, reranked)], 0.5)
            ratio = f"{p50 / base:>7.1f}x" if reranked else f"{'':>8}"
            pair = f"{statistics.median(paired[mode]):>7.1f}x" if reranked else ""
            print(f"{mode:<8}{RERANKER if reranked else 'none':<15}{row['hit_at_1']:>7.3f}"
                  f"{row['hit_at_5']:>7.3f}{row['mrr']:>7.3f}{p50:>9.2f}{ratio}{pair}")  # fmt: skip
    print(f"{rounds} timed rounds of {len(cases)} queries per mode and setting")


if __name__ == "__main__":
    sys.exit(main())
