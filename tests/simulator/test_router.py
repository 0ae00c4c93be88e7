"""The simulated semantic router: rules, fusion, receipts, debug headers, session stickiness,
the routing preview, the config endpoint and receipt faults (pure and over real HTTP)."""

import json

import httpx
import pytest

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.receipts import MODEL_USAGE_MAX_BYTES, receipt_fields
from pytest_srbench.core.calls.sse import ChatStreamState, SseDecoder
from pytest_srbench.core.models import Target
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.simulator.router import (
    DEFAULT_ROUTER,
    SimRoute,
    SimRouter,
    config_hash,
    fused,
    model_usage_receipt,
    recipe_config,
    route,
)
from tests.conftest import CHEAP

DEBUG = {"X-VSR-Debug": "true"}
TOOL_CALL = {
    "id": "call_0",
    "type": "function",
    "function": {"name": "run_shell", "arguments": "{}"},
}


def router(name, **extra):
    """A fast test router: "prove" or 200+ characters → always-right, else always-wrong."""
    fields = {
        "name": name,
        "routes": [
            SimRoute(decision="reasoning", model="always-right", keywords=["prove"], min_chars=200)
        ],
        "default": SimRoute(decision="general", model="always-wrong"),
        **extra,
    }
    return SimRouter(**fields)


def root(sim):
    return sim.base_url[: -len("/v1")]


def register(sim, *routers):
    payload = [item.model_dump(mode="json") for item in routers]
    with httpx.Client(timeout=10) as client:
        response = client.post(sim.admin_url + "/routers", json=payload)
    assert response.status_code == 200, response.text
    return response.json()


def chat(sim, model, messages, headers=None, stream=True):
    payload = {"model": model, "messages": messages, "stream": stream}
    if stream:
        payload["stream_options"] = {"include_usage": True}
    with httpx.Client(timeout=10) as client:
        return client.post(sim.base_url + "/chat/completions", json=payload, headers=headers)


def outcome(response):
    state = ChatStreamState(clock=lambda: 0.0, started=0.0)
    payloads = SseDecoder().feed(response.content)
    for payload in payloads:
        state.feed_payload(payload)
    usage = next(json.loads(p)["usage"] for p in payloads if p != b"[DONE]" and b'"usage"' in p)
    return state.outcome(), usage


def user(text):
    return [{"role": "user", "content": text}]


def preview(sim, payload, headers=None):
    with httpx.Client(timeout=10) as client:
        return client.post(root(sim) + "/api/v1/routing/preview", json=payload, headers=headers)


def mom_target(model, **extra):
    prices = {name: CHEAP for name in ("always-right", "always-wrong", "writer")}
    return Target(
        id=f"t-{model}",
        kind="mom",
        base_url="http://127.0.0.1:9/v1",
        model=model,
        prices=prices,
        **extra,
    )


# --- pure router -------------------------------------------------------------------------


def test_rules_first_match_wins_and_default():
    sessions: dict[str, str] = {}
    keyword = route(DEFAULT_ROUTER, user("Please PROVE that 2+2=4"), sessions)
    assert (keyword.decision, keyword.model, keyword.reason) == (
        "reasoning",
        "sim-large",
        "keyword",
    )
    assert keyword.phase == "user_turn"
    long = route(DEFAULT_ROUTER, user("y" * 1200), sessions)
    assert (long.model, long.reason) == ("sim-large", "length")
    plain = route(DEFAULT_ROUTER, user("Say hello."), sessions)
    assert (plain.decision, plain.model, plain.reason) == ("general", "sim-small", "default")
    parts = [{"role": "user", "content": [{"type": "text", "text": "explain why the sky"}]}]
    assert route(DEFAULT_ROUTER, parts, sessions).model == "sim-large"
    assert sessions == {}


def test_phases_follow_the_message_shape():
    sessions: dict[str, str] = {}
    loops = [
        [*user("go"), {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]}],
        [*user("go"), {"role": "tool", "tool_call_id": "call_0", "content": "ok"}],
        [*user("go"), {"role": "function", "name": "f", "content": "ok"}],
        [*user("go"), {"role": "tool", "content": "ok"}, *user("more")],
    ]
    for messages in loops:
        assert route(DEFAULT_ROUTER, messages, sessions).phase == "tool_loop"
    turn = [*user("go"), {"role": "assistant", "content": "hi"}, *user("again")]
    assert route(DEFAULT_ROUTER, turn, sessions).phase == "user_turn"


def test_sticky_sessions_keep_the_model_only_in_tool_loops():
    sticky, sessions = router("pure-sticky"), {}
    assert route(sticky, user("prove it"), sessions, "s1").model == "always-right"
    assert sessions == {"s1": "always-right"}
    loop = [*user("prove it"), {"role": "tool", "content": "x"}, *user("thanks")]
    kept = route(sticky, loop, sessions, "s1")
    assert (kept.model, kept.phase, kept.sticky, kept.decision) == (
        "always-right",
        "tool_loop",
        True,
        "reasoning",
    )
    assert route(sticky, loop, sessions, "other").model == "always-wrong"
    assert route(sticky, user("thanks"), sessions, "s1").model == "always-wrong"
    loose = router("pure-loose", sticky_sessions=False)
    assert route(loose, loop, {"s1": "always-right"}, "s1").model == "always-wrong"


def test_fusion_is_a_deterministic_draw_and_honours_the_call_limit():
    fusing = router("pure-fuse", fusion_rate=0.5, fusion_model="writer")
    draws = [fused(fusing, user(f"question {i}")) for i in range(40)]
    assert any(draws) and not all(draws)
    assert draws == [fused(fusing, user(f"question {i}")) for i in range(40)]
    index = draws.index(True)
    decision = route(fusing, user(f"question {index}"), {})
    assert decision.inference_models == ["always-wrong", "writer"]
    limited = route(fusing, user(f"question {index}"), {}, max_inference_calls=1)
    assert limited.inference_models == ["always-wrong"]
    assert not fused(router("pure-nofuse", fusion_rate=1.0), user("x"))


def test_config_hash_covers_routing_only():
    base = config_hash(DEFAULT_ROUTER)
    assert len(base) == 64
    hidden = DEFAULT_ROUTER.model_copy(
        update={"secret_api_key": "sk-other", "backend_base_url": "http://x/v1"}
    )
    assert config_hash(hidden) == base
    assert config_hash(DEFAULT_ROUTER.model_copy(update={"config_version": 2})) != base
    assert config_hash(DEFAULT_ROUTER.model_copy(update={"fusion_rate": 0.2})) != base
    recipe = recipe_config(DEFAULT_ROUTER)
    assert recipe["version"] == 1 and recipe["decisions"][0]["decision"] == "reasoning"
    assert recipe["fusion"] == {"rate": 0.1, "model": "sim-large"}
    assert {b["model"] for b in recipe["backends"]} == {"sim-large", "sim-small"}
    assert recipe["backends"][0]["api_key"] == DEFAULT_ROUTER.secret_api_key


def test_receipt_shape():
    usage = {
        "prompt_tokens": 100,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 48},
        "cache_creation_input_tokens": 16,
    }
    receipt = json.loads(model_usage_receipt([("a", usage), ("b", None)], complete=False))
    assert receipt == {
        "version": 1,
        "complete": False,
        "calls": [
            {
                "model": "a",
                "usage": {
                    "prompt_tokens": 100,
                    "completion_tokens": 7,
                    "cached_input_tokens": 48,
                    "cache_write_tokens": 16,
                },
            },
            {"model": "b"},
        ],
    }
    assert " " not in model_usage_receipt([("a", usage)], complete=True)


def test_router_fields_are_strict():
    with pytest.raises(ValueError, match="extra"):
        SimRouter.model_validate({**DEFAULT_ROUTER.model_dump(), "surprise": 1})
    with pytest.raises(ValueError, match="frozen"):
        DEFAULT_ROUTER.name = "x"
    with pytest.raises(ValueError):
        router("bad-rate", fusion_rate=1.5)


# --- over HTTP ---------------------------------------------------------------------------


def test_default_router_answers_as_the_routed_model(sim):
    response = chat(sim, "sim-router", user("Say hello."), headers=DEBUG)
    assert response.status_code == 200
    result, _ = outcome(response)
    assert result.model == "sim-small"
    assert response.headers["x-vsr-selected-model"] == "sim-small"
    assert response.headers["x-vsr-selected-decision"] == "general"
    assert response.headers["x-vsr-config-hash"] == config_hash(DEFAULT_ROUTER)
    stats = sim_client.stats(sim.admin_url)
    assert stats["by_model"] == {"sim-router": 1} and "sim-router" in stats["routers"]
    with httpx.Client() as client:
        listed = client.get(sim.base_url + "/models").json()["data"]
    assert "sim-router" in {item["id"] for item in listed}


def test_keyword_and_length_rules_over_http(sim):
    register(sim, router("http-rules"))
    keyword = chat(sim, "http-rules", user("Prove the lemma."), headers=DEBUG)
    assert keyword.headers["x-vsr-selected-decision"] == "reasoning"
    assert outcome(keyword)[0].model == "always-right"
    long = chat(sim, "http-rules", user("z " * 150), headers=DEBUG)
    assert long.headers["x-vsr-selected-model"] == "always-right"
    short = chat(sim, "http-rules", user("hi"), headers=DEBUG, stream=False)
    assert short.json()["model"] == "always-wrong"
    assert short.headers["x-vsr-selected-model"] == "always-wrong"
    assert json.loads(short.headers["x-vsr-model-usage"])["calls"][0]["model"] == "always-wrong"


def test_single_call_receipt_equals_the_streamed_usage(sim):
    register(sim, SimRouter(name="http-writer", default=SimRoute(decision="any", model="writer")))
    messages = [
        {"role": "user", "content": "x" * 400},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "next " * 40},
    ]
    response = chat(sim, "http-writer", messages, headers=DEBUG)
    result, usage = outcome(response)
    receipt = json.loads(response.headers["x-vsr-model-usage"])
    assert receipt["version"] == 1 and receipt["complete"] is True
    assert receipt["calls"] == [
        {
            "model": "writer",
            "usage": {
                "prompt_tokens": usage["prompt_tokens"],
                "completion_tokens": usage["completion_tokens"],
                "cached_input_tokens": usage["prompt_tokens_details"]["cached_tokens"],
                "cache_write_tokens": usage["cache_creation_input_tokens"],
            },
        }
    ]
    assert usage["prompt_tokens_details"]["cached_tokens"] > 0
    assert usage["cache_creation_input_tokens"] > 0
    assert response.headers["x-vsr-inference-call-count"] == "1"
    fields = receipt_fields(mom_target("http-writer"), result, response.headers)
    assert fields["usage"] == result.usage and fields["inference_call_count"] == 1


def test_fusion_sends_two_call_receipts_deterministically(sim):
    fusing = router("http-fuse", fusion_rate=0.5, fusion_model="writer")
    register(sim, fusing)
    prompts = [f"hello number {i}" for i in range(16)]
    counts = []
    for prompt in prompts:
        response = chat(sim, "http-fuse", user(prompt), headers=DEBUG)
        receipt = json.loads(response.headers["x-vsr-model-usage"])
        count = int(response.headers["x-vsr-inference-call-count"])
        assert len(receipt["calls"]) == count
        assert count == (2 if fused(fusing, user(prompt)) else 1)
        assert outcome(response)[0].model == "always-wrong"
        if count == 2:
            first, second = receipt["calls"]
            assert (first["model"], second["model"]) == ("always-wrong", "writer")
            assert second["usage"]["prompt_tokens"] == first["usage"]["prompt_tokens"]
            assert 1 <= second["usage"]["completion_tokens"] <= 32
        counts.append(count)
    assert 1 in counts and 2 in counts
    again = chat(sim, "http-fuse", user(prompts[counts.index(2)]), headers=DEBUG)
    assert again.headers["x-vsr-inference-call-count"] == "2"


def test_max_inference_calls_header_is_honoured(sim):
    register(sim, router("http-always-fuse", fusion_rate=1.0, fusion_model="writer"))
    both = chat(sim, "http-always-fuse", user("hi"), headers=DEBUG)
    assert both.headers["x-vsr-inference-call-count"] == "2"
    limit = {**DEBUG, "X-SR-Bench-Max-Inference-Calls": "1"}
    one = chat(sim, "http-always-fuse", user("hi"), headers=limit)
    assert one.headers["x-vsr-inference-call-count"] == "1"
    assert len(json.loads(one.headers["x-vsr-model-usage"])["calls"]) == 1
    shown = preview(sim, {"model": "http-always-fuse", "messages": user("hi")}, headers=limit)
    assert shown.json()["inference_models"] == ["always-wrong"]


def test_debug_headers_only_with_the_debug_header(sim):
    register(sim, router("http-debug"))
    plain = chat(sim, "http-debug", user("hi"), headers={"x-session-id": "s-plain"})
    assert "x-vsr-model-usage" in plain.headers and "x-vsr-config-hash" in plain.headers
    for name in (
        "x-vsr-selected-model",
        "x-vsr-selected-decision",
        "x-vsr-inference-call-count",
        "x-vsr-session-phase",
    ):
        assert name not in plain.headers
    no_session = chat(sim, "http-debug", user("hi"), headers=DEBUG)
    assert "x-vsr-selected-model" in no_session.headers
    assert "x-vsr-session-phase" not in no_session.headers
    with_session = chat(sim, "http-debug", user("hi"), headers={**DEBUG, "x-session-id": "s-dbg"})
    assert with_session.headers["x-vsr-session-phase"] == "user_turn"


def test_sessions_stick_in_tool_loops_and_reroute_on_user_turns(sim):
    register(sim, router("http-sticky"))
    session = {**DEBUG, "x-session-id": "sess-1"}
    first = chat(sim, "http-sticky", user("hello"), headers=session)
    assert first.headers["x-vsr-selected-model"] == "always-wrong"
    turn = [*user("hello"), {"role": "assistant", "content": "hi"}, *user("please prove it")]
    second = chat(sim, "http-sticky", turn, headers=session)
    assert second.headers["x-vsr-selected-model"] == "always-right"
    assert second.headers["x-vsr-session-phase"] == "user_turn"
    loop = [
        *turn,
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "tool", "tool_call_id": "call_0", "content": "done"},
        *user("thanks, go on"),
    ]
    kept = chat(sim, "http-sticky", loop, headers=session)
    assert kept.headers["x-vsr-selected-model"] == "always-right"
    assert kept.headers["x-vsr-session-phase"] == "tool_loop"
    assert outcome(kept)[0].model == "always-right"
    fresh = chat(sim, "http-sticky", loop, headers={**DEBUG, "x-session-id": "sess-2"})
    assert fresh.headers["x-vsr-selected-model"] == "always-wrong"
    anonymous = chat(sim, "http-sticky", loop, headers=DEBUG)
    assert anonymous.headers["x-vsr-selected-model"] == "always-wrong"
    previewed = preview(
        sim,
        {"model": "http-sticky", "messages": loop, "preview_context": {"session_id": "sess-1"}},
    ).json()
    assert previewed["selected_model"] == "always-right"
    assert previewed["session_phase"] == "tool_loop"
    sim_client.reset(sim.admin_url)
    forgotten = chat(sim, "http-sticky", loop, headers=session)
    assert forgotten.headers["x-vsr-selected-model"] == "always-wrong"


def test_preview_reports_the_decision_without_answering(sim):
    register(sim, router("http-preview", fusion_rate=1.0, fusion_model="writer"))
    payload = {
        "model": "http-preview",
        "messages": user("Prove it."),
        "max_tokens": 64,
        "options": {"trace": True},
        "preview_context": {"session_id": "p-1", "conversation_id": "c-1", "sampling_seed": 7},
    }
    response = preview(sim, payload)
    assert response.status_code == 200
    data = response.json()
    assert data.pop("trace")["fused"] is True
    assert data == {
        "selected_model": "always-right",
        "selection_status": "selected",
        "selection_reason": "keyword",
        "selection_method": "static",
        "decision_result": {"decision_name": "reasoning", "confidence": 1.0},
        "inference_models": ["always-right", "writer"],
        "config_hash": config_hash(router("http-preview", fusion_rate=1.0, fusion_model="writer")),
        "session_phase": "user_turn",
    }
    length = preview(sim, {"model": "http-preview", "messages": user("w" * 250)}).json()
    assert length["selection_reason"] == "length" and "trace" not in length
    default = preview(sim, {"model": "http-preview", "messages": user("hey")}).json()
    assert (default["selection_reason"], default["selected_model"]) == ("default", "always-wrong")
    stats = sim_client.stats(sim.admin_url)
    assert stats["requests"] == 0 and stats["by_model"] == {}
    loop = [*user("hey"), {"role": "tool", "content": "x"}]
    after = preview(
        sim, {"model": "http-preview", "messages": loop, "preview_context": {"session_id": "p-1"}}
    ).json()
    assert after["selected_model"] == "always-wrong"


@pytest.mark.parametrize(
    "payload",
    [
        [1, 2],
        {"messages": user("x")},
        {"model": "sim-router"},
        {"model": "sim-router", "messages": []},
        {"model": "sim-router", "messages": ["text"]},
        {"model": "sim-router", "messages": user("x"), "max_tokens": "10"},
        {"model": "sim-router", "messages": user("x"), "options": []},
        {"model": "sim-router", "messages": user("x"), "preview_context": "s"},
        {"model": "sim-router", "messages": user("x"), "preview_context": {"session_id": 3}},
        {"model": "sim-router", "messages": user("x"), "preview_context": {"sampling_seed": "1"}},
    ],
)
def test_preview_rejects_malformed_bodies(sim, payload):
    response = preview(sim, payload)
    assert response.status_code == 400
    assert response.json()["error"]["message"]


def test_preview_errors_for_bad_json_and_unknown_router(sim):
    with httpx.Client() as client:
        bad = client.post(root(sim) + "/api/v1/routing/preview", content=b"{nope")
    assert bad.status_code == 400
    unknown = preview(sim, {"model": "no-such-router", "messages": user("x")})
    assert unknown.status_code == 404


def test_config_endpoint_hash_etag_and_bump(sim):
    original = router("http-config")
    register(sim, original)
    with httpx.Client(timeout=10) as client:
        first = client.get(root(sim) + "/config/router", params={"router": "http-config"})
        assert first.status_code == 200
        data = first.json()
        assert data["config_hash"] == data["active_config_hash"] == config_hash(original)
        assert data["config"] == recipe_config(original)
        etag = first.headers["etag"]
        assert etag.startswith('"v1-') and etag.endswith('"')
        cached = client.get(
            root(sim) + "/config/router",
            params={"router": "http-config"},
            headers={"If-None-Match": etag},
        )
        assert cached.status_code == 304
        default = client.get(root(sim) + "/config/router").json()
        assert default["config_hash"] == config_hash(DEFAULT_ROUTER)
        assert client.get(root(sim) + "/config/router?router=nope").status_code == 404
    answered = chat(sim, "http-config", user("hi"))
    assert answered.headers["x-vsr-config-hash"] == config_hash(original)

    bumped = original.model_copy(update={"config_version": 2})
    assert register(sim, bumped)["config_hashes"] == {"http-config": config_hash(bumped)}
    with httpx.Client(timeout=10) as client:
        second = client.get(root(sim) + "/config/router", params={"router": "http-config"})
    assert second.json()["config_hash"] == config_hash(bumped) != config_hash(original)
    assert second.headers["etag"] != etag and second.headers["etag"].startswith('"v2-')
    expect_old = {"X-SR-Bench-Expected-Config-Hash": config_hash(original)}
    echoed = chat(sim, "http-config", user("hi"), headers=expect_old)
    assert echoed.status_code == 200
    assert echoed.headers["x-vsr-config-hash"] == config_hash(bumped)
    with pytest.raises(CallFailure, match="configuration identity"):
        receipt_fields(
            mom_target("http-config", config_hash=config_hash(original)),
            outcome(echoed)[0],
            echoed.headers,
        )


def test_lagging_router_runs_its_previous_config(sim):
    lagging = router("http-lag", config_version=3, active_lag=True)
    register(sim, lagging)
    with httpx.Client(timeout=10) as client:
        data = client.get(root(sim) + "/config/router", params={"router": "http-lag"}).json()
    previous = config_hash(lagging.model_copy(update={"config_version": 2}))
    assert data["config_hash"] == config_hash(lagging)
    assert data["active_config_hash"] == previous
    assert chat(sim, "http-lag", user("hi")).headers["x-vsr-config-hash"] == previous


@pytest.mark.parametrize("fault", ["oversized", "malformed", "wrong_hash", "too_many_calls"])
def test_receipt_faults(sim, fault):
    faulty = router(f"http-fault-{fault}", receipt_fault=fault)
    register(sim, faulty)
    response = chat(sim, faulty.name, user("hi"), headers=DEBUG)
    assert response.status_code == 200
    raw = response.headers["x-vsr-model-usage"]
    target = mom_target(faulty.name, config_hash=config_hash(faulty), max_inference_calls=2)
    if fault == "oversized":
        assert len(raw.encode()) > MODEL_USAGE_MAX_BYTES
        match = "exceeds 12288 bytes"
    elif fault == "malformed":
        with pytest.raises(ValueError):
            json.loads(raw)
        match = "not valid JSON"
    elif fault == "wrong_hash":
        assert response.headers["x-vsr-config-hash"] != config_hash(faulty)
        match = "configuration identity"
    else:
        assert len(json.loads(raw)["calls"]) == 3
        assert response.headers["x-vsr-inference-call-count"] == "3"
        match = "3 inference calls"
    with pytest.raises(CallFailure, match=match):
        receipt_fields(target, outcome(response)[0], response.headers)


def test_router_requests_honour_the_routed_models_faults(sim):
    register(
        sim,
        SimRouter(name="http-err", default=SimRoute(decision="any", model="err500")),
        SimRouter(name="http-flaky", default=SimRoute(decision="any", model="flaky429")),
    )
    assert chat(sim, "http-err", user("hi")).status_code == 500
    assert chat(sim, "http-flaky", user("hi")).status_code == 429
    assert chat(sim, "http-flaky", user("hi")).status_code == 200


@pytest.mark.parametrize(
    "payload",
    [
        {"routers": "x"},
        [{"name": "r"}],
        [router("bad-model").model_copy(update={"fusion_model": "nope"}).model_dump()],
        [router("always-right").model_dump()],
    ],
)
def test_router_registration_rejects_bad_routers(sim, payload):
    with httpx.Client(timeout=10) as client:
        response = client.post(sim.admin_url + "/routers", json=payload)
    assert response.status_code == 400


def test_routers_register_as_list_or_object(sim):
    with httpx.Client(timeout=10) as client:
        response = client.post(
            sim.admin_url + "/routers",
            json={"routers": [router("http-object").model_dump(mode="json")]},
        )
    assert response.json()["registered"] == ["http-object"]
