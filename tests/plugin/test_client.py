"""srbench_client: calls made by a test body's own code (the openai SDK routed through it, or
its direct API) are the cell's journaled calls, against the real simulator; a python target's
code calls the models it declares; a failed call fails the cell whatever the code did."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

pytestmark = pytest.mark.slow

pytest.importorskip("openai")  # in the locked test environment (constraints/test.txt)


def run(pytester: pytest.Pytester, *args: str, name: str = "report.json") -> tuple[Any, dict]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", f"--srbench-json={name}",
        "--srbench-store=store", *args,
    )  # fmt: skip
    return result, json.loads((pytester.path / name).read_text())


def journal(pytester: pytest.Pytester) -> list[dict]:
    db = sqlite3.connect(pytester.path / "store" / "journal.sqlite3")
    return [json.loads(data) for (data,) in db.execute("SELECT data FROM calls")]


def scrubbed(report: dict) -> list[dict]:
    keep = ("id", "total", "completed", "failed", "correct", "accuracy", "tokens", "cost_usd")
    return [{k: t[k] for k in keep} for t in report["summary"]["targets"]]


OPENAI_ASYNC = """
import pytest

@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target, srbench_client):
    client = srbench_client.async_openai()
    completion = await client.chat.completions.create(
        model=srbench_target.id, messages=srbench_case.messages
    )
    assert completion.usage.completion_tokens > 0
    return completion.choices[0].message.content
"""


def test_the_openai_sdk_through_srbench_client_gives_the_shipped_report(pytester):
    pytester.makepyfile(test_sdk=OPENAI_ASYNC)
    result, mine = run(pytester, "test_sdk.py")
    assert result.ret == 0, result.stdout.str()
    rows = journal(pytester)
    assert len(rows) == 28 and {row["status"] for row in rows} == {"completed"}
    assert all(row["ttft_s"] is not None and row["evidence_bytes"] > 0 for row in rows)
    assert all(row["usage"]["output_tokens"] > 0 for row in rows)
    assert {row["role"] for row in rows} == {"subject"}
    shipped_result, shipped = run(
        pytester, "--srbench-benchmark=mmlu-pro", "--ignore=test_sdk.py", name="shipped.json"
    )
    assert shipped_result.ret == 0
    assert scrubbed(mine) == scrubbed(shipped)


OPENAI_CLOSED_EACH_CELL = """
import pytest

CLIENTS = []

@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target, srbench_client):
    async with srbench_client.async_openai() as client:  # closed at the end of every cell
        CLIENTS.append(client)
        completion = await client.chat.completions.create(
            model=srbench_target.id, messages=srbench_case.messages
        )
    async with srbench_client.async_http_client() as http:  # the bare client, likewise
        assert (await http.get("/models")).status_code == 200
    return completion.choices[0].message.content

@pytest.mark.srbench("gpqa-diamond")
def test_sync(srbench_case, srbench_target, srbench_client):
    with srbench_client.openai() as client:
        completion = client.chat.completions.create(
            model=srbench_target.id, messages=srbench_case.messages
        )
    assert srbench_client.openai(timeout=30.0) is srbench_client.openai(timeout=30.0)
    assert srbench_client.openai(timeout=30.0) is not client
    assert srbench_client.openai(default_headers={"x-a": "b"}) is not client  # not a key
    return completion.choices[0].message.content

def test_one_client_per_options():
    assert len(CLIENTS) == 8 and len({id(client) for client in CLIENTS}) == 1
"""


def test_an_sdk_client_is_shared_by_the_cells_and_closing_it_leaves_it_usable(pytester):
    pytester.makepyfile(test_sdk=OPENAI_CLOSED_EACH_CELL)
    result, report = run(pytester, "test_sdk.py", "-p", "no:randomly")
    assert result.ret == 0, result.stdout.str()
    rows = journal(pytester)
    assert len(rows) == 16 and {row["status"] for row in rows} == {"completed"}


OPENAI_SYNC_STREAM = """
import pytest

@pytest.mark.srbench("gpqa-diamond")
def test_gpqa(srbench_case, srbench_target, srbench_client):
    client = srbench_client.openai()
    stream = client.chat.completions.create(
        model=srbench_target.model, messages=srbench_case.messages, stream=True,
        stream_options={"include_usage": True},
    )
    text, usage = "", None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        usage = chunk.usage or usage
    assert usage is not None and usage.completion_tokens > 0
    return text
"""


def test_a_streaming_sdk_call_from_a_sync_body_sees_the_raw_stream(pytester):
    pytester.makepyfile(test_sdk=OPENAI_SYNC_STREAM)
    result, report = run(pytester, "test_sdk.py")
    assert result.ret == 0, result.stdout.str()
    assert len(journal(pytester)) == 8
    shipped_result, shipped = run(
        pytester, "--srbench-benchmark=gpqa-diamond", "--ignore=test_sdk.py", name="ship.json"
    )
    assert shipped_result.ret == 0
    assert scrubbed(report) == scrubbed(shipped)  # the streamed text is the answer


APP_USING_A_MODEL = """
import pytest
import pytest_srbench

class Summarizer:
    def __init__(self, client):
        self.client = client

    async def __call__(self, messages):
        draft = await self.client.chat(messages, model="sim-large")
        check = await self.client.judge.chat(
            [{"role": "user", "content": "Is this right? " + draft.final_text}], model="sim-small"
        )
        return draft.final_text

@pytest_srbench.target("my-app", uses=["sim-large", "sim-small"])
@pytest.fixture(scope="session")
def my_app(srbench_client):
    return Summarizer(srbench_client)
"""

APP_TEST = """
import pytest

@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target):
    reply = await srbench_target.ask(srbench_case.messages)
    return reply.final_text
"""


def test_a_python_target_calls_the_models_it_uses_and_they_are_priced(pytester):
    pytester.makeconftest(APP_USING_A_MODEL)
    pytester.makepyfile(test_app=APP_TEST)
    result, report = run(pytester, "test_app.py", "--srbench-target", "my-app")
    assert result.ret == 0, result.stdout.str()
    (target,) = report["summary"]["targets"]
    assert target["id"] == "my-app" and target["failed"] == 0 and target["total"] == 14
    assert target["tokens"]["output_tokens"] > 0 and target["cost_usd"] is not None
    assert target["evaluation_cost_usd"] > 0  # the judge calls are priced, apart
    assert set(report["plan"]["auxiliary_targets"]) >= {"sim-large", "sim-small"}
    rows = journal(pytester)
    assert {row["target_id"] for row in rows} == {"my-app"}
    roles = sorted((row["role"], row["requested_model"]) for row in rows)
    assert roles.count(("subject", "sim-large")) == 14
    assert roles.count(("judge", "sim-small")) == 14


REFUSED = """
import pytest

@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target, srbench_client):
    if srbench_case.id.endswith("-001"):
        await srbench_client.chat(srbench_case.messages, model="no-such-model")
    if srbench_case.id.endswith("-002"):
        await srbench_client.chat(srbench_case.messages, logit_bias={"1": 5})
    reply = await srbench_client.chat(srbench_case.messages)
    return reply.final_text
"""


def test_requests_the_plan_does_not_allow_are_refused_with_the_reason(pytester):
    pytester.makepyfile(test_refused=REFUSED)
    result, report = run(pytester, "test_refused.py", "--srbench-target=sim-large")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*model 'no-such-model' is not a chat target of this run*"])
    result.stdout.fnmatch_lines(["*'logit_bias' is not a request parameter of this run's plan*"])
    (target,) = report["summary"]["targets"]
    assert target["failed"] == 2 and target["completed"] == 2
    assert len(journal(pytester)) == 2  # a refused request is never sent


SWALLOWED = """
import openai
import pytest

@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_client):
    client = srbench_client.async_openai()
    try:
        await client.chat.completions.create(model="down", messages=srbench_case.messages)
    except openai.APIError:
        return "A"  # a fallback answer: the failed call still fails the cell
"""

DOWN_TARGET = """
[tool.srbench]
default_targets = ["down"]
[[tool.srbench.targets]]
id = "down"
model = "down-model"
base_url = "http://127.0.0.1:9/v1"
[tool.srbench.targets.prices.down-model]
input = 1.0
cached_input = 0.5
cache_write = 2.0
output = 2.0
"""


def test_a_failed_call_fails_the_cell_even_when_the_code_swallows_it(pytester):
    pytester.makefile(".toml", pyproject=DOWN_TARGET)
    pytester.makepyfile(test_down=SWALLOWED)
    result, report = run(pytester, "test_down.py")
    assert result.ret == 1
    (target,) = report["summary"]["targets"]
    assert target["failed"] == 4 and target["correct"] == 0
    rows = journal(pytester)
    assert len(rows) == 4 and {row["status"] for row in rows} == {"failed"}  # no SDK retries
    assert "the test body raised" not in result.stdout.str()  # the call's own reason is shown


OUTSIDE = """
import pytest

def test_plain(srbench_client):
    with pytest.raises(RuntimeError, match="only while a marked test's body runs"):
        srbench_client.chat_sync("hello")
"""


def test_the_client_outside_a_body_is_a_clear_error(pytester):
    pytester.makepyfile(test_outside=OUTSIDE)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "test_outside.py"
    )
    result.assert_outcomes(passed=1)


BLOCKING_IN_ASYNC = """
import pytest

@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target, srbench_client):
    if srbench_case.id.endswith("-001"):
        return srbench_target.ask_sync(srbench_case.prompt).final_text
    if srbench_case.id.endswith("-002"):
        return srbench_client.chat_sync(srbench_case.prompt).final_text
    return (await srbench_client.chat(srbench_case.prompt)).final_text
"""


def test_a_blocking_call_in_an_async_body_is_refused_not_a_hang(pytester):
    pytester.makepyfile(test_blocking=BLOCKING_IN_ASYNC)
    result, report = run(pytester, "test_blocking.py", "--srbench-target=sim-large")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*srbench_target's blocking calls are for plain def bodies*"])
    result.stdout.fnmatch_lines(["*srbench_client's blocking calls are for plain def bodies*"])
    (target,) = report["summary"]["targets"]
    assert target["failed"] == 2 and target["completed"] == 2
    assert len(journal(pytester)) == 2  # nothing was sent for the refused calls
