"""Builders for the call tests: a response body as Server-Sent Events."""

from __future__ import annotations

import json


def sse(*payloads):
    return b"".join(
        b"data: " + (p if isinstance(p, bytes) else json.dumps(p).encode()) + b"\n\n"
        for p in payloads
    )
