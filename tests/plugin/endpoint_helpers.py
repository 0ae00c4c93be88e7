"""A tiny OpenAI-compatible endpoint on 127.0.0.1, served by aiohttp on a thread of its own:
tests that need an endpoint which answers in one odd way subclass it and write ``handle``."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Self

from aiohttp import web


class ThreadedEndpoint:
    """``POST /v1/chat/completions`` answered by ``handle``; ``requests`` counts the calls."""

    def __init__(self) -> None:
        self.requests = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raise NotImplementedError

    async def _counted(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        return await self.handle(request)

    async def _start(self) -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._counted)
        self.runner = web.AppRunner(app)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def start(self) -> Self:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)
        return self

    def stop(self) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


async def write_stream(
    response: web.StreamResponse,
    chunks: Sequence[dict[str, Any]],
    *,
    stream_id: str,
    model: str,
) -> web.StreamResponse:
    """Send ``chunks`` as chat-completion chunks of one stream, then ``[DONE]``."""
    for chunk in chunks:
        body: Mapping[str, Any] = {**chunk, "id": stream_id, "object": "chat.completion.chunk",
                                   "model": model}  # fmt: skip
        await response.write(f"data: {json.dumps(body)}\n\n".encode())
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response
