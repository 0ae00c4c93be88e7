"""The simulator's HTTP server: ``POST /v1/chat/completions`` with SSE streaming (for
simulated models and simulated routers), plus loopback admin routes under ``/srbench/`` for
answer scripts, models, routers and counters (the wire itself: ``simulator/http.py``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from pytest_srbench.simulator import retrieval_http, router_http
from pytest_srbench.simulator.http import (
    App,
    Request,
    Response,
    Server,
    StreamResponse,
    json_response,
    start_server,
)
from pytest_srbench.simulator.play import SimPlan, bursts, lookup_key, plan_response
from pytest_srbench.simulator.profiles import BUILTIN_MODELS, SimModel
from pytest_srbench.simulator.router import DEFAULT_ROUTER, RouteDecision, SimRouter

SIMULATOR_HEADER = "x-srbench-simulator"


class SimulatorState:
    """Models, routers, registered case scripts, router sessions and request counters of one
    simulator process."""

    def __init__(
        self,
        models: dict[str, SimModel] | None = None,
        routers: dict[str, SimRouter] | None = None,
    ) -> None:
        self.models: dict[str, SimModel] = dict(BUILTIN_MODELS)
        self.models.update(models or {})
        self.routers: dict[str, SimRouter] = {DEFAULT_ROUTER.name: DEFAULT_ROUTER}
        self.routers.update(routers or {})
        self.sessions: dict[str, str] = {}
        self.scripts: dict[str, dict[str, Any]] = {}
        self.attempts: Counter[tuple[str, str]] = Counter()
        self.retrieval = retrieval_http.RetrievalService()
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.completed = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.by_model: Counter[str] = Counter()
        self.attempts.clear()
        self.sessions.clear()

    def stats(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "completed": self.completed,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "by_model": dict(self.by_model),
            "scripts": len(self.scripts),
            "models": sorted(self.models),
            "routers": sorted(self.routers),
        }


class _ChunkWriter:
    """Builds SSE chunk bytes from a per-response prefix; token encodings are cached, so a
    200-chunk answer costs a few microseconds per chunk instead of a ``json.dumps`` each."""

    _encoded: ClassVar[dict[str, bytes]] = {}

    def __init__(self, plan: SimPlan, created: int) -> None:
        head = {
            "id": "chatcmpl-sim",
            "object": "chat.completion.chunk",
            "created": created,
            "model": plan.model,
        }
        self.prefix = b"data: " + json.dumps(head, separators=(",", ":")).encode()[:-1]
        self.plan = plan
        self.created = created

    def delta(self, field: str, text: str) -> bytes:
        encoded = self._encoded.get(text)
        if encoded is None:
            encoded = json.dumps(text).encode()
            if len(self._encoded) < 100_000:
                self._encoded[text] = encoded
        return (
            self.prefix
            + b',"choices":[{"index":0,"delta":{"'
            + field.encode()
            + b'":'
            + encoded
            + b'},"finish_reason":null}]}\n\n'
        )

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choices = [{"index": 0, "delta": delta, "finish_reason": finish}]
        return (
            self.prefix
            + b',"choices":'
            + json.dumps(choices, separators=(",", ":")).encode()
            + b"}\n\n"
        )


def _error(status: int, message: str, retry_after: float | None = None) -> Response:
    headers = {SIMULATOR_HEADER: "1"}
    if retry_after is not None:
        headers["Retry-After"] = str(max(0, round(retry_after)))
    return json_response(
        {"error": {"message": message, "type": "simulated_error", "code": status}},
        status=status,
        headers=headers,
    )


async def _stream(request: Request, plan: SimPlan, headers: dict[str, str]) -> StreamResponse:
    response = await request.stream(
        {
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            SIMULATOR_HEADER: "1",
            **headers,
        }
    )
    created = int(time.time())
    chunks = _ChunkWriter(plan, created)
    await response.write(chunks.chunk({"role": "assistant", "content": ""}))
    if plan.first_delay_s:
        await asyncio.sleep(plan.first_delay_s)
    pieces: list[tuple[str, str]] = [("reasoning_content", text) for text in plan.reasoning]
    pieces += [("content", text) for text in plan.content]
    step = bursts(len(pieces), plan.tokens_per_s)
    batch: list[bytes] = []
    for index, (field, text) in enumerate(pieces):
        if plan.cut_after is not None and index >= plan.cut_after:
            await response.write(b"".join(batch))
            response.abort()
            return response
        if plan.malformed_at is not None and index == plan.malformed_at:
            batch.append(b'data: {"choices": [{"index": 0, "delta": {"content": "x"\n\n')
        if plan.stall_at is not None and index == plan.stall_at:
            await response.write(b"".join(batch))
            batch.clear()
            await asyncio.sleep(plan.stall_s)
        batch.append(chunks.delta(field, text))
        if len(batch) >= step:
            await response.write(b"".join(batch))
            batch.clear()
            if plan.tokens_per_s:
                await asyncio.sleep(step / plan.tokens_per_s)
    for index, call in enumerate(plan.tool_calls):
        delta = {"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                 "function": {"name": call["name"], "arguments": call["arguments"]}}]}  # fmt: skip
        batch.append(chunks.chunk(delta))
    batch.append(chunks.chunk({}, plan.finish_reason))
    if plan.include_usage and plan.usage is not None:
        usage = json.dumps(plan.usage, separators=(",", ":")).encode()
        batch.append(chunks.prefix + b',"choices":[],"usage":' + usage + b"}\n\n")
    batch.append(b"data: [DONE]\n\n")
    await response.finish(b"".join(batch))
    return response


async def _json_body(plan: SimPlan, headers: dict[str, str]) -> Response:
    delay = plan.first_delay_s + (
        (len(plan.content) + len(plan.reasoning)) / plan.tokens_per_s if plan.tokens_per_s else 0.0
    )
    if delay:
        await asyncio.sleep(delay)
    message: dict[str, Any] = {"role": "assistant", "content": "".join(plan.content) or None}
    if plan.tool_calls:
        message["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": call["arguments"]},
            }
            for call in plan.tool_calls
        ]
    if plan.reasoning:
        message["reasoning_content"] = "".join(plan.reasoning)
    body: dict[str, Any] = {
        "id": "chatcmpl-sim",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": plan.model,
        "choices": [{"index": 0, "message": message, "finish_reason": plan.finish_reason}],
    }
    if plan.usage is not None:
        body["usage"] = plan.usage
    return json_response(body, headers={SIMULATOR_HEADER: "1", **headers})


async def chat_completions(request: Request) -> Response | StreamResponse:
    state: SimulatorState = request.state
    state.requests += 1
    state.in_flight += 1
    state.max_in_flight = max(state.max_in_flight, state.in_flight)
    try:
        try:
            body = request.json()
        except ValueError:
            return _error(400, "request body is not valid JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "Expected 'messages' to be an array")
        name = str(body.get("model"))
        model = state.models.get(name)
        router = state.routers.get(name) if model is None else None
        decision: RouteDecision | None = None
        if router is not None:
            decision = router_http.route_chat(state, router, body, request.headers)
            model = state.models.get(decision.model)
            if model is None:
                return _error(502, f"router {name!r} routed to unknown model {decision.model!r}")
        if model is None:
            return _error(404, f"model {name!r} is not simulated here")
        state.by_model[name] += 1
        key = lookup_key(body["messages"], state.scripts)
        script = state.scripts.get(key) if key else None
        state.attempts[(model.name, key or "")] += 1
        plan = plan_response(model, body, script, state.attempts[(model.name, key or "")])
        if plan.http_status != 200:
            return _error(plan.http_status, plan.error_message or "error", plan.retry_after_s)
        headers: dict[str, str] = {}
        if router is not None and decision is not None:
            headers = router_http.answer_headers(
                router, decision, plan, state.models, body, request.headers
            )
        response: Response | StreamResponse
        if body.get("stream"):
            response = await _stream(request, plan, headers)
        else:
            response = await _json_body(plan, headers)
        state.completed += 1
        return response
    finally:
        state.in_flight -= 1


async def list_models(request: Request) -> Response:
    state: SimulatorState = request.state
    data = [
        {"id": name, "object": "model", "owned_by": "pytest-srbench-simulator"}
        for name in sorted({*state.models, *state.routers})
    ]
    return json_response({"object": "list", "data": data})


async def health(request: Request) -> Response:
    return json_response({"status": "ok", "simulator": "pytest-srbench"})


async def stats(request: Request) -> Response:
    return json_response(request.state.stats())


async def reset(request: Request) -> Response:
    request.state.reset()
    return json_response({"status": "reset"})


async def register_scripts(request: Request) -> Response:
    try:
        body = request.json()
    except ValueError:
        return _error(400, "request body is not valid JSON")
    entries = body.get("scripts") if isinstance(body, dict) else None
    if not isinstance(entries, dict):
        return _error(400, "expected {'scripts': {key: script}}")
    request.state.scripts.update(entries)
    return json_response({"registered": len(entries)})


async def register_models(request: Request) -> Response:
    try:
        body = request.json()
    except ValueError:
        return _error(400, "request body is not valid JSON")
    raw = body.get("models") if isinstance(body, dict) else None
    if not isinstance(raw, list):
        return _error(400, "expected {'models': [...]}")
    try:
        models = [SimModel.model_validate(item) for item in raw]
    except ValueError as error:
        return _error(400, f"invalid simulated model: {error}")
    request.state.models.update({model.name: model for model in models})
    return json_response({"registered": [model.name for model in models]})


MAX_BODY_BYTES = 64 * 1024 * 1024


def make_app(state: SimulatorState | None = None) -> App:
    """The routes of one simulator state."""
    app = App(state or SimulatorState(), max_body_bytes=MAX_BODY_BYTES)
    app.add_post("/v1/chat/completions", chat_completions)
    app.add_get("/v1/models", list_models)
    app.add_get("/srbench/health", health)
    app.add_get("/health", health)
    app.add_get("/srbench/stats", stats)
    app.add_post("/srbench/reset", reset)
    app.add_post("/srbench/scripts", register_scripts)
    app.add_post("/srbench/models", register_models)
    app.add_post("/srbench/routers", router_http.register_routers)
    app.add_post("/api/v1/routing/preview", router_http.routing_preview)
    app.add_get("/config/router", router_http.router_config)
    retrieval_http.add_routes(app)
    return app


async def serve_app(app: App, host: str = "127.0.0.1", port: int = 0) -> Server:
    """Start serving ``app`` on the running loop (``Server.port`` says where)."""
    return await start_server(app, host, port)


async def serve(host: str, port: int, ready_file: Path | None, models: dict[str, SimModel]) -> None:
    """Run until cancelled; write the bound port to ``ready_file`` once listening."""
    server = await serve_app(make_app(SimulatorState(models)), host, port)
    bound = server.port or port
    if ready_file is not None:
        tmp = ready_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"port": bound, "pid": os.getpid()}))
        tmp.replace(ready_file)
    else:
        print(f"pytest-srbench simulator listening on http://{host}:{bound}/v1", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await server.close()


def load_models_file(path: Path) -> dict[str, SimModel]:
    """Extra simulated models from a JSON list."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    models = [SimModel.model_validate(item) for item in raw]
    return {model.name: model for model in models}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="srbench sim", description="Run the built-in simulator.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--ready-file", type=Path)
    parser.add_argument("--models", type=Path, help="JSON list of extra simulated models")
    args = parser.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print("the simulator binds to loopback only", file=sys.stderr)
        return 2
    models = load_models_file(args.models) if args.models else {}
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.host, args.port, args.ready_file, models))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
