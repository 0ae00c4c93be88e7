"""The retrieval backend on the shipped corpus: the time to embed every passage in one call and
the index build time per embedder (all-MiniLM-L6-v2 in numpy, and the hashing fallback), median
query time per mode, and hit@5 / MRR per mode on rag-smoke's queries — the same engine the
simulator serves to sim-rag-* targets.

    python bench/retrieval.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from pytest_srbench.datasets.suites import shipped_suites_dir
from pytest_srbench.notes.embedding import EmbedderUnavailable, load_embedder
from pytest_srbench.notes.index import RetrievalIndex, load_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpus = load_corpus()
    cases = json.loads((shipped_suites_dir() / "rag-smoke.json").read_text())["cases"]
    blocks = sum(len(note["blocks"]) for note in corpus["notes"])
    print(f"corpus {corpus['corpus_id']}: {len(corpus['notes'])} notes, {blocks} blocks; "
          f"{len(cases)} rag-smoke queries")  # fmt: skip
    print(f"{'embedder':<42}{'build':>9}  {'mode':<7}{'median query':>13}{'hit@5':>8}{'MRR':>8}")
    for prefer in ("minilm", "hashing"):
        try:
            embedder, _ = load_embedder(prefer)
        except EmbedderUnavailable as error:
            print(f"{prefer:<42} unavailable: {error}")
            continue
        passages = [block["text"] for note in corpus["notes"] for block in note["blocks"]]
        embeds = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            embedder.embed(passages)
            embeds.append(time.perf_counter() - start)
        print(f"{embedder.model_id:<42}{statistics.median(embeds):>8.2f}s  embed corpus "
              f"({len(passages)} passages in one call)")  # fmt: skip
        builds = []
        with tempfile.TemporaryDirectory() as folder:
            for attempt in range(args.repeat):
                start = time.perf_counter()
                index = RetrievalIndex.build(Path(folder) / f"i{attempt}.sqlite3", corpus, embedder)
                builds.append(time.perf_counter() - start)
                if attempt < args.repeat - 1:
                    index.close()
            for mode in ("fts", "vector", "hybrid"):
                times, hits, reciprocal = [], 0, 0.0
                for case in cases:
                    start = time.perf_counter()
                    found = index.search(case["query"], mode, top_k=5, embedder=embedder)
                    times.append(time.perf_counter() - start)
                    notes = [r["note_id"] for r in found["results"]]
                    ranks = [
                        i for i, note in enumerate(notes, 1) if note in case["expected_note_ids"]
                    ]
                    hits += bool(ranks)
                    reciprocal += 1 / ranks[0] if ranks else 0.0
                label = f"{embedder.model_id} ({embedder.dimensions})"
                print(f"{label:<42}{statistics.median(builds):>8.2f}s  {mode:<7}"
                      f"{statistics.median(times) * 1000:>10.2f} ms{hits / len(cases):>8.3f}"
                      f"{reciprocal / len(cases):>8.3f}")  # fmt: skip
            index.close()


if __name__ == "__main__":
    main()
