"""Call and cell failures, and the controlled public summaries derived from their messages.

A summary is one of a fixed set of sentences, so nothing a server or a model wrote reaches a
report by accident. Two details are kept on purpose, cleaned (one line, no control
characters, at most ``DETAIL_CHARS`` characters): the message an HTTP error's body gave
(``Target HTTP 400: the request exceeds the available context size``), and the model a priced
call found no frozen price for (``… incomplete: no frozen price for model 'smol' …``).

A summary is the failure's *group* (the report counts cells by it); a cell's own *reason*
(``failure_reason``) is the specific one-line message the terminal showed for it
(``Per-case call budget exhausted (max_calls_per_case)``, ``Benchmark gpqa-diamond has no
judge target bound``): its first line, cleaned, at most ``REASON_CHARS`` characters, absolute
paths cut to their last part. An HTTP error's reason is its summary (the server's message is
kept only in that controlled form).
"""

from __future__ import annotations

import json
import re

from pytest_srbench.core.benchmark_errors import without_paths
from pytest_srbench.core.errors import SrbenchError


class CallFailure(SrbenchError):
    """A model call could not produce a trustworthy receipt; the cell fails with this reason.

    ``transient`` marks failures that an opt-in retry may repeat (HTTP 429 / 5xx, connection
    errors, a stream that ended without a finish reason, a malformed chunk); ``retry_after_s``
    carries the server's Retry-After when it sent one. ``nothing_generated`` marks a refusal
    before any output (an HTTP error status): its cost stays unknown on the receipt, but the
    budget reservation is released and a priced run may retry it.
    """

    def __init__(
        self,
        message: str,
        *,
        transient: bool = False,
        retry_after_s: float | None = None,
        nothing_generated: bool = False,
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.retry_after_s = retry_after_s
        self.nothing_generated = nothing_generated


class CellCancelled(SrbenchError):
    """The run stopped dispatching or the case deadline passed while the cell was running."""


class UsageObjectError(CallFailure):
    """The provider's usage object is invalid or self-contradictory."""


PRICING_SUMMARY = "Required usage or pricing evidence is incomplete"
INTERRUPTED = "Interrupted: the runner stopped while the call was in flight"

# a call of a --srbench-cache-only run whose request the response cache does not hold
CACHE_MISS_ONLY = "cache miss (--srbench-cache-only)"
_SUMMARIES: tuple[tuple[tuple[str, ...], str], ...] = (
    ((CACHE_MISS_ONLY,), CACHE_MISS_ONLY),
    # a cell cut off by a crash (lifecycle.WORKER_STOPPED / OWNER_STOPPED): its call may have
    # been answered and billed, nothing is known about it, and it is never re-sent
    (("worker stopped", "runner process stopped"), INTERRUPTED),
    # a task that needs its own container on a machine that cannot run it (never substituted)
    (("benchmark_container_unavailable",), "Task container unavailable (Docker not usable)"),
    (("benchmark_container_unsupported",), "Task container not supported"),
    # a benchmark written as a pytest test: its body's own exception text is the user's
    (("the test body raised", "the test body returned"), "The test body failed"),
    # a streamed chunk that does not decode (engine/call.py): named, not "Target call failed"
    (("not utf-8", "invalid utf-8"), "Target stream failed: invalid UTF-8 in the stream"),
    (("deadline", "wall-time", "wall time"), "Request or case deadline exceeded"),
    (("readtimeout", "read timeout", "idle"), "Target idle/read timeout"),
    (("connectionerror", "connecttimeout", "connection"), "Target connection failed"),
    (("cancel",), "Request cancelled after the run stopped"),
    (("repeated output",), "Repeated output guard triggered"),
    (("identity", "acknowledgement"), "Frozen runtime identity verification failed"),
    (("price", "pricing", "usage"), PRICING_SUMMARY),
    (("budget", "reservation"), "Frozen request or cost budget exhausted"),
    (("truncated",), "Auxiliary model output was truncated; grading is incomplete"),
    (("cap", "limit"), "Frozen output or call limit exceeded"),
    (("harness", "sandbox"), "Benchmark harness failed"),
    (("judge", "verdict", "grader", "cannot grade"), "Benchmark grading failed"),
    (("incomplete final",), "Target final response was incomplete"),
)

_HTTP = re.compile(r"\b(Target|Preview|Retrieval) HTTP \d{3}\b")
UNPRICED = re.compile(
    r"no frozen price for model '[^'\n]{1,200}'(?: \([^()\n]{1,300}\))?"
    r"|usage estimated by the proxy '[^'\n]{1,100}'"
)
DETAIL_CHARS = 160
REASON_CHARS = 240
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")


def clean_detail(text: str, limit: int = DETAIL_CHARS) -> str:
    """Text from outside fit for one line of a report: control characters and runs of
    whitespace become one space, at most ``limit`` characters (an ellipsis when cut)."""
    flat = " ".join(_CONTROL.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def server_message(body: bytes) -> str | None:
    """The explanation an HTTP error body gives (OpenAI's ``error.message``, a plain
    ``error`` / ``message`` / ``detail`` string, else the body's text), cleaned; None when
    the body says nothing."""
    text = body.decode("utf-8", "replace").strip()
    if not text:
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        candidates = [
            error.get("message") if isinstance(error, dict) else error,
            parsed.get("message"),
            parsed.get("detail"),
        ]
        said = next((c for c in candidates if isinstance(c, str) and c.strip()), None)
        if said is None:
            return None
        text = said
    cleaned = clean_detail(text)
    return cleaned or None


def summarize_failure(message: str) -> str:
    """Map a raw failure message to a short controlled summary (first match wins), keeping
    an HTTP error's server message and an unpriced model's name as cleaned details."""
    exact = _HTTP.search(message)
    if exact:
        rest = message[exact.end() :]
        said = clean_detail(rest[2:]) if rest.startswith(": ") else ""
        return f"{exact.group(0)}: {said}" if said else exact.group(0)
    lowered = message.lower()
    for needles, summary in _SUMMARIES:
        if any(needle in lowered for needle in needles):
            unpriced = UNPRICED.search(message) if summary == PRICING_SUMMARY else None
            if unpriced:
                return f"{summary}: {clean_detail(unpriced.group(0), 2 * DETAIL_CHARS)}"
            return summary
    return "Target call failed"


def failure_reason(message: str) -> str:
    """A failure's specific reason, one line (see the module docstring): what the terminal
    showed for the cell, as the JSON cell, the failure groups and the HTML show it."""
    if _HTTP.search(message):
        return summarize_failure(message)
    first = next((line for line in message.splitlines() if line.strip()), "")
    reason = clean_detail(without_paths(first), REASON_CHARS)
    return reason or summarize_failure(message)


_SAFE_ID = re.compile(r"[^A-Za-z0-9._/-]")


def safe_id(value: str) -> str:
    """An id made safe for an error line: limited alphabet, at most 128 characters."""
    return _SAFE_ID.sub("_", value)[:128]
