"""The ``srbench_client`` fixture: OpenAI-compatible calls made by a test body's own code (or
by the user's code it calls), journaled as the cell's calls exactly as the engine journals its
own: a ``sent`` row before the request leaves, the raw stream kept as evidence, four token
buckets, TTFT, latency, the budget reserved and settled.

The client holds no state of its own: a call belongs to the cell whose body is running, which
the body's context says (``CURRENT``, set around the body; ``asyncio`` tasks and
``asyncio.to_thread`` carry it along). A failed journaled call fails the cell, whatever the
code that made it did with the error: the run's accounting counts it as the engine would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import orjson

from pytest_srbench.benchmarks.base import Adapter, CellContext, ModelReply
from pytest_srbench.core.calls.failures import CallFailure, CellCancelled
from pytest_srbench.core.calls.openai_wire import (
    ChatRequest,
    ClientRequestError,
    chat_request,
    completion_body,
    error_body,
)
from pytest_srbench.core.models import Role, Target
from pytest_srbench.engine.call import ADAPTER_EXTRAS
from pytest_srbench.transport import in_process
from pytest_srbench.transport.in_process import Reply

if TYPE_CHECKING:
    from pytest_srbench.plugin.cell_output import CellOutput


class BodyCalls(CellContext, Protocol):
    """What the client needs of the running cell (the engine's ``CellRun``): the adapter's
    context, the plan's targets and their frozen request parameters."""

    @property
    def inventory(self) -> Mapping[str, Target]: ...

    def request_params(self, target: Target) -> dict[str, Any]: ...

    def bound_target(self, role: str) -> Target | None: ...


@dataclass
class BodyScope:
    """The cell a running test body belongs to, the engine loop its calls run on, the first of
    its calls that failed, its benchmark's own protocol (``srbench_protocol`` runs it, once),
    and what the body wrote (``cell_output``: made at its first write)."""

    cell: BodyCalls
    loop: asyncio.AbstractEventLoop
    failure: CallFailure | CellCancelled | None = None
    protocol: Adapter | None = None
    output: CellOutput | None = None


T = TypeVar("T")
CURRENT: ContextVar[BodyScope | None] = ContextVar("srbench_body", default=None)
NO_RETRY = {"x-should-retry": "false"}  # an SDK must not repeat a call the engine has judged


def current_scope() -> BodyScope:
    scope = CURRENT.get()
    if scope is None:
        raise RuntimeError(
            "srbench_client can be called only while a marked test's body runs (from the body, "
            "code it awaits, its asyncio tasks, or threads started with asyncio.to_thread)"
        )
    return scope


def _json(status: int, body: Mapping[str, Any], headers: Mapping[str, str] = NO_RETRY) -> Reply:
    return status, {"content-type": "application/json", **headers}, orjson.dumps(body)


class SrbenchClient:
    """An OpenAI-compatible client whose calls are the running cell's journaled calls.

    ``await chat(messages, model=...)`` (``chat_sync`` in a plain ``def`` body) returns the
    reply; ``async_openai()`` / ``openai()`` build ``openai`` SDK clients on it;
    ``async_http_client()`` / ``http_client()`` give the bare httpx clients for any SDK that
    takes one. ``judge`` is the same client recording its calls as judge calls.
    """

    base_url = in_process.BASE_URL

    def __init__(self, role: Role = "subject") -> None:
        self.role = role
        self._http: dict[tuple[str, bool], Any] = {}
        self._sdk: dict[tuple[Any, ...], Any] = {}  # openai SDK clients, by their options
        self._judge: SrbenchClient | None = None

    @property
    def judge(self) -> SrbenchClient:
        """This client, recording its calls as the cell's judge calls."""
        if self.role == "judge":
            return self
        if self._judge is None:
            self._judge = SrbenchClient("judge")
        return self._judge

    # -- the direct API ----------------------------------------------------------------------
    async def chat(
        self, messages: str | Sequence[Mapping[str, Any]], *, model: str | None = None, **body: Any
    ) -> ModelReply:
        """One journaled chat call; ``model`` names a chat target of the plan (by default the
        cell's own target, when that is a model or a router)."""
        scope = current_scope()
        return await self._send(scope, self._request(scope, _body(messages, model, body)))

    def chat_sync(
        self, messages: str | Sequence[Mapping[str, Any]], *, model: str | None = None, **body: Any
    ) -> ModelReply:
        """``chat`` for a plain ``def`` body (which runs in a worker thread)."""
        scope = current_scope()
        request = self._request(scope, _body(messages, model, body))
        return run_blocking(scope.loop, self._send(scope, request), "srbench_client")

    # -- SDK plumbing ------------------------------------------------------------------------
    def async_http_client(self, httpx: ModuleType | None = None) -> Any:
        """An ``httpx.AsyncClient`` (or one of the given httpx flavour) whose requests to
        ``/chat/completions`` are this client's calls."""
        module = httpx or in_process.default_httpx()
        key = (module.__name__, True)
        if key not in self._http:
            self._http[key] = in_process.async_client(module, self._handle_current)
        return self._http[key]

    def http_client(self, httpx: ModuleType | None = None) -> Any:
        """The blocking ``httpx.Client`` counterpart, for a plain ``def`` body."""
        module = httpx or in_process.default_httpx()
        key = (module.__name__, False)
        if key not in self._http:
            self._http[key] = in_process.sync_client(module, self._handle_current_sync)
        return self._http[key]

    def async_openai(self, **options: Any) -> Any:
        """An ``openai.AsyncOpenAI`` client on this client (no SDK retries: the plan's limits
        decide whether a call is repeated). The same client for the same options, session-wide:
        it holds nothing of a cell (a call belongs to the body awaiting it), and the SDK sets a
        new client up at a cost (its first request looks the platform up in a thread)."""
        return self._sdk_client(True, options)

    def openai(self, **options: Any) -> Any:
        """An ``openai.OpenAI`` client on this client, for a plain ``def`` body (the same for
        the same options, like ``async_openai``)."""
        return self._sdk_client(False, options)

    def _sdk_client(self, is_async: bool, options: dict[str, Any]) -> Any:
        try:
            key: tuple[Any, ...] | None = (is_async, *sorted(options.items()))
            hash(key)
        except TypeError:  # an option that cannot be a key (a dict of headers): a new client
            key = None
        client = self._sdk.get(key) if key is not None else None
        if client is None:
            openai = _openai_sdk()
            factory = openai.AsyncOpenAI if is_async else openai.OpenAI
            client = factory(**self._openai_options(openai, is_async, options))
            if key is not None:
                self._sdk[key] = client
        return client

    def _openai_options(self, sdk: ModuleType, is_async: bool, options: dict[str, Any]) -> Any:
        module = in_process.sdk_httpx(sdk)
        http = self.async_http_client(module) if is_async else self.http_client(module)
        return {"base_url": self.base_url, "api_key": "srbench-client", "max_retries": 0,
                "http_client": http, **options}  # fmt: skip

    # -- answering a request -----------------------------------------------------------------
    def _request(self, scope: BodyScope, body: object) -> ChatRequest:
        cell = scope.cell
        if self.role == "judge" and isinstance(body, Mapping):
            body = judge_body(cell, body)
        return chat_request(body, cell.target, cell.inventory, cell.request_params, ADAPTER_EXTRAS)

    async def _send(self, scope: BodyScope, request: ChatRequest) -> ModelReply:
        if scope.failure is not None:
            raise CallFailure(f"an earlier call of this cell failed: {scope.failure}")
        try:
            call = scope.cell.call(
                request.messages,
                role=self.role,
                extra_body=request.extra_body or None,
                via=request.target_id,
            )
            return await on_loop(scope.loop, call)
        except (CallFailure, CellCancelled) as failure:
            scope.failure = scope.failure or failure
            raise

    async def _handle_current(self, method: str, path: str, body: bytes) -> Reply:
        return await self._handle(current_scope(), method, path, body)

    def _handle_current_sync(self, method: str, path: str, body: bytes) -> Reply:
        scope = current_scope()
        return run_blocking(scope.loop, self._handle(scope, method, path, body), "srbench_client")

    async def _handle(self, scope: BodyScope, method: str, path: str, raw: bytes) -> Reply:
        """One HTTP request of an SDK, answered as the OpenAI API would."""
        if method == "GET" and path.endswith("/models"):
            models = [{"id": key, "object": "model", "created": 0, "owned_by": "srbench"}
                      for key in sorted(scope.cell.inventory)]  # fmt: skip
            return _json(200, {"object": "list", "data": models}, {})
        if method != "POST" or not path.endswith("/chat/completions"):
            message = f"srbench_client answers POST /chat/completions and GET /models, not {path}"
            return _json(404, error_body(message, "not_found_error"))
        try:
            request = self._request(scope, orjson.loads(raw))
        except orjson.JSONDecodeError:
            return _json(400, error_body("the request body is not JSON", "invalid_request_error"))
        except ClientRequestError as error:
            return _json(400, error_body(str(error), "invalid_request_error"))
        try:
            reply = await self._send(scope, request)
        except CellCancelled as cancelled:
            return _json(503, error_body(str(cancelled), "cancelled"))
        except CallFailure as failure:
            return _json(502, error_body(str(failure), "srbench_call_failed"))
        if request.stream:
            return 200, {"content-type": "text/event-stream"}, reply.evidence
        completion = completion_body(
            reply.call_id,
            int(time.time()),
            reply.model,
            reply.content,
            reply.tool_calls,
            reply.finish_reason,
            reply.usage,
        )
        return _json(200, completion, {})


def judge_body(cell: BodyCalls, body: Mapping[str, Any]) -> Mapping[str, Any]:
    """A judge request as the plan binds it: to the judge the shipped suite binds to the
    cell's benchmark (``model`` omitted, or naming that judge); a request naming another model
    is refused, never sent to the judge in its place. A benchmark that binds no judge (its
    protocol grades without one) takes the model the request names, which must be named."""
    benchmark = cell.case.benchmark
    model = body.get("model")
    bound = cell.bound_target("judge")
    if bound is None:
        if model is None:
            raise ClientRequestError(
                f"benchmark {benchmark!r} binds no judge (its own grading uses none): name the "
                "judge model with model=... (a chat target of this run's plan; your own "
                "target's code declares it with uses=[...])"
            )
        return body
    if model is not None and model not in (bound.id, bound.model):
        raise ClientRequestError(
            f"benchmark {benchmark!r} binds the judge {bound.id!r} (model {bound.model!r}) and "
            f"this judge call names {model!r}: a judge call goes to the bound judge, never to "
            f"another model — omit model= (or name {bound.id!r}), or call {model!r} through "
            "srbench_client itself"
        )
    return {**body, "model": bound.id}


def as_messages(messages: str | Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """OpenAI-style messages: a prompt string is one user message (the request copies them)."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return list(messages)


def _body(
    messages: str | Sequence[Mapping[str, Any]], model: str | None, body: dict[str, Any]
) -> dict[str, Any]:
    request: dict[str, Any] = {"messages": as_messages(messages), **body}
    if model is not None:
        request["model"] = model
    return request


async def on_loop(loop: asyncio.AbstractEventLoop | None, work: Coroutine[Any, Any, T]) -> T:
    """Await ``work`` on ``loop`` (the engine's, where a cell's calls run): directly when this is
    that loop, else from whichever loop a body runs on (its test framework's, where its async
    fixtures live), cancelled with the awaiting task."""
    if loop is None or asyncio.get_running_loop() is loop:
        return await work
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, loop))


def run_blocking(
    loop: asyncio.AbstractEventLoop | None, work: Coroutine[Any, Any, T], who: str
) -> T:
    """Run ``work`` on the engine's loop from a plain ``def`` body's worker thread and wait for
    it; from the loop itself (an ``async def`` body) that would never end, so it is refused."""
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if loop is None or running is loop:
        work.close()
        if loop is None:
            raise RuntimeError(f"{who} can be called only inside the test body")
        raise RuntimeError(
            f"{who}'s blocking calls are for plain def bodies: in an async def body, await "
            "the async ones"
        )
    return asyncio.run_coroutine_threadsafe(work, loop).result()


OPENAI_MISSING = "srbench_client needs the openai package: pip install openai"


def _openai_sdk() -> ModuleType:
    """The ``openai`` package; without it, one line saying what to install (the cell's
    reason)."""
    try:
        import openai
    except ModuleNotFoundError as missing:
        if missing.name != "openai":
            raise
        raise ModuleNotFoundError(OPENAI_MISSING, name="openai") from None
    return openai
