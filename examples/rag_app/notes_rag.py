"""The app under test: a small retrieval-augmented QA pipeline over the notes corpus that ships
with pytest-srbench (32 company notes, one passage per block).

- ``search``: TF-IDF over every block (its note's title and its text), ranked by cosine
  similarity; each result names its ``note_id`` and ``block_id``, which is what the
  ``rag-smoke`` benchmark scores.
- ``grounded_messages``: the best blocks as numbered context for a model, then the question.
- calling the app (``app(messages)``): an answer without any model — the sentence of the best
  blocks that shares the most rare words with the question (an extractive baseline).

Plain Python, no downloads; replace any step with your own (an embedding model, a reranker...).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

from pytest_srbench.notes.index import load_corpus

STOPWORDS = frozenset({
    "a", "an", "and", "are", "at", "be", "by", "can", "do", "does", "for", "from", "get",
    "gets", "how", "i", "in", "is", "it", "its", "long", "many", "much", "must", "of", "on",
    "or", "our", "the", "to", "we", "what", "when", "where", "which", "who", "why", "will",
    "with",
})  # fmt: skip
WORD = re.compile(r"[a-z0-9]+")
SENTENCE = re.compile(r"(?<=[.;])\s+")

SYSTEM = (
    "Answer the question using only the notes below. Reply with the short answer itself; "
    "if the notes do not say, reply 'I do not know'.\n\nNotes:\n"
)


def terms(text: str) -> list[str]:
    """Lower-case words without stop words, with a crude plural folding (dashboards -> dashboard)."""
    words = (w for w in WORD.findall(text.lower()) if w not in STOPWORDS)
    return [w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words]


class NotesRag:
    """Index the corpus once (a session fixture), then answer many questions."""

    def __init__(self, corpus: dict[str, Any]) -> None:
        self.blocks = [
            {"note_id": note["note_id"], "block_id": block["block_id"],
             "title": note["title"], "text": block["text"]}
            for note in corpus["notes"]
            for block in note["blocks"]
        ]  # fmt: skip
        counts = [Counter(terms(f"{b['title']} {b['text']}")) for b in self.blocks]
        documents = Counter(term for count in counts for term in count)
        self.idf = {t: math.log(len(self.blocks) / n) + 1.0 for t, n in documents.items()}
        self.vectors = [self._unit(count) for count in counts]

    def _unit(self, counts: Counter[str]) -> dict[str, float]:
        """Log-scaled TF-IDF weights, normalised to length 1 (a dot product is then a cosine)."""
        weights = {t: (1 + math.log(c)) * self.idf.get(t, 0.0) for t, c in counts.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {t: w / norm for t, w in weights.items()}

    def search(self, query: str, k: int = 5) -> list[dict[str, Any]]:
        """The ``k`` best blocks for ``query``, best first (blocks sharing no word are left out)."""
        wanted = self._unit(Counter(terms(query)))
        scored = [
            (sum(w * vector.get(t, 0.0) for t, w in wanted.items()), position)
            for position, vector in enumerate(self.vectors)
        ]
        ranked = sorted(((s, p) for s, p in scored if s > 0), key=lambda sp: (-sp[0], sp[1]))
        return [{**self.blocks[p], "score": round(s, 4)} for s, p in ranked[:k]]

    def grounded_messages(self, question: str, k: int = 3) -> list[dict[str, str]]:
        """Chat messages for a model: the retrieved blocks as context, then the question."""
        context = "\n".join(
            f"[{b['block_id']}] {b['title']}: {b['text']}" for b in self.search(question, k)
        )
        return [{"role": "system", "content": SYSTEM + context},
                {"role": "user", "content": question}]  # fmt: skip

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        """Answer the last user message without a model: the best-matching retrieved sentence."""
        question = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        wanted = set(terms(question))
        sentences = [s for b in self.search(question, k=3) for s in SENTENCE.split(b["text"])]
        if not sentences:
            return "I do not know."
        return max(sentences, key=lambda s: sum(self.idf[t] for t in wanted & set(terms(s))))


def build() -> NotesRag:
    """The pipeline over the shipped corpus."""
    return NotesRag(load_corpus())
