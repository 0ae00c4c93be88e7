"""The RAG app declared as a benchmark target: its index is built once for the whole session."""

from __future__ import annotations

import pytest
from notes_rag import NotesRag, build

import pytest_srbench


@pytest_srbench.target("notes-rag", model="tfidf-extractive")
@pytest.fixture(scope="session")
def notes_rag() -> NotesRag:
    """The pipeline: what ``srbench_target.ask`` calls in the cells of target ``notes-rag``,
    and a plain session fixture (the retriever) that every test body may use."""
    return build()
