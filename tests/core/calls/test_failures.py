"""Failure summaries: a controlled one-line category for every raw failure message."""

from __future__ import annotations

import pytest

from pytest_srbench.core.calls.failures import (
    DETAIL_CHARS,
    clean_detail,
    server_message,
    summarize_failure,
)


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


@pytest.mark.parametrize(
    ("body", "said"),
    [
        # llama-server's answer to a prompt longer than its slot
        (b'{"error":{"code":400,"message":"the request exceeds the available context size, '
         b'try increasing it","type":"exceed_context_size_error"}}',
         "the request exceeds the available context size, try increasing it"),
        (b'{"error": "model not loaded"}', "model not loaded"),
        (b'{"detail": "Not Found"}', "Not Found"),
        (b"upstream\r\nconnect error\x1b[31m", "upstream connect error [31m"),
        (b'{"error": {"type": "x"}}', None),
        (b"   ", None),
        (b"x" * 500, "x" * 159 + "…"),
    ],
)  # fmt: skip
def test_the_servers_own_message_is_one_clean_capped_line(body, said):
    assert server_message(body) == said


def test_an_http_failure_keeps_the_servers_message_and_a_pricing_one_the_model():
    long = "Target HTTP 400: " + "<b>too long</b> " * 40
    summary = summarize_failure(long)
    assert summary.startswith("Target HTTP 400: <b>too long</b>") and summary.endswith("…")
    assert len(summary) == len("Target HTTP 400: ") + DETAIL_CHARS
    assert summarize_failure("Target HTTP 429") == "Target HTTP 429"
    unpriced = summarize_failure(
        "Priced call returned unknown model pricing: no frozen price for model 'smol' "
        "(requested 'fallback-group'; the proxy litellm fell back once to it); add it"
    )
    assert unpriced == (
        "Required usage or pricing evidence is incomplete: no frozen price for model 'smol' "
        "(requested 'fallback-group'; the proxy litellm fell back once to it)"
    )
    estimated = summarize_failure(
        "Priced call's usage estimated by the proxy 'litellm' (its backend sent no usage): …"
    )
    assert estimated.endswith(": usage estimated by the proxy 'litellm'")
    assert clean_detail("a\u2028b\tc", 10) == "a b c"
