"""Failure summaries: a controlled one-line category for every raw failure message."""

from __future__ import annotations

import pytest

from pytest_srbench.core.calls.failures import summarize_failure


@pytest.mark.parametrize(
    ("message", "summary"),
    [
        ("Target HTTP 503", "Target HTTP 503"),
        ("total request deadline exceeded", "Request or case deadline exceeded"),
        # the user's exception text never picks the category (here: "connection")
        ("the test body raised OSError: connection refused", "The test body failed"),
        ("the test body returned no answer (return the answer text)", "The test body failed"),
        ("benchmark 'agent-smoke' cannot grade an answer returned by a test body",
         "Benchmark grading failed"),
        # Docker's own words ("Cannot connect to the Docker daemon") never pick the category
        ("BENCHMARK_CONTAINER_UNAVAILABLE: this task needs Docker (task.toml names image x); "
         "`docker info` said: Cannot connect to the Docker daemon",
         "Task container unavailable (Docker not usable)"),
        ("something nobody foresaw", "Target call failed"),
    ],
)  # fmt: skip
def test_summaries(message, summary):
    assert summarize_failure(message) == summary
