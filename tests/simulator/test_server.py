"""The simulator over real HTTP: wire format, usage, prompt cache, scripts and faults."""

import json

import httpx
import pytest

from pytest_srbench.core.calls.sse import ChatStreamState, SseDecoder
from pytest_srbench.core.canonical import digest
from pytest_srbench.simulator import client as sim_client

QUESTION = "Which letter?\n\nA. one\nB. two\nC. three\nD. four\n\nReturn only the letter of the correct answer."


def body(model, stream=True, question=QUESTION, **extra):
    data = {
        "model": model,
        "messages": [{"role": "user", "content": question}],
        "stream": stream,
        **extra,
    }
    if stream:
        data["stream_options"] = {"include_usage": True}
    return data


def stream(sim, payload):
    with httpx.Client(timeout=10) as client:
        response = client.post(sim.base_url + "/chat/completions", json=payload)
        return response, response.content


def parse(raw: bytes):
    decoder = SseDecoder()
    state = ChatStreamState(clock=lambda: 0.0, started=0.0)
    payloads = decoder.feed(raw)
    for payload in payloads:
        state.feed_payload(payload)
    return payloads, state


def test_streams_openai_chunks_with_usage_last(sim):
    sim_client.register_scripts(
        sim.admin_url, {digest(QUESTION): {"kind": "mcq", "answer": "C", "letters": "ABCD"}}
    )
    response, raw = stream(sim, body("always-right"))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.headers["x-srbench-simulator"] == "1"
    payloads, state = parse(raw)
    assert payloads[-1] == b"[DONE]"
    usage_chunk = json.loads(payloads[-2])
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["prompt_tokens"] > 0
    outcome = state.outcome()
    assert outcome.final_text == "C" and outcome.model == "always-right"


def test_wrong_model_answers_another_letter_and_is_deterministic(sim):
    sim_client.register_scripts(
        sim.admin_url, {digest(QUESTION): {"kind": "mcq", "answer": "C", "letters": "ABCD"}}
    )
    first = parse(stream(sim, body("always-wrong"))[1])[1].outcome().final_text
    second = parse(stream(sim, body("always-wrong"))[1])[1].outcome().final_text
    assert first == second and first.startswith("The answer is") and "C" not in first.split()[-1]


def test_usage_missing_without_include_usage_and_non_streaming_json(sim):
    payload = body("always-right")
    payload.pop("stream_options")
    payloads, _ = parse(stream(sim, payload)[1])
    assert all("usage" not in json.loads(p) for p in payloads if p != b"[DONE]")
    response, raw = stream(sim, body("always-right", stream=False))
    data = json.loads(raw)
    assert data["object"] == "chat.completion" and data["usage"]["completion_tokens"] >= 1


def test_multi_turn_prompts_hit_the_simulated_cache(sim):
    messages = [
        {"role": "user", "content": "x" * 400},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "next"},
    ]
    _, raw = stream(
        sim,
        {
            "model": "writer",
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
        },
    )
    outcome = parse(raw)[1].outcome()
    assert outcome.usage["cached_input_tokens"] > 0
    assert outcome.cache_write_reported is True


def test_unknown_model_and_bad_body(sim):
    response, _ = stream(sim, body("no-such-model"))
    assert response.status_code == 404
    with httpx.Client() as client:
        bad = client.post(sim.base_url + "/chat/completions", content=b"{not json")
    assert bad.status_code == 400


@pytest.mark.parametrize(("model", "status"), [("err500", 500), ("err429", 429)])
def test_http_faults(sim, model, status):
    response, _ = stream(sim, body(model))
    assert response.status_code == status
    if status == 429:
        assert response.headers["retry-after"] == "0"


def test_fault_first_attempts_clears_on_retry(sim):
    assert stream(sim, body("flaky429"))[0].status_code == 429
    assert stream(sim, body("flaky429"))[0].status_code == 200


def test_stream_cut_has_no_done(sim):
    with httpx.Client(timeout=10) as client, pytest.raises(httpx.RemoteProtocolError):
        client.post(sim.base_url + "/chat/completions", json=body("cut")).read()


def test_malformed_usage_missing_and_length(sim):
    _, raw = stream(sim, body("garbled"))
    assert b'{"choices": [{"index": 0, "delta": {"content": "x"\n\n' in raw
    payloads, state = parse(stream(sim, body("nousage"))[1])
    assert state.outcome().usage is None
    assert parse(stream(sim, body("truncating"))[1])[1].outcome().finish_reason == "length"


def test_max_tokens_truncates_with_length(sim):
    long_answer = {
        "model": "slow",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "max_tokens": 2,
    }
    sim_client.register_models(sim.admin_url, [])
    outcome = parse(stream(sim, long_answer)[1])[1].outcome()
    assert outcome.finish_reason == "length"


def test_stats_count_requests_and_concurrency(sim):
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: stream(sim, body("slow")), range(4)))
    stats = sim_client.stats(sim.admin_url)
    assert stats["requests"] == 4 and stats["completed"] == 4
    assert 2 <= stats["max_in_flight"] <= 4


def test_admin_payloads_arrive_exactly_whichever_encoder_could_write_them():
    """A run's scripts go out as JSON written by orjson (one per cell: fast), or by the
    standard library when orjson cannot write them (an integer beyond 64 bits, a lone
    surrogate); the body received always decodes to what was sent."""
    import http.server
    import threading

    received: list[bytes] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"null")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/srbench/scripts"
        payloads = [
            {"scripts": {"k": {"answer": "é", "n": 7}}},
            {"scripts": {"k": {"n": 2**70}}},
            {"scripts": {"k": {"text": "x\ud800y"}}},
        ]
        for payload in payloads:
            sim_client._post(url, payload)
    finally:
        server.shutdown()
        server.server_close()
    assert [json.loads(body) for body in received] == payloads
    assert "é".encode() in received[0]  # orjson's bytes (the standard library escapes it)


def test_case_scripts_are_registered_a_batch_at_a_time_and_all_kept(sim, monkeypatch):
    """A run's scripts go to the simulator a batch per request (never all held at once);
    the simulator adds each batch to what it has, so every case answers as scripted."""
    from pytest_srbench.benchmarks.registry import default_registry
    from pytest_srbench.core.models import Case, Message

    posted = []
    post = sim_client._post
    monkeypatch.setattr(sim_client, "SCRIPTS_PER_REQUEST", 3)
    monkeypatch.setattr(sim_client, "_post", lambda url, payload: posted.append(
        len(payload["scripts"])) or post(url, payload))  # fmt: skip
    before = sim_client.stats(sim.admin_url)["scripts"]
    questions = [QUESTION.replace("Which letter?", f"Which letter, {n}?") for n in range(7)]
    cases = [Case(id=f"mmlu-pro/s{n}", benchmark="mmlu-pro", answer="ABCD"[n % 4],
                  messages=[Message(role="user", content=q)], metadata={"letters": "ABCD"})
             for n, q in enumerate(questions)]  # fmt: skip
    sim_client.register_case_scripts(sim.admin_url, iter(cases), default_registry())
    assert posted == [3, 3, 1]
    assert sim_client.stats(sim.admin_url)["scripts"] == before + 7
    for case, question in zip(cases, questions, strict=True):
        _, state = parse(stream(sim, body("always-right", question=question))[1])
        assert state.outcome().final_text == case.answer
