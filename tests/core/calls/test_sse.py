"""SSE framing and the chat stream state: TTFT, think stripping, usage, guards, completeness."""

import json

import pytest

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.sse import (
    ChatStreamState,
    SseDecoder,
    StreamGuards,
    content_run,
    decode_texts,
    strip_think,
)
from tests.core.calls.helpers import sse


def chunk(content=None, finish=None, **extra):
    delta = {} if content is None else {"content": content}
    return {
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 0.25
        return self.now


def feed(data: bytes, guards=StreamGuards(), split=7):
    decoder = SseDecoder()
    state = ChatStreamState(clock=Clock(), started=0.0, guards=guards)
    for i in range(0, len(data), split):
        for payload in decoder.feed(data[i : i + split]):
            state.feed_payload(payload)
    return state


def test_decoder_handles_arbitrary_splits_crlf_and_multiline():
    data = b"data: a\r\n\r\n: comment\nevent: x\ndata: b\ndata:c\n\n"
    for split in (1, 2, 5, 100):
        decoder = SseDecoder()
        out = []
        for i in range(0, len(data), split):
            out += decoder.feed(data[i : i + split])
        assert out == [b"a", b"b\nc"]


def test_decoder_line_cap():
    with pytest.raises(CallFailure, match="SSE line cap"):
        SseDecoder(line_cap=10).feed(b"data: " + b"x" * 20)


def test_stream_with_usage_in_a_choiceless_last_chunk_and_llama_quirks():
    first = {
        "model": "m",
        "choices": [
            {"index": 0, "delta": {"role": "assistant", "content": None}, "finish_reason": None}
        ],
    }
    usage = {
        "prompt_tokens": 60,
        "completion_tokens": 2,
        "prompt_tokens_details": {"cached_tokens": 59},
    }
    data = sse(
        first,
        chunk("The"),
        chunk(" end"),
        chunk(finish="stop"),
        {"model": "m", "choices": [], "usage": usage, "timings": {"cache_n": 59}},
        b"[DONE]",
    )
    outcome = feed(data).outcome()
    assert outcome.content == "The end" and outcome.final_text == "The end"
    assert outcome.usage == {
        "input_tokens": 1,
        "cached_input_tokens": 59,
        "cache_write_tokens": 0,
        "output_tokens": 2,
    }
    assert outcome.cache_read_reported is True
    assert outcome.ttft_s == 0.25
    assert outcome.finish_reason == "stop" and outcome.output_complete


def test_usage_chunk_with_an_empty_delta_choice_litellm_style():
    usage = {"prompt_tokens": 5, "completion_tokens": 1}
    data = sse(
        chunk("B"),
        chunk(finish="stop"),
        {"model": "group", "choices": [{"index": 0, "delta": {}}], "usage": usage},
        b"[DONE]",
    )
    outcome = feed(data).outcome()
    assert (
        outcome.usage["output_tokens"] == 1
        and outcome.model == "group"
        and outcome.finish_reason == "stop"
    )


def test_missing_done_or_finish_is_incomplete():
    with pytest.raises(CallFailure, match="Incomplete final response"):
        feed(sse(chunk("B"), chunk(finish="stop"))).outcome()
    with pytest.raises(CallFailure, match="finish_reason=None"):
        feed(sse(chunk("B"), b"[DONE]")).outcome()


def test_length_finish_is_accepted_but_incomplete_output():
    outcome = feed(sse(chunk("B"), chunk(finish="length"), b"[DONE]")).outcome()
    assert outcome.output_complete is False


def test_error_event_and_malformed_chunk_fail():
    with pytest.raises(CallFailure, match="error event"):
        feed(sse({"error": {"message": "boom"}}))
    with pytest.raises(CallFailure, match="JSONDecodeError"):
        feed(sse(b'{"choices": ['))


def test_reasoning_counts_for_ttft_but_not_for_the_graded_text():
    data = sse(
        {"choices": [{"index": 0, "delta": {"reasoning_content": "hmm"}}]},
        chunk("<think>x</think>C"),
        chunk(finish="stop"),
        b"[DONE]",
    )
    outcome = feed(data).outcome()
    assert outcome.reasoning == "hmm" and outcome.final_text == "C" and outcome.ttft_s == 0.25


def test_strip_think():
    assert strip_think(" <think>a</think> B ") == "B"
    assert strip_think("<think>never closed B") == ""


def test_guards():
    with pytest.raises(CallFailure, match="Output character cap"):
        feed(sse(chunk("x" * 50)), StreamGuards(max_output_chars=10))
    with pytest.raises(CallFailure, match="Repeated output"):
        feed(
            sse(*[chunk("ab") for _ in range(40)]),
            StreamGuards(repetition_window=4, repetition_limit=5),
        )
    with pytest.raises(CallFailure, match="Output token cap"):
        feed(
            sse(
                chunk("B"), {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 99}}
            ),
            StreamGuards(max_output_tokens=10),
        )


def test_sticky_cache_flags_and_last_usage_wins():
    cached = {
        "prompt_tokens": 10,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 2},
    }
    plain = {"prompt_tokens": 10, "completion_tokens": 3}
    state = feed(
        sse(
            {"choices": [], "usage": cached},
            {"choices": [], "usage": plain},
            chunk(finish="stop"),
            b"[DONE]",
        )
    )
    outcome = state.outcome()
    assert outcome.cache_read_reported is True
    assert outcome.usage["cached_input_tokens"] == 0
    assert outcome.cache_read_usage["cached_input_tokens"] == 2


def test_tool_call_deltas_are_accumulated():
    parts = [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "function": {"name": "look", "arguments": '{"q":'},
                            }
                        ]
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"x"}'}}]},
                }
            ]
        },
        chunk(finish="tool_calls"),
    ]
    outcome = feed(sse(*parts, b"[DONE]")).outcome()
    assert outcome.tool_calls == [
        {"id": "c1", "type": "function", "function": {"name": "look", "arguments": '{"q":"x"}'}}
    ]


# -- the long-stream fast path (ChunkTemplate): the same outcome as chunk by chunk -----------

TRICKY = ["", "plain", 'quote " and \\ backslash', "tab\tnew\nline", "é ü 中文 🙂", "\u2028", "}]}"]


def long_stream(texts, *, ascii_escapes=False, extra=None):
    """A role chunk, one content chunk per text, a finish chunk with usage, [DONE]."""

    def dump(value):
        return json.dumps(value, ensure_ascii=ascii_escapes, separators=(",", ":"))

    head = {"id": "c1", "object": "chat.completion.chunk", "model": "m", **(extra or {})}
    role = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    body = [
        {**head, "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": None}]}
        for t in texts
    ]
    last = {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": len(texts)}}  # fmt: skip
    return [dump(c).encode() for c in (role, *body, last)] + [b"[DONE]"]


def outcome_of(payloads, *, template, per_read):
    state = ChatStreamState(clock=lambda: 1.0, started=0.0, guards=StreamGuards(1000, None, 5, 8))
    state._template_tried = not template  # without it: chunk by chunk, as before
    for i in range(0, len(payloads), per_read):
        state.feed_events(payloads[i : i + per_read])
    return state, state.outcome()


@pytest.mark.parametrize("ascii_escapes", [False, True])
@pytest.mark.parametrize("per_read", [1, 3, 500])
def test_a_long_stream_reads_the_same_through_its_template(ascii_escapes, per_read):
    texts = [TRICKY[i % len(TRICKY)] + str(i) * (i % 3) for i in range(60)]
    payloads = long_stream(texts, ascii_escapes=ascii_escapes)
    fast, fast_outcome = outcome_of(payloads, template=True, per_read=per_read)
    slow, slow_outcome = outcome_of(payloads, template=False, per_read=per_read)
    assert fast._template is not None and slow._template is None
    assert fast_outcome == slow_outcome
    assert fast_outcome.content == "".join(texts) and fast_outcome.chunk_count == 62


def test_chunks_that_differ_outside_their_text_take_the_ordinary_path():
    payloads = long_stream(["a", "b", "c"])
    odd = json.loads(payloads[2])
    odd["choices"][0]["finish_reason"] = "length"  # same text position, other bytes around it
    renamed = json.loads(payloads[3])
    renamed["model"] = "other"
    mixed = [*payloads[:2], json.dumps(odd).encode(), json.dumps(renamed).encode(), *payloads[4:]]
    fast = outcome_of(mixed, template=True, per_read=500)[1]
    assert fast == outcome_of(mixed, template=False, per_read=500)[1]
    assert fast.model == "m" and fast.content == "abc"


def test_a_malformed_chunk_inside_a_run_fails_as_before():
    payloads = long_stream(["a", "b", "c"])
    template = ChatStreamState(clock=lambda: 1.0, started=0.0)
    broken = payloads[3].replace(b'"c"', b'"c\\x"')  # an invalid escape in a matching chunk
    with pytest.raises(CallFailure, match="malformed stream chunk"):
        template.feed_events([*payloads[:3], broken])


def test_a_second_content_key_disables_the_template():
    payloads = long_stream(["a", "b"], extra={"meta": {"content": "not the text"}})
    state, outcome = outcome_of(payloads, template=True, per_read=500)
    assert state._template is None and outcome.content == "ab"


# -- a network read's run of content chunks found by their common bytes (feed_read) -----------


def read_by_read(data: bytes, cuts, *, fast: bool):
    """The outcome of ``data`` read in pieces ending at ``cuts``: through ``feed_read`` (fast)
    or event by event through ``feed_payload`` with no template (the reference)."""
    state = ChatStreamState(clock=lambda: 1.0, started=0.0, guards=StreamGuards(5000, None, 5, 8))
    state._template_tried = not fast
    decoder = SseDecoder()
    start = 0
    for end in [*cuts, len(data)]:
        piece = data[start:end]
        start = end
        if fast:
            if state.feed_read(decoder, piece):
                break
        else:
            if any(state.feed_payload(payload) for payload in decoder.feed(piece)):
                break
    return state, state.outcome()


def odd_streams():
    texts = [TRICKY[i % len(TRICKY)] + str(i) * (i % 3) for i in range(80)]
    payloads = long_stream(texts)
    other = json.loads(payloads[5])
    other["choices"][0]["delta"] = {"role": "assistant"}  # same suffix bytes, no text
    yield "plain", sse(*payloads)
    yield "interleaved", sse(*payloads[:5], json.dumps(other, separators=(",", ":")).encode(),
                             *payloads[5:])  # fmt: skip
    yield "crlf", sse(*payloads).replace(b"\n", b"\r\n")
    multiline = (
        sse(*payloads[:9]) + b": comment\ndata: " + payloads[9] + b"\n\n" + sse(*payloads[10:])
    )
    yield "comment", multiline
    yield "no-space", sse(*payloads[:20]).replace(b"data: ", b"data:") + sse(*payloads[20:])


@pytest.mark.parametrize("seed", range(12))
def test_reads_of_any_size_give_what_event_by_event_decoding_gives(seed):
    import random

    rng = random.Random(seed)
    for name, data in odd_streams():
        cuts = sorted(rng.sample(range(1, len(data)), rng.choice([1, 3, 40, 400])))
        fast, fast_outcome = read_by_read(data, cuts, fast=True)
        _, slow_outcome = read_by_read(data, cuts, fast=False)
        assert fast._template is not None, name
        assert fast_outcome == slow_outcome, name
        assert fast_outcome.chunk_count == slow_outcome.chunk_count == 82 + (name == "interleaved")


def test_a_run_read_at_once_is_decoded_at_once_and_a_broken_one_fails_as_before():
    payloads = long_stream(["a", "b", "c", "d", "e"])
    state = ChatStreamState(clock=lambda: 1.0, started=0.0)
    assert state.feed_read(SseDecoder(), sse(*payloads)) is True  # one read, as a fast server
    assert state.outcome().content == "abcde" and state.outcome().chunk_count == 7
    prefix, suffix = state._template.prefix, state._template.suffix
    region = sse(*payloads)[:-2]
    start, end, middles, count = content_run(region, prefix, suffix)
    assert region[:start] == sse(*payloads[:1]) and count == 5
    assert middles == b'"a","b","c","d","e"' and region[end:] == b"\n\n" + sse(*payloads[6:])[:-2]
    broken = sse(*payloads[:3], payloads[3].replace(b'"c"', b'"c\\x"'), *payloads[4:])
    with pytest.raises(CallFailure, match="malformed stream chunk"):
        ChatStreamState(clock=lambda: 1.0, started=0.0).feed_read(SseDecoder(), broken)


def test_a_run_holds_only_events_with_the_template_bytes_on_both_sides():
    payloads = long_stream(["a", "b", "c", "d"])
    state = ChatStreamState(clock=lambda: 1.0, started=0.0)
    state.feed_events(payloads[:2])
    prefix, suffix = state._template.prefix, state._template.suffix
    same_length = payloads[3].replace(b'"finish_reason":null', b'"finish_reason":"ab"')
    assert len(same_length) == len(payloads[3]) and same_length.endswith(suffix) is False
    for odd in ([payloads[2], same_length, *payloads[4:]], [*payloads[2:4], same_length]):
        assert content_run(sse(*odd)[:-2], prefix, suffix) is None
    glued = payloads[3].replace(b'"c"', b'"c","x"')  # one middle, two strings: no run of 1
    region = sse(payloads[2], glued, *payloads[4:6])[:-2]
    run = content_run(region, prefix, suffix)
    assert run is not None and decode_texts(run[2], run[3]) is None
    state = ChatStreamState(clock=lambda: 1.0, started=0.0)
    with pytest.raises(CallFailure, match="malformed stream chunk"):
        state.feed_read(SseDecoder(), sse(*payloads[:3], glued, *payloads[4:]))


def test_a_run_with_an_event_of_the_prefix_after_it_or_a_middle_not_a_string_is_read_as_before():
    """The fast path never takes what the ordinary path would read otherwise: a glued middle
    (two strings in one event) with one more event of the prefix after the run, placed so the
    counted span ends on a blank line; a middle that is a number."""
    payloads = long_stream(["a", "b", "c", "d"])
    state = ChatStreamState(clock=lambda: 1.0, started=0.0)
    state.feed_events(payloads[:2])
    prefix, suffix = state._template.prefix, state._template.suffix
    joint = len(suffix) + 2 + len(b"data: ") + len(prefix)
    glued = payloads[2].replace(b'"b"', b'"b","x"')
    outside = payloads[4].replace(b'"finish_reason":null', b'"finish_reason":"ab"')
    comment = b":" + b"x" * (joint - 4)  # one event of joint - 3 bytes
    data = sse(*payloads[:2], glued, payloads[3]) + comment + b"\n\n" + sse(outside, *payloads[5:])
    with pytest.raises(CallFailure, match="malformed stream chunk"):
        read_by_read(data, [], fast=False)
    with pytest.raises(CallFailure, match="malformed stream chunk"):
        read_by_read(data, [], fast=True)
    number = sse(*payloads[:3], payloads[3].replace(b'"c"', b"5"), *payloads[4:])
    assert read_by_read(number, [], fast=True)[1] == read_by_read(number, [], fast=False)[1]
