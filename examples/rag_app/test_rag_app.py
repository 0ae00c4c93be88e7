"""Benchmarks of the RAG app in notes_rag.py.

- retrieval: the shipped ``rag-smoke`` benchmark (28 questions with the notes and blocks that
  answer them). The body returns the app's ranked results; srbench scores them with hit@1,
  hit@5, recall@k, MRR and citation hit, in the report's RAG section, beside the built-in
  retrieval services (the reference engine's fts, vector and hybrid modes).
- answers: ``notes-qa``, defined below, eight questions whose answers are in the notes. The app
  retrieves context and the target answers: a model (through ``srbench_target.ask``, journaled
  with tokens, cost and latency) or the app's own extractive reader (target ``notes-rag``).
"""

from __future__ import annotations

import re

import pytest

import pytest_srbench

QUESTIONS = [
    {"id": "pto-days", "question": "How many days of paid time off does an employee get per year?", "answer": "27 days"},
    {"id": "ledger-rpo", "question": "What is the recovery point objective for ledger-db?", "answer": "30 seconds"},
    {"id": "harbor-rate", "question": "How many requests per minute may a Harbor API key send by default?", "answer": "600 requests per minute"},
    {"id": "meal-allowance", "question": "What is the daily meal allowance on a business trip?", "answer": "45 euros"},
    {"id": "shared-links", "question": "After how many days do shared Beacon dashboard links expire?", "answer": "14 days"},
    {"id": "team-plan", "question": "How much does the Team plan cost per month?", "answer": "79 euros"},
    {"id": "cert-tool", "question": "Which internal tool issues our public TLS certificates?", "answer": "Certwarden"},
    {"id": "second-parent", "question": "How many weeks of parental leave does the second parent receive?", "answer": "12 weeks"},
]  # fmt: skip


def words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def states_the_answer(answer: str, case: dict) -> bool:
    """Correct when the reply contains the reference answer (case and punctuation aside)."""
    return f" {words(case['answer'])} " in f" {words(answer)} "


pytest_srbench.benchmark("notes-qa", cases=QUESTIONS, grade=states_the_answer, version="1")


@pytest.mark.srbench("rag-smoke")
async def test_retrieval(srbench_case, srbench_target):
    # A RAG case has no chat messages: its question is the metadata's "query". For target
    # notes-rag, search() is the app's own search; for the built-in retrieval services
    # (sim-rag-fts/-vector/-hybrid) it is one journaled search of that service. The ranked
    # results the body returns are what the benchmark scores.
    return await srbench_target.search(srbench_case.metadata["query"])


@pytest.mark.srbench("notes-qa")
async def test_answers(srbench_case, srbench_target, notes_rag):
    # sim-large / sim-small: a journaled model call (the simulator knows only the shipped
    # suites' answers; to these questions it says it does not know). notes-rag: the app's reader.
    messages = notes_rag.grounded_messages(srbench_case.prompt)
    return await srbench_target.ask(messages)
