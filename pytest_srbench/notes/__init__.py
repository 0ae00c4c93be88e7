"""Retrieval: the shipped notes corpus, text embeddings (numpy all-MiniLM-L6-v2 or a hashing
fallback) and the SQLite index searched by full text, vectors or both (see
docs/retrieval-protocol.md)."""
