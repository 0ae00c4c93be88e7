"""Benchmarks written as pytest tests.

A test function marked ``@pytest.mark.srbench("mmlu-pro")`` is parametrized by the frozen plan's
(case, target) cells of that benchmark; it receives the case (``srbench_case``) and the target
(``srbench_target``) as fixtures, and what it returns is the answer the benchmark's grader
grades. Its body runs as the cell: on the engine's loop (an ``async def`` test) or in a worker
thread (a plain ``def`` test), inside the cell's deadline and the run's budget, with every call
through ``srbench_target`` journaled like the engine's own. A wrong answer is recorded (``w``)
and does not fail the test; an exception in the body is a failed cell: its one-line reason in
the run's report, the exception itself with its traceback in its item's (``BodyTrace``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable, Collection, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import pytest

from pytest_srbench.benchmarks.base import Adapter, CellContext, Grade, ModelReply, NotGraded
from pytest_srbench.core.calls.failures import CallFailure, CellCancelled
from pytest_srbench.core.models import Case, Target
from pytest_srbench.engine.engine import BodyTrace
from pytest_srbench.plugin.client import (
    CURRENT,
    BodyCalls,
    BodyScope,
    SrbenchClient,
    as_messages,
    current_scope,
    on_loop,
    run_blocking,
)

MARKER = "srbench"
SUITES = "*"  # the built-in suites' test: the session's suite benchmarks (srbench_suites.py)
PYTEST_OUTCOMES = (pytest.skip.Exception, pytest.fail.Exception, pytest.xfail.Exception)
CELL_PARAM = "srbench_cell"
T = TypeVar("T")


def marked_benchmark(definition: pytest.Function | Any) -> str | None:
    """The benchmark a test function is marked with, or None when it is not marked."""
    marker = definition.get_closest_marker(MARKER)
    if marker is None:
        return None
    if len(marker.args) != 1 or not isinstance(marker.args[0], str) or not marker.args[0]:
        raise pytest.UsageError(
            f'pytest-srbench: {definition.nodeid}: use @pytest.mark.srbench("<benchmark>"), '
            f'e.g. @pytest.mark.srbench("mmlu-pro")'
        )
    return str(marker.args[0])


def check_body_answer(
    definition: pytest.Function | Any, adapter: Adapter, fixturenames: Collection[str]
) -> None:
    """Refuse (at collection, before any call) a marked test whose benchmark grades no answer
    a body returns, unless the body runs the benchmark's own protocol (``srbench_protocol``)."""
    if adapter.accepts_body_answer or "srbench_protocol" in fixturenames:
        return
    benchmark = adapter.benchmark
    what = f" ({adapter.body_answer_hint})" if adapter.body_answer_hint else ""
    raise pytest.Collector.CollectError(  # (the module's collection error: this one line)
        f"pytest-srbench: {definition.nodeid}: benchmark {benchmark!r} cannot grade an answer "
        f"returned by a test body{what}. Let the body run the benchmark's own protocol: take "
        "the srbench_protocol fixture in an async def test and `return await "
        "srbench_protocol()`; or mark the test with a benchmark that grades an answer"
    )


def item_benchmark(item: pytest.Item) -> str | None:
    """The benchmark a collected item answers (None: an ordinary test, or the built-in
    suites' test, which answers whichever the session does not)."""
    marker = item.get_closest_marker(MARKER)
    if marker is None or len(marker.args) != 1 or marker.args[0] == SUITES:
        return None
    return str(marker.args[0])


def cell_of(item: pytest.Item) -> tuple[str, str] | None:
    """The (case, target) cell an item runs, from its parametrization (None: no cell)."""
    callspec = getattr(item, "callspec", None)
    if callspec is not None and CELL_PARAM in callspec.params:
        cell = callspec.params[CELL_PARAM]
        if isinstance(cell, tuple):  # (not pytest's NOTSET of an empty parametrization)
            if type(cell[0]) is str and type(cell[1]) is str:
                return cell  # the plan's own pair (held once, not once per caller)
            return (str(cell[0]), str(cell[1]))
    return None


def cell_id(case_id: str, target_id: str) -> str:
    """The readable id of a parametrized cell: ``mmlu-pro/q12-sim-large``."""
    return f"{case_id}-{target_id}"


@dataclass(frozen=True)
class CaseView:
    """What a test body may read of its case: the rendered messages and the metadata (the
    reference answer stays with the grader)."""

    id: str
    benchmark: str
    messages: list[dict[str, Any]]
    metadata: dict[str, Any]

    @property
    def prompt(self) -> str:
        """The last user message's text (the question, for a single-turn benchmark)."""
        for message in reversed(self.messages):
            if message.get("role") == "user" and isinstance(message.get("content"), str):
                return str(message["content"])
        return ""

    @classmethod
    def of(cls, case: Case, hidden: Collection[str] = ()) -> CaseView:
        """The body's view of ``case``; ``hidden``: the benchmark's reference metadata keys
        (``Adapter.reference_metadata``), left out with the code benchmarks' solutions."""
        left_out = {"reference_solution", "wrong_solution", *hidden}
        return cls(
            id=case.id,
            benchmark=case.benchmark,
            messages=[message.model_dump(exclude_none=True) for message in case.messages],
            metadata={k: v for k, v in case.metadata.items() if k not in left_out},
        )


@dataclass
class TargetHandle:
    """A configured target as a test body sees it: ``await ask(...)`` (or ``ask_sync`` from a
    plain ``def`` test) sends one journaled call and returns the model's reply."""

    id: str
    model: str
    kind: str
    _ctx: CellContext | None = field(default=None, repr=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, repr=False)

    def _bind(self, ctx: CellContext, loop: asyncio.AbstractEventLoop) -> None:
        self._ctx, self._loop = ctx, loop

    def _context(self) -> CellContext:
        if self._ctx is None:
            raise RuntimeError("srbench_target can be called only inside the test body")
        return self._ctx

    async def ask(
        self, messages: str | Sequence[Mapping[str, Any]], **extra_body: Any
    ) -> ModelReply:
        """One journaled chat call: a prompt string or OpenAI-style messages."""
        call = self._context().call(as_messages(messages), extra_body=extra_body or None)
        return await on_loop(self._loop, call)

    def ask_sync(
        self, messages: str | Sequence[Mapping[str, Any]], **extra_body: Any
    ) -> ModelReply:
        """``ask`` for a plain ``def`` test body (it runs in a worker thread)."""
        return self._blocking(self.ask(messages, **extra_body))

    async def search(self, query: str) -> dict[str, Any]:
        """One journaled search of a ``retrieval`` target: its answer (``results``, best
        first) with the search's ``latency_ms`` — what a RAG benchmark's body returns."""
        if self.kind != "retrieval":
            raise NotGraded(f"target {self.id!r} is not a retrieval service: it cannot search")
        answer, latency_s = await on_loop(self._loop, self._context().retrieve(query))
        return {**answer, "latency_ms": latency_s * 1000}

    def search_sync(self, query: str) -> dict[str, Any]:
        """``search`` for a plain ``def`` test body (it runs in a worker thread)."""
        return self._blocking(self.search(query))

    def _blocking(self, work: Coroutine[Any, Any, T]) -> T:
        return run_blocking(self._loop, work, "srbench_target")

    @classmethod
    def of(cls, target: Target) -> TargetHandle:
        return cls(id=target.id, model=target.model, kind=target.kind)


@dataclass
class AppHandle(TargetHandle):
    """A ``python`` target (the user's own code, a fixture's value) as a test body sees it:
    ``app`` is the value; ``ask`` calls it with the messages when it is callable (an ``async``
    callable on the engine's loop, a plain one in a worker thread so that it blocks nothing)."""

    app: Any = None

    async def ask(
        self, messages: str | Sequence[Mapping[str, Any]], **extra_body: Any
    ) -> ModelReply:
        messages = as_messages(messages)
        app = self.app
        if not callable(app):
            raise NotGraded(
                f"target {self.id!r}: its fixture's value is not callable; use srbench_target.app"
            )
        call = getattr(app, "__call__", app)  # noqa: B004 - the bound method tells async apart
        if inspect.iscoroutinefunction(app) or inspect.iscoroutinefunction(call):
            answer = await app(messages, **extra_body)
        else:
            answer = await asyncio.to_thread(app, messages, **extra_body)
        if isinstance(answer, ModelReply):
            return answer
        text = answer_text(answer)
        return ModelReply(call_id="", final_text=text, content=text, reasoning="",
                          finish_reason=None, output_complete=True, tool_calls=[],
                          model=self.model)  # fmt: skip

    async def search(self, query: str) -> Any:
        """The app's own ``search(query)`` (an ``async`` one on the engine's loop, a plain one
        in a worker thread): its ranked results, for a RAG benchmark's body to return."""
        search = getattr(self.app, "search", None)
        if not callable(search):
            raise NotGraded(f"target {self.id!r}: its fixture's value has no search(query)")
        if inspect.iscoroutinefunction(search):
            return await search(query)
        return await asyncio.to_thread(search, query)


def answer_text(returned: object) -> str:
    """The text of what a python target's callable returned: text, or a model call's reply."""
    answer = body_answer(returned)
    if isinstance(answer, str):
        return answer
    raise NotGraded(f"the target returned {type(returned).__name__}, not the answer text")


def body_answer(returned: object) -> object:
    """The answer a test body returned, for its benchmark's grader: a model call's reply is
    its text; anything else goes as it is (text, or a structure such as ranked results)."""
    if isinstance(returned, ModelReply):
        return returned.final_text
    if returned is None:
        raise NotGraded("the test body returned no answer (return the answer text)")
    return returned


def session_value(definitions: Sequence[Any] | None) -> tuple[bool, Any]:
    """(True, value) when the fixture these definitions resolve to is session-scoped,
    unparametrized and already set up without error; (False, None) otherwise."""
    if not definitions:
        return False, None
    definition = definitions[-1]
    cached = definition.cached_result
    if definition.scope != "session" or definition.params is not None:
        return False, None
    if cached is None or cached[2] is not None:
        return False, None
    return True, cached[0]


class ProtocolGrade:
    """What ``srbench_protocol()`` returns: the grade the benchmark's own protocol gave the cell
    the body runs, which the body returns as its answer (it is the cell's grade as it is)."""

    __slots__ = ("grade", "scope")

    def __init__(self, grade: Grade, scope: BodyScope) -> None:
        self.grade = grade
        self.scope = scope


class ProtocolError(Exception):
    """An unexpected error inside a benchmark's own protocol, carried through the body so that
    the cell records it as the protocol's error (not as the body's)."""

    def __init__(self, original: Exception) -> None:
        super().__init__(str(original))
        self.original = original


class SuiteProtocol:
    """``srbench_protocol``: ``await srbench_protocol()`` runs the cell's benchmark's own
    protocol — its prompt, its model calls (and tools, sandbox or judge), its grading — and
    returns the grade for the body to return. The built-in suites' test is this one call."""

    async def __call__(self) -> ProtocolGrade:
        scope = current_scope()
        adapter, scope.protocol = scope.protocol, None
        if adapter is None:
            raise NotGraded("srbench_protocol() runs the benchmark's protocol once per cell")
        try:
            grade = await on_loop(scope.loop, adapter.evaluate(scope.cell))
        except (CallFailure, CellCancelled, NotGraded, asyncio.CancelledError):
            raise
        except Exception as error:
            raise ProtocolError(error) from error
        return ProtocolGrade(grade, scope)


SUITE_PROTOCOL = SuiteProtocol()  # stateless: the running body's cell says whose protocol
OWN_FIXTURES = frozenset(
    {CELL_PARAM, "srbench_case", "srbench_target", "srbench_client", "srbench_protocol"}
)


def body_function(item: pytest.Function) -> Callable[..., Any]:
    """The test function a marked item's body is. pytest-asyncio's ``runtest`` swaps an async
    item's function for a synchronous wrapper (``functools.wraps`` of it) that would run the
    body on pytest-asyncio's loop and drop its answer; the body is the function it wraps."""
    function = item.obj
    wrapped = getattr(function, "__wrapped__", None)
    if (
        run_by_pytest_asyncio(item)
        and not inspect.iscoroutinefunction(function)
        and inspect.iscoroutinefunction(wrapped)
    ):
        return cast(Callable[..., Any], wrapped)
    return cast(Callable[..., Any], function)


def run_by_pytest_asyncio(item: pytest.Item) -> bool:
    """pytest-asyncio runs this item (its own item class, in strict or auto mode)."""
    return type(item).__module__.split(".")[0] == "pytest_asyncio"


def loop_runner(item: pytest.Item, name: str) -> bool:
    """``name`` is pytest-asyncio's own event-loop runner (``_function_scoped_runner``, one per
    loop scope), which pytest-asyncio adds to its item's fixture names at the item's set-up —
    to the list all the test's parametrized items share, so after the first item's set-up
    every cell of the test names it — and uses only to run the test function on its loop. A
    body that runs on the engine's loop does not use it."""
    return (
        name.startswith("_")
        and name.endswith("_scoped_runner")
        and run_by_pytest_asyncio(item)
        and name not in item._fixtureinfo.name2fixturedefs  # type: ignore[attr-defined]
    )


def run_by_anyio(item: pytest.Item) -> bool:
    """anyio's pytest plugin runs this item (marked ``anyio``, with its backend fixture)."""
    return item.get_closest_marker("anyio") is not None and "anyio_backend" in getattr(
        item, "fixturenames", ()
    )


# on a test's parent node: its functions' fixture infos (each shared by all the function's
# parametrized items, fixed once collected) -> their async fixtures, worked out once per test
# function instead of once per cell; the infos are kept, so that an id is never reused
_ASYNC_FIXTURES = pytest.StashKey[dict[int, tuple[object, tuple[str, ...]]]]()


def async_fixtures(item: pytest.Function) -> tuple[str, ...]:
    """The fixtures an item depends on whose functions are ``async`` (their values live on
    the loop pytest-asyncio or anyio made them on)."""
    info = item._fixtureinfo
    parent = item.parent
    cache = parent.stash.setdefault(_ASYNC_FIXTURES, {}) if parent is not None else {}
    known = cache.get(id(info))
    if known is not None and known[0] is info:
        return known[1]
    found = []
    for name in info.names_closure:
        definitions = info.name2fixturedefs.get(name)
        func = definitions[-1].func if definitions else None
        if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
            found.append(name)
    cache[id(info)] = (info, tuple(found))
    return tuple(found)


def _requested(info: Any, roots: Iterable[str]) -> set[str]:
    """``roots`` and every fixture they ask for, through the fixtures' own arguments."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        definitions = info.name2fixturedefs.get(name)
        if definitions:
            stack.extend(definitions[-1].argnames)
    return seen


@dataclass(frozen=True)
class TurnReason:
    """Why a fixture makes a body wait for its item's turn: its ``scope`` in words (``async``
    for an async one), and whether the test does not ask for it (``autouse``: an autouse or
    ``usefixtures`` fixture, or one such a fixture asks for)."""

    scope: str
    autouse: bool = False


def turn_reasons(item: pytest.Function) -> dict[str, TurnReason]:
    """Why a body waits for its item's turn instead of starting ahead: each fixture it depends
    on that only the item's own set-up gives."""
    info = item._fixtureinfo
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    asked = _requested(info, info.argnames)
    reasons: dict[str, TurnReason] = {}
    for name in info.names_closure:
        if name in OWN_FIXTURES or name in params or name == "request" or loop_runner(item, name):
            continue
        definitions = info.name2fixturedefs.get(name)
        if not definitions:  # a name a plugin added to the item's fixtures at its set-up
            reasons[name] = TurnReason("added at the item's set-up")
            continue
        definition = definitions[-1]
        autouse = name not in asked
        if inspect.iscoroutinefunction(definition.func) or inspect.isasyncgenfunction(
            definition.func
        ):
            reasons[name] = TurnReason(f"async, {definition.scope} scope", autouse)
        elif not session_value(definitions)[0]:
            reasons[name] = TurnReason(f"{definition.scope} scope", autouse)
    return reasons


def early_arguments(
    item: pytest.Function,
    cell: tuple[str, str],
    case: Callable[[], CaseView],
    target: Callable[[], TargetHandle | None],
    client: SrbenchClient,
) -> dict[str, Any] | None:
    """The body's arguments without pytest's set-up of the item, or None when the body needs
    something only that set-up gives.

    A body may start before pytest reaches its item (so that many run at once) only when every
    fixture it depends on, autouse ones included, is srbench's own, a value of its
    parametrization, or a session-scoped, unparametrized fixture already set up (its cached
    value is the one pytest will hand the item). A function-, class- or module-scoped fixture
    wraps its own item, so such a body waits for its turn.
    """
    info = item._fixtureinfo
    if async_fixtures(item):
        return None  # its values live on its test framework's loop: the body runs there
    own_values = {"srbench_client": client, "srbench_protocol": SUITE_PROTOCOL}
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    shared: dict[str, Any] = {}
    for name in info.names_closure:
        if name in OWN_FIXTURES or name in params or loop_runner(item, name):
            continue
        if name == "request" and name not in info.argnames:
            continue  # asked for by a fixture (srbench's own, or one judged on its own here)
        ready, value = session_value(info.name2fixturedefs.get(name))
        if not ready:  # (``request`` in the body's own arguments has no definition: per item)
            return None
        shared[name] = value
    arguments: dict[str, Any] = {}
    for name in info.argnames:
        if name == "srbench_target":  # (made only for a body that takes it)
            handle = target()
            if handle is None:  # its app's fixture is not a session-wide value set up yet
                return None
            arguments[name] = handle
        elif name == "srbench_case":
            arguments[name] = case()
        elif name in own_values:
            arguments[name] = own_values[name]
        elif name == CELL_PARAM:
            arguments[name] = cell
        elif name in params:
            arguments[name] = params[name]
        else:
            arguments[name] = shared[name]
    return arguments


def body_failure(error: BaseException, scope: BodyScope) -> BaseException:
    """What a body's exception makes of its cell: a journaled call's failure (whatever the body
    did about it), the deadline or the run's stop as they are, the protocol's own error, and
    for anything else one line naming the exception (the cell fails, counted incorrect)."""
    if isinstance(error, CallFailure | CellCancelled | NotGraded | asyncio.CancelledError):
        return error
    if isinstance(error, ProtocolError):
        return error.original
    if isinstance(error, PYTEST_OUTCOMES):  # pytest.skip / fail / xfail inside a body
        return scope.failure or NotGraded(
            f"the test body raised pytest's {type(error).__name__}: a cell needs an answer"
        )
    if isinstance(error, Exception):
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return scope.failure or NotGraded(
            f"the test body raised {type(error).__name__}" + (f": {first}" if first else "")
        )
    return error  # KeyboardInterrupt, SystemExit: not the cell's to judge


def own_exception(error: BaseException, scope: BodyScope) -> bool:
    """The body's own exception is what its cell fails on (shown to the user as pytest shows a
    test's): not a journaled call's failure, the deadline, the run's stop, a refusal or
    pytest's skip / xfail (those keep their one-line reason)."""
    if scope.failure is not None:
        return False
    if isinstance(error, CallFailure | CellCancelled | NotGraded | ProtocolError):
        return False
    return isinstance(error, Exception | pytest.fail.Exception)


def left_by(scope: BodyScope, error: BaseException | None) -> BodyTrace | None:
    """What a body left for its item's report: its own exception and what it wrote (None when
    neither: nothing is made for a body that printed nothing and returned)."""
    own = error if error is not None and own_exception(error, scope) else None
    output = scope.output
    if own is None and output is None:
        return None
    return BodyTrace(own, output.sections() if output is not None else ())


async def graded(returned: object, scope: BodyScope, grader: Adapter, ctx: CellContext) -> Grade:
    """The cell's grade for what a body returned: its benchmark's protocol's own grade
    (``srbench_protocol``), else the benchmark's grading of the answer."""
    if scope.failure is not None:  # a journaled call failed, whatever the body did about it
        raise scope.failure
    if isinstance(returned, ProtocolGrade):
        if returned.scope is not scope:
            raise NotGraded("the test body returned another cell's srbench_protocol() grade")
        return returned.grade
    return await grader.grade_answer(ctx, body_answer(returned))


def bind_handles(
    arguments: Mapping[str, Any], ctx: CellContext, loop: asyncio.AbstractEventLoop
) -> None:
    """The cell's target handles among a body's arguments, bound to its context."""
    for value in arguments.values():
        if isinstance(value, TargetHandle):
            value._bind(ctx, loop)


class TestBodyAdapter(Adapter):
    """Runs a test function's body as a cell's protocol on the engine's loop (a plain ``def``
    body in a daemon thread), then the benchmark's grader."""

    __test__ = False  # not a test class, whatever pytest's name patterns say
    trace: BodyTrace | None = None  # what the body left for its item (the engine's outcome)

    def __init__(
        self, function: Callable[..., Any], arguments: dict[str, Any], grader: Adapter
    ) -> None:
        self.function = function
        self.arguments = arguments
        self.grader = grader

    def render(self, row: Mapping[str, Any], seed: int) -> Case:  # pragma: no cover
        return self.grader.render(row, seed)

    async def evaluate(self, ctx: CellContext) -> Grade:
        loop = asyncio.get_running_loop()
        arguments = self.arguments
        bind_handles(arguments, ctx, loop)
        function = self.function
        # srbench_client's calls are this cell's; srbench_protocol runs its benchmark's protocol
        scope = BodyScope(cast(BodyCalls, ctx), loop, protocol=self.grader)
        token = CURRENT.set(scope)
        try:
            if inspect.iscoroutinefunction(function):
                returned = await function(**arguments)
            else:
                returned = await asyncio.to_thread(function, **arguments)
        except BaseException as error:
            self.trace = left_by(scope, error)
            failure = body_failure(error, scope)
            if failure is error:
                raise
            raise failure from error
        finally:
            CURRENT.reset(token)
        if scope.output is not None:
            self.trace = left_by(scope, None)
        return await graded(returned, scope, self.grader, ctx)


@dataclass
class BodyEnd:
    """How a body that ran on its own loop ended: what it returned, or what it raised."""

    scope: BodyScope
    returned: object = None
    error: BaseException | None = None


class BridgedBody(Adapter):
    """A test body that runs on its test framework's loop (pytest-asyncio's or anyio's, where
    its async fixtures live), at its item's turn; the engine runs its cell meanwhile.

    ``evaluate`` (on the engine's loop) hands the body side the cell's context (``started``),
    waits for how the body ended (``ended``) and grades it; at the cell's deadline or the run's
    stop it cancels the body's task on the body's loop (``abandoned``)."""

    __test__ = False
    trace: BodyTrace | None = None  # what the body left for its item (the engine's outcome)

    def __init__(self, grader: Adapter) -> None:
        self.grader = grader
        self.started: concurrent.futures.Future[tuple[CellContext, asyncio.AbstractEventLoop]]
        self.started = concurrent.futures.Future()
        self.ended: concurrent.futures.Future[BodyEnd] = concurrent.futures.Future()
        self.cancel_body: Callable[[], None] | None = None
        self.abandoned = False

    def render(self, row: Mapping[str, Any], seed: int) -> Case:  # pragma: no cover
        return self.grader.render(row, seed)

    async def evaluate(self, ctx: CellContext) -> Grade:
        self.started.set_result((ctx, asyncio.get_running_loop()))
        try:
            end = await asyncio.wrap_future(self.ended)
        except asyncio.CancelledError:
            self.abandoned = True
            if self.cancel_body is not None:
                self.cancel_body()
            raise
        self.trace = left_by(end.scope, end.error)
        if end.error is not None:
            failure = body_failure(end.error, end.scope)
            raise failure from (None if failure is end.error else end.error)
        return await graded(end.returned, end.scope, self.grader, ctx)
