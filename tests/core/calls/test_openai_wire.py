"""The OpenAI wire shapes of srbench_client: which target a model names, which request fields
the frozen plan allows, and the completion object of a non-streaming request."""

from __future__ import annotations

import pytest

from pytest_srbench.core.calls.openai_wire import (
    ClientRequestError,
    chat_request,
    completion_body,
    resolve_target,
)
from pytest_srbench.core.models import Target

LARGE = Target(id="large", model="m-large", base_url="http://127.0.0.1:1/v1")
SMALL = Target(id="small", model="m-small", base_url="http://127.0.0.1:1/v1")
TWIN = Target(id="twin", model="m-small", base_url="http://127.0.0.1:2/v1")
APP = Target(id="app", kind="python", model="app")
SEARCH = Target(
    id="search", kind="retrieval", model="bm25", base_url="http://127.0.0.1:3",
    retrieval={"mode": "fts"},
)  # fmt: skip
INVENTORY = {t.id: t for t in (LARGE, SMALL, TWIN, APP, SEARCH)}
MESSAGES = [{"role": "user", "content": "hi"}]


def frozen(target: Target) -> dict:
    return {"temperature": 0.0, "max_tokens": 64}


@pytest.mark.parametrize("model", [None, "large", "m-large"])
def test_a_model_cell_answers_to_its_id_its_model_or_nothing(model):
    assert resolve_target(model, LARGE, INVENTORY) == "large"


def test_another_target_is_named_by_id_or_by_a_unique_model():
    assert resolve_target("small", LARGE, INVENTORY) == "small"
    assert resolve_target("m-large", APP, INVENTORY) == "large"
    with pytest.raises(ClientRequestError, match="served by several targets"):
        resolve_target("m-small", APP, INVENTORY)


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (None, "is your own code: name the model it calls"),
        ("gpt-x", "not a chat target of this run's plan"),
        ("search", "not a chat target"),  # a retrieval service does not chat
        ("app", "not a chat target"),
        (7, "'model' must be a string"),
    ],
)
def test_a_python_cell_must_name_a_chat_model_of_the_plan(model, message):
    with pytest.raises(ClientRequestError, match=message):
        resolve_target(model, APP, INVENTORY)


def test_frozen_fields_may_repeat_but_not_change_and_extras_pass_through():
    body = {"model": "large", "messages": MESSAGES, "temperature": 0.0, "stream": True,
            "stream_options": {"include_usage": True}, "tools": [{"type": "function"}]}  # fmt: skip
    request = chat_request(body, APP, INVENTORY, frozen, frozenset({"tools"}))
    assert request.target_id == "large" and request.stream is True
    assert request.extra_body == {"tools": [{"type": "function"}]}
    with pytest.raises(ClientRequestError, match=r"'temperature'=0.7 differs .* temperature=0.0"):
        chat_request({**body, "temperature": 0.7}, APP, INVENTORY, frozen, frozenset({"tools"}))
    with pytest.raises(ClientRequestError, match="'seed' is not a request parameter"):
        chat_request({**body, "seed": 1}, APP, INVENTORY, frozen, frozenset({"tools"}))


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "must be a JSON object"),
        ({"model": "large"}, "'messages' must be a non-empty list"),
        ({"messages": ["hi"]}, "every message must be a JSON object"),
        ({"messages": MESSAGES, "stream": "yes"}, "'stream' must be true or false"),
    ],
)
def test_malformed_bodies_are_refused_with_the_reason(body, message):
    with pytest.raises(ClientRequestError, match=message):
        chat_request(body, LARGE, INVENTORY, frozen)


def test_a_completion_carries_the_servers_usage_and_tool_calls():
    calls = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    body = completion_body("call-1", 5, "m", "", calls, "tool_calls", {"prompt_tokens": 3})
    (choice,) = body["choices"]
    assert choice["message"] == {"role": "assistant", "content": None, "tool_calls": calls}
    assert choice["finish_reason"] == "tool_calls" and body["usage"] == {"prompt_tokens": 3}
    assert "usage" not in completion_body("call-2", 5, None, "hi", [], None, None)
