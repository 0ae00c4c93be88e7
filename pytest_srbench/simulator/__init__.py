"""The built-in simulator: a real OpenAI-compatible HTTP server on 127.0.0.1 with seeded,
per-model accuracy, latency, prompt-cache and fault profiles."""
