"""Server-sent events: an incremental byte decoder and the chat-completion stream state.

Both are pure and shared by the live transport and by offline usage reconciliation, so a
stream is read by one implementation whether it arrives over HTTP or from saved evidence.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.usage import UsageBuckets, normalize_usage, usage_presence
from pytest_srbench.core.fastjson import loads

ACCEPTED_FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "function_call"})
DONE = b"[DONE]"
REPETITION_CHECK_CHARS = 48


class SseDecoder:
    """Split a byte stream into SSE event payloads (``data:`` lines joined with newlines).

    Payloads stay ``bytes``: the JSON decoder reads them without an intermediate ``str``.
    """

    __slots__ = ("_buffer", "_data", "line_cap")

    def __init__(self, line_cap: int | None = None) -> None:
        self._buffer = b""
        self._data: list[bytes] = []
        self.line_cap = line_cap

    def feed(self, chunk: bytes) -> list[bytes]:
        """Consume bytes and return the payloads of every event completed by them."""
        buffer = self._buffer + chunk if self._buffer else chunk
        if self._data or b"\r" in buffer:
            return self._feed_lines(buffer)
        # fast path: whole events separated by blank lines, each usually one "data: " line
        parts = buffer.split(b"\n\n")
        self._buffer = parts.pop()
        self._check_cap()
        return _payloads(parts)

    def take_region(self, chunk: bytes) -> tuple[bytes, list[bytes]]:
        """``feed`` for a reader that frames whole events itself: ``(region, [])`` with the raw
        bytes of every event completed by ``chunk`` (``data: …`` events between blank lines,
        without the last blank line) when they take the fast path, else ``(b"", payloads)``
        decoded line by line (a carriage return, an event left open over reads)."""
        buffer = self._buffer + chunk if self._buffer else chunk
        if self._data or b"\r" in buffer:
            self._buffer = b""
            return b"", self.feed(buffer)
        end = buffer.rfind(b"\n\n")
        if end < 0:
            self._buffer = buffer
            self._check_cap()
            return b"", []
        self._buffer = buffer[end + 2 :]
        self._check_cap()
        return buffer[:end], []

    def _check_cap(self) -> None:
        if self.line_cap is not None and len(self._buffer) > self.line_cap:
            raise CallFailure("SSE line cap exceeded")

    def _feed_lines(self, buffer: bytes) -> list[bytes]:
        lines = buffer.split(b"\n")
        self._buffer = lines.pop()
        self._check_cap()
        events: list[bytes] = []
        data = self._data
        for raw in lines:
            line = raw[:-1] if raw.endswith(b"\r") else raw
            if not line:
                if data:
                    events.append(data[0] if len(data) == 1 else b"\n".join(data))
                    data.clear()
            elif line.startswith(b"data:"):
                data.append(line[5:].lstrip())
        return events

    def close(self) -> list[bytes]:
        """Flush an event left open at the end of the stream (a final line without a blank)."""
        return self.feed(b"\n\n") if self._buffer or self._data else []


def _payloads(parts: list[bytes]) -> list[bytes]:
    """The payloads of whole events (the texts between blank lines; empty ones are skipped)."""
    simple = [part[6:] for part in parts if part[:6] == b"data: " and b"\n" not in part]
    if len(simple) == len(parts):  # every event one "data: " line (a long stream's read)
        return simple
    events: list[bytes] = []
    for part in parts:
        if part.startswith(b"data: ") and b"\n" not in part:
            events.append(part[6:])
        elif part:
            data = [line[5:].lstrip() for line in part.split(b"\n") if line.startswith(b"data:")]
            if data:
                events.append(b"\n".join(data))
    return events


def region_payloads(region: bytes) -> list[bytes]:
    """The payloads of a region of whole events (``SseDecoder.take_region``)."""
    return _payloads(region.split(b"\n\n")) if region else []


def content_run(region: bytes, prefix: bytes, suffix: bytes) -> tuple[int, int, bytes, int] | None:
    """The run of events ``data: <prefix><middle><suffix>`` in a region of whole events, found
    with a few searches over the bytes instead of a step per event: ``(start, end, middles,
    count)`` where ``region[start:end]`` holds the run's ``count`` events and ``middles`` is
    their middles joined by commas. None when no event starts with the prefix, or when one
    that does lies outside the run, or an event inside it lacks the prefix or the suffix (the
    caller then reads event by event).

    A middle is not checked further: the caller decodes ``[middles]`` and takes it only as
    ``count`` strings (a middle with a top-level comma, or none at all, cannot give that)."""
    lead = b"data: " + prefix
    if region.startswith(lead):
        start = 0
    else:
        found = region.find(b"\n\n" + lead)
        if found < 0:
            return None
        start = found + 2
    count = region.count(b"\n\n" + lead, start) + 1  # the events with the prefix from start
    pieces = region[start + 6 :].split(b"\n\ndata: ", count)[:count]  # "data: " taken off
    end = start + 6 + sum(map(len, pieces)) + 8 * (count - 1)
    # every boundary inside the run joins a suffix to a prefix (so each piece holds exactly
    # one event with both), and the last event ends with the suffix
    joint = suffix + b"\n\n" + lead
    if region.count(joint, start, end) != count - 1 or not pieces[-1].endswith(suffix):
        return None
    head, tail = len(prefix), len(suffix)
    return start, end, b",".join([piece[head : len(piece) - tail] for piece in pieces]), count


THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)


def strip_think(text: str) -> str:
    """Remove ``<think>…</think>`` blocks; an unclosed ``<think>`` leaves nothing gradable."""
    stripped = THINK_BLOCK.sub("", text)
    if "<think>" in stripped:
        return ""
    return stripped.strip()


@dataclass(frozen=True)
class StreamGuards:
    """Caps enforced while a response streams in (None disables a guard)."""

    max_output_chars: int | None = None
    max_output_tokens: int | None = None
    repetition_window: int | None = None
    repetition_limit: int | None = None


def repeated_tail(text: str, window: int, limit: int) -> bool:
    """True when the last ``window * limit`` characters are one window repeated ``limit`` times."""
    span = window * limit
    if len(text) < span:
        return False
    tail = text[-span:]
    return tail == tail[:window] * limit


@dataclass
class StreamOutcome:
    """Everything a finished stream says about one call."""

    content: str
    reasoning: str
    final_text: str
    finish_reason: str | None
    output_complete: bool
    model: str | None
    raw_usage: dict[str, Any] | None
    usage: UsageBuckets | None
    cache_read_reported: bool | None
    cache_write_reported: bool | None
    cache_read_usage: UsageBuckets | None
    tool_calls: list[dict[str, Any]]
    ttft_s: float | None
    done_count: int
    chunk_count: int
    server_timings: dict[str, Any] | None = None
    # two usage objects in one stream that disagree: the last is billed (sr-bench's rule),
    # both are kept ({"earlier": raw, "billed": raw})
    usage_conflict: dict[str, Any] | None = None


CONTENT_KEY = b'"content":'


@dataclass(frozen=True)
class ChunkTemplate:
    """The bytes around the text of a stream's first content chunk (``{…"delta":{"content":``
    and ``},…}``): later chunks with the same bytes around a different string are the same
    chunk with other text, so a long stream's reads are decoded with one ``loads`` per read
    instead of one per chunk and a dozen checks each. A chunk that differs in any byte
    outside its text (a role, a finish reason, usage) takes the ordinary path."""

    prefix: bytes
    suffix: bytes
    model: str | None

    @classmethod
    def learn(cls, payload: bytes, text: str, model: object) -> ChunkTemplate | None:
        """The template of a chunk that passed the content fast path, or None when its text
        cannot be located with certainty (the key appears more than once, odd spacing)."""
        if payload.count(CONTENT_KEY) != 1:
            return None
        start = payload.index(CONTENT_KEY) + len(CONTENT_KEY)
        while payload[start : start + 1] in (b" ", b"\t"):
            start += 1
        end = _string_end(payload, start)
        if end is None:
            return None
        try:
            if loads(payload[start:end]) != text:
                return None
        except ValueError:
            return None
        return cls(payload[:start], payload[end:], str(model) if model else None)

    def matches(self, payload: bytes) -> bool:
        return (
            len(payload) >= len(self.prefix) + len(self.suffix) + 2
            and payload.startswith(self.prefix)
            and payload.endswith(self.suffix)
        )

    def run_end(self, payloads: list[bytes], start: int) -> int:
        """The end of the run of payloads from ``start`` that match the template."""
        end = start
        while end < len(payloads) and self.matches(payloads[end]):
            end += 1
        return end

    def texts(self, payloads: list[bytes], start: int, end: int) -> list[str] | None:
        """The texts of ``payloads[start:end]``, decoded at once; None unless each one is
        exactly one JSON string (then the ordinary path reads them, and reports any error)."""
        head, tail = len(self.prefix), len(self.suffix)
        middles = [payload[head : len(payload) - tail] for payload in payloads[start:end]]
        return decode_texts(b",".join(middles), len(middles))


def decode_texts(middles: bytes, count: int) -> list[str] | None:
    """``count`` texts from their JSON string literals joined by commas, with one ``loads``;
    None unless that is exactly what they are."""
    try:
        texts = loads(b"[" + middles + b"]")
    except ValueError:
        return None
    if type(texts) is not list or len(texts) != count or set(map(type, texts)) != {str}:
        return None
    return texts


def _string_end(payload: bytes, start: int) -> int | None:
    """The index just past the JSON string literal that opens at ``start``, or None."""
    if payload[start : start + 1] != b'"':
        return None
    search = start + 1
    while True:
        quote = payload.find(b'"', search)
        if quote < 0:
            return None
        backslashes = 0
        while payload[quote - 1 - backslashes] == 0x5C:  # a quote escaped by an odd count
            backslashes += 1
        if backslashes % 2 == 0:
            return quote + 1
        search = quote + 1


@dataclass
class ChatStreamState:
    """Accumulates chat-completion chunks (or one JSON body) into a ``StreamOutcome``."""

    clock: Callable[[], float]
    started: float
    guards: StreamGuards = field(default_factory=StreamGuards)
    content_parts: list[str] = field(default_factory=list)
    reasoning_parts: list[str] = field(default_factory=list)
    chars: int = 0
    model: str | None = None
    raw_usage: dict[str, Any] | None = None
    usage: UsageBuckets | None = None
    read_reported: bool | None = None
    write_reported: bool | None = None
    cache_read_usage: UsageBuckets | None = None
    finish_reason: str | None = None
    tool_calls: dict[int, dict[str, Any]] = field(default_factory=dict)
    ttft_s: float | None = None
    done_count: int = 0
    chunk_count: int = 0
    server_timings: dict[str, Any] | None = None
    usage_conflict: dict[str, Any] | None = None
    _tail: str = ""
    _pending: list[str] = field(default_factory=list)
    _pending_chars: int = 0
    _template: ChunkTemplate | None = None
    _template_tried: bool = False

    def feed_payload(self, payload: bytes | str) -> bool:
        """Consume one SSE payload; returns True when it was the ``[DONE]`` marker."""
        return self.feed_events([payload.encode("utf-8") if isinstance(payload, str) else payload])

    def feed_events(self, payloads: list[bytes]) -> bool:
        """Consume the payloads of one network read; returns True once ``[DONE]`` arrived.

        The common chunk (one choice at index 0 whose delta holds only ``content``) takes a
        tight path with locals; anything else goes through ``feed_chunk``. Output caps and the
        repetition guard are checked once per read.
        """
        content_parts = self.content_parts
        appended = 0
        done = False
        position = 0
        count = len(payloads)
        while position < count:
            payload = payloads[position]
            position += 1
            template = self._template
            if template is not None and template.matches(payload):
                end = template.run_end(payloads, position - 1)
                texts = template.texts(payloads, position - 1, end)
                if texts is not None:  # a run of content chunks shaped like the template's
                    position = end
                    appended += self._take_texts(template, texts)
                    continue
            if payload == DONE:
                self.done_count += 1
                done = True
                break
            try:
                chunk = loads(payload)
            except ValueError as error:
                raise CallFailure("JSONDecodeError: malformed stream chunk") from error
            if type(chunk) is dict and len(chunk) <= 6:
                choices = chunk.get("choices")
                if (
                    type(choices) is list
                    and len(choices) == 1
                    and "usage" not in chunk
                    and "error" not in chunk
                ):
                    choice = choices[0]
                    if (
                        type(choice) is dict
                        and not choice.get("index")
                        and choice.get("finish_reason") is None
                    ):
                        delta = choice.get("delta")
                        if type(delta) is dict and len(delta) == 1:
                            text = delta.get("content")
                            if type(text) is str:
                                self.chunk_count += 1
                                model = chunk.get("model")
                                if model and model != self.model:
                                    self.model = str(model)
                                if text:
                                    if self.ttft_s is None:
                                        self.ttft_s = self.clock() - self.started
                                    content_parts.append(text)
                                    appended += len(text)
                                    self._pending.append(text)
                                if not self._template_tried:
                                    self._template_tried = True
                                    self._template = ChunkTemplate.learn(payload, text, model)
                                continue
            if appended:
                self._account(appended)
                appended = 0
            self.feed_chunk(chunk)
        if appended:
            self._account(appended)
        return done

    def feed_read(self, decoder: SseDecoder, chunk: bytes) -> bool:
        """Consume one network read of the stream; returns True once ``[DONE]`` arrived.

        The read's whole events are framed once (``SseDecoder.take_region``). Until the
        stream's content chunks have a template, events are read one by one; then the run of
        template-shaped chunks is found and joined by a few searches over the bytes
        (``content_run``) and decoded with one ``loads``. Everything else — the events around
        the run, a run that is not what it seemed — takes ``feed_events``."""
        region, payloads = decoder.take_region(chunk)
        if not region:
            return self.feed_events(payloads)
        position = 0
        while self._template is None and not self._template_tried:  # the first events
            boundary = region.find(b"\n\n", position)
            event = region[position:] if boundary < 0 else region[position:boundary]
            if self.feed_events(_payloads([event])):
                return True
            if boundary < 0:
                return False
            position = boundary + 2
        rest = region[position:] if position else region
        template = self._template
        run = None if template is None else content_run(rest, template.prefix, template.suffix)
        texts = None if run is None else decode_texts(run[2], run[3])
        if template is None or run is None or texts is None:
            return self.feed_events(region_payloads(rest))
        start, end = run[0], run[1]
        if start and self.feed_events(region_payloads(rest[: start - 2])):
            return True
        appended = self._take_texts(template, texts)
        if appended:
            self._account(appended)
        return end < len(rest) and self.feed_events(region_payloads(rest[end + 2 :]))

    def _take_texts(self, template: ChunkTemplate, texts: list[str]) -> int:
        """Append the texts of a run of template-shaped chunks; the characters appended (the
        caller charges them against the caps)."""
        self.chunk_count += len(texts)
        if template.model and template.model != self.model:
            self.model = template.model
        if "" in texts:
            texts = list(filter(None, texts))
        if not texts:
            return 0
        if self.ttft_s is None:
            self.ttft_s = self.clock() - self.started
        self.content_parts.extend(texts)
        self._pending.extend(texts)
        return sum(map(len, texts))

    def _account(self, count: int) -> None:
        """Charge appended characters against the caps (the fast path defers this per read)."""
        self.chars += count
        guards = self.guards
        if guards.max_output_chars is not None and self.chars > guards.max_output_chars:
            raise CallFailure("Output character cap exceeded")
        if guards.repetition_window and guards.repetition_limit:
            self._pending_chars += count
            if self._pending_chars >= REPETITION_CHECK_CHARS:
                self._check_repetition()
        else:
            self._pending.clear()

    def feed_chunk(self, chunk: Any) -> None:
        """Consume one decoded chunk (or a whole non-streaming response body)."""
        if type(chunk) is not dict:
            raise CallFailure("JSONDecodeError: stream chunk is not an object")
        self.chunk_count += 1
        if chunk.get("error"):
            raise CallFailure("Target returned an error event")
        model = chunk.get("model")
        if model:
            self.model = str(model)
        usage = chunk.get("usage")
        if usage:
            self._take_usage(usage)
        timings = chunk.get("timings")
        if timings and isinstance(timings, dict):
            self.server_timings = timings
        choices = chunk.get("choices")
        if not choices or type(choices) is not list:
            return
        first = choices[0]
        if type(first) is dict and not first.get("index"):
            self._take_choice(first)
            return
        for choice in choices:
            if isinstance(choice, dict) and (choice.get("index") or 0) == 0:
                self._take_choice(choice)
                break

    def _take_usage(self, raw: Any) -> None:
        normalized = normalize_usage(raw)
        read, write = usage_presence(raw)
        if self.raw_usage is not None and normalized != self.usage:
            # sr-bench bills the last usage object; the disagreement is kept as evidence
            earlier = (self.usage_conflict or {}).get("earlier", self.raw_usage)
            self.usage_conflict = {"earlier": earlier, "billed": raw}
        elif self.usage_conflict is not None:
            self.usage_conflict["billed"] = raw
        self.raw_usage = raw
        self.usage = normalized
        self.read_reported = bool(self.read_reported) or read
        self.write_reported = bool(self.write_reported) or write
        if read:
            self.cache_read_usage = normalized
        cap = self.guards.max_output_tokens
        if cap is not None and normalized is not None and normalized["output_tokens"] > cap:
            raise CallFailure("Output token cap exceeded")

    def _take_choice(self, choice: dict[str, Any]) -> None:
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            delta = choice.get("message")
        if isinstance(delta, dict):
            text = delta.get("content")
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if text and isinstance(text, str):
                self._append(self.content_parts, text)
            if reasoning and isinstance(reasoning, str):
                self._append(self.reasoning_parts, reasoning)
            calls = delta.get("tool_calls")
            if calls:
                self._take_tool_calls(calls)
        reason = choice.get("finish_reason")
        if reason is not None:
            self.finish_reason = str(reason)

    def _append(self, parts: list[str], text: str) -> None:
        if self.ttft_s is None:
            self.ttft_s = self.clock() - self.started
        parts.append(text)
        self.chars += len(text)
        guards = self.guards
        if guards.max_output_chars is not None and self.chars > guards.max_output_chars:
            raise CallFailure("Output character cap exceeded")
        if guards.repetition_window and guards.repetition_limit:
            self._pending.append(text)
            self._pending_chars += len(text)
            if self._pending_chars >= REPETITION_CHECK_CHARS:
                self._check_repetition()

    def _check_repetition(self) -> None:
        """Slide the guard's tail over the new text; checked every few dozen characters."""
        window, limit = self.guards.repetition_window, self.guards.repetition_limit
        if not window or not limit or not self._pending:
            return
        span = window * limit
        tail = self._tail + "".join(self._pending)
        self._pending.clear()
        self._pending_chars = 0
        tail = tail[-span:]
        self._tail = tail
        # cheap pre-check first: the last two windows must match before the full comparison
        if (
            len(tail) == span
            and tail[-window:] == tail[-2 * window : -window]
            and repeated_tail(tail, window, limit)
        ):
            raise CallFailure("Repeated output guard triggered")

    def _take_tool_calls(self, calls: Any) -> None:
        if not isinstance(calls, list):
            return
        for position, call in enumerate(calls):
            if not isinstance(call, dict):
                continue
            index = call.get("index", position)
            slot = self.tool_calls.setdefault(
                int(index),
                {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
            )
            if call.get("id"):
                slot["id"] = call["id"]
            function = call.get("function") or {}
            if isinstance(function, dict):
                if function.get("name"):
                    slot["function"]["name"] += str(function["name"])
                if function.get("arguments"):
                    slot["function"]["arguments"] += str(function["arguments"])

    def outcome(self, *, require_done: bool = True) -> StreamOutcome:
        """Check completeness and return the outcome; an unfinished stream is a call failure."""
        self._check_repetition()
        if require_done and self.done_count < 1:
            raise CallFailure(f"Incomplete final response (finish_reason={self.finish_reason})")
        if self.finish_reason not in ACCEPTED_FINISH_REASONS:
            raise CallFailure(f"Incomplete final response (finish_reason={self.finish_reason})")
        content = "".join(self.content_parts)
        return StreamOutcome(
            content=content,
            reasoning="".join(self.reasoning_parts),
            final_text=strip_think(content),
            finish_reason=self.finish_reason,
            output_complete=self.finish_reason != "length",
            model=self.model,
            raw_usage=self.raw_usage,
            usage=self.usage,
            cache_read_reported=self.read_reported,
            cache_write_reported=self.write_reported,
            cache_read_usage=self.cache_read_usage,
            tool_calls=[self.tool_calls[key] for key in sorted(self.tool_calls)],
            ttft_s=self.ttft_s,
            done_count=self.done_count,
            chunk_count=self.chunk_count,
            server_timings=self.server_timings,
            usage_conflict=self.usage_conflict,
        )
