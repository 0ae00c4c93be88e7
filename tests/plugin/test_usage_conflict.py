"""Two usage chunks that disagree (issue 47, point 6): a real pytest session against a tiny
OpenAI-compatible server on 127.0.0.1 whose streams send two usage objects. sr-bench's rule
(bill the last) is kept; the receipt keeps both (``usage_conflict``) and the report counts
such calls (``usage_conflict_calls`` in the JSON, a ``note:`` line in the terminal)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import pytest
from aiohttp import web

from tests.plugin.endpoint_helpers import ThreadedEndpoint, write_stream

pytestmark = pytest.mark.slow

RUN = ("-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro")
EARLIER = {"prompt_tokens": 12, "completion_tokens": 9, "total_tokens": 21}
BILLED = {"prompt_tokens": 12, "completion_tokens": 90, "total_tokens": 102}


class TwoUsageServer(ThreadedEndpoint):
    async def handle(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": "Answer: A"}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": EARLIER},
            {"choices": [], "usage": BILLED},
        ]
        return await write_stream(response, chunks, stream_id="two", model="two-model")


@pytest.fixture
def two_usage_server() -> Iterator[TwoUsageServer]:
    server = TwoUsageServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_disagreeing_usage_chunks_are_flagged_and_counted(pytester, two_usage_server):
    (pytester.path / "srbench.toml").write_text(
        f"""
default_targets = ["two"]
[[targets]]
id = "two"
model = "two-model"
base_url = "http://127.0.0.1:{two_usage_server.port}/v1"
[targets.prices.two-model]
input = 1.0
cached_input = 0.5
cache_write = 0.0
output = 2.0
"""
    )
    result = pytester.runpytest_subprocess(*RUN, "--srbench-limit=2", "--srbench-json=r.json")
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert two_usage_server.requests == 2, output
    assert "Traceback" not in output
    report = json.loads((pytester.path / "r.json").read_text())
    assert report["usage_conflict_calls"] == 2
    note = "2 calls sent two usage chunks that disagree: the last was billed"
    assert any(note in line for line in report["notes"])
    assert note in output  # the terminal's note: line
    stores = list(pytester.path.rglob("*.sqlite*"))
    store = next(p for p in stores if p.suffix in (".sqlite", ".sqlite3", ".db"))
    rows = sqlite3.connect(store).execute("SELECT data FROM calls").fetchall()
    receipts = [json.loads(data) for (data,) in rows]
    assert len(receipts) == 2
    for receipt in receipts:
        assert receipt["usage_conflict"] == {"earlier": EARLIER, "billed": BILLED}
        assert receipt["usage"]["output_tokens"] == 90  # the last one is billed
