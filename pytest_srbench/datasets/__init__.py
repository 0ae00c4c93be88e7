"""Benchmark data on disk: suite folders (cases.jsonl + suite.json) and their discovery."""
