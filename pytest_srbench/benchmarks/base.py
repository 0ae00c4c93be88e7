"""The adapter contract every benchmark implements, and the context a cell runs in."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import Case, Role, Target
from pytest_srbench.core.plan.srbench import PROFILE_COUNTS


class SuiteRowError(InputError):
    """A suite row lacks what its adapter needs; the loader adds the file and line."""


@dataclass(frozen=True)
class ModelReply:
    """What one completed model call returned to the adapter."""

    call_id: str
    final_text: str
    content: str
    reasoning: str
    finish_reason: str | None
    output_complete: bool
    tool_calls: list[dict[str, Any]]
    model: str | None
    usage: dict[str, Any] | None = None  # the server's own usage object, as it sent it
    evidence: bytes = field(default=b"", repr=False)  # the raw response stream, as received


@dataclass(frozen=True)
class CodeRun:
    """The outcome of running code or a shell command in the sandbox."""

    status: str  # ok | failed | timeout | limit
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class Grade:
    """A terminal binary outcome of one cell."""

    correct: bool
    answer: Any = None
    details: dict[str, Any] = field(default_factory=dict)


class NotGraded(Exception):
    """A cell that reaches no grade: its benchmark cannot grade what it was given, or the test
    body that produced the answer raised (one line, kept as the cell's reason)."""


def one_list_profiles(count: int) -> dict[str, int]:
    """The profiles of a dataset that is one list of cases (RAG, agent, a benchmark defined in
    Python): smoke and quick take them all. It has no ``standard`` profile: standard holds
    cases held out from quick, and one list has none to hold out."""
    return {"smoke": count, "quick": count}


def text_answer(benchmark: str, answer: object) -> str:
    """The answer as text, or ``NotGraded`` naming what the body returned instead."""
    if isinstance(answer, str):
        return answer
    raise NotGraded(
        f"benchmark {benchmark!r} grades answer text; the test body returned "
        f"{type(answer).__name__}"
    )


class TaskContainer(Protocol):
    """A task's own container for one cell (see ``CellContext.container``)."""

    @property
    def name(self) -> str: ...

    async def run(self, command: str, *, timeout_s: float = 30.0) -> CodeRun:
        """Run ``sh -c command`` in the container's working directory."""
        ...

    async def put_files(self, files: Mapping[str, str], directory: str) -> None:
        """Copy text files into an absolute directory of the container."""
        ...

    async def read_text(self, path: str) -> str | None:
        """A file's text from the container (None when it does not exist)."""
        ...


class CellContext(Protocol):
    """What an adapter may use while it evaluates one cell."""

    @property
    def case(self) -> Case: ...

    @property
    def seed(self) -> int: ...

    @property
    def target(self) -> Target: ...

    async def call(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        role: Role = "subject",
        extra_body: Mapping[str, Any] | None = None,
        via: str | None = None,
    ) -> ModelReply:
        """Send one journaled model call (subject, or the bound judge / simulator); ``via``
        names another target of the plan to send it to (the user's code calling a model)."""
        ...

    async def retrieve(self, query: str) -> tuple[dict[str, Any], float]:
        """Send one journaled search to the cell's retrieval target; its answer and latency (s)."""
        ...

    def cancelled(self) -> bool:
        """True once the run stopped dispatching or the case deadline passed."""
        ...

    async def run_python(
        self,
        code: str,
        *,
        stdin: str = "",
        timeout_s: float = 6.0,
        files: Mapping[str, str] | None = None,
        read_only: Sequence[Path] = (),
    ) -> CodeRun:
        """Run python code in the sandbox (a fresh empty directory each time); ``read_only``
        directories (a suite's assets) stay readable at their paths."""
        ...

    async def run_shell(self, command: str, *, timeout_s: float = 30.0) -> CodeRun:
        """Run a shell command in this cell's own task directory (files persist within the cell)."""
        ...

    def seed_files(self, files: Mapping[str, str]) -> None:
        """Write files into this cell's task directory before the protocol starts."""
        ...

    def container(self, spec: Mapping[str, Any]) -> AbstractAsyncContextManager[TaskContainer]:
        """This cell's own container made from ``spec`` (a row's ``container`` object), with
        the same per-command limits as ``run_shell``; removed when the block ends however it
        ends. Raises ``NotGraded`` with ``BENCHMARK_CONTAINER_UNAVAILABLE`` and Docker's own
        words when the machine cannot run it: nothing else is substituted."""
        ...

    def asset(self, reference: Mapping[str, str]) -> bytes:
        """The bytes of a suite asset (``{path, sha256}``), verified against its hash."""
        ...

    def suite_asset(self, path: str) -> dict[str, str] | None:
        """The reference (``{path, sha256}``) of a file the case's suite lists in its
        ``suite.json`` ``assets`` (as frozen in the plan), or None when it lists none."""
        ...

    def asset_path(self, reference: Mapping[str, str]) -> Path:
        """The local path of a suite asset, verified against its hash (for large files a
        sandboxed program reads itself)."""
        ...


class Adapter(ABC):
    """One benchmark: its identity, weight, case rendering, protocol and grader."""

    benchmark: ClassVar[str]
    version: ClassVar[str] = "sr-bench-1.0"
    weight: ClassVar[float] = 1.0
    round_robin: ClassVar[bool] = False
    auxiliary_roles: ClassVar[tuple[str, ...]] = ()
    target_kinds: ClassVar[tuple[str, ...]] = ("single", "mom")
    """The kinds of target this benchmark runs against (a RAG benchmark: ``retrieval``)."""
    reference_metadata: ClassVar[frozenset[str]] = frozenset()
    """Metadata keys that are the reference (what the grader checks), to be kept from a test
    body's ``srbench_case.metadata``."""
    accepts_body_answer: ClassVar[bool] = False
    """Whether ``grade_answer`` grades what a test body returns (set for every adapter class
    that overrides it, unless the class says otherwise). A marked test of a benchmark that
    does not is refused at collection unless it runs the protocol (``srbench_protocol``)."""
    body_answer_hint: ClassVar[str] = ""
    """For a benchmark that grades no body's answer: what its protocol is (said when refused)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "accepts_body_answer" not in cls.__dict__:
            cls.accepts_body_answer = cls.grade_answer is not Adapter.grade_answer

    @classmethod
    def for_dataset(cls, benchmark: str) -> Adapter:
        """An instance bound to a dataset id (kind adapters such as RAG serve many datasets)."""
        bound = type(f"{cls.__name__}[{benchmark}]", (cls,), {"benchmark": benchmark})
        adapter: Adapter = bound()
        return adapter

    def profile_counts(self, suite_meta: Mapping[str, Any]) -> dict[str, int]:
        """Cases per profile: sr-bench's fixed counts, or the suite's own ``profiles`` table."""
        if self.benchmark in PROFILE_COUNTS:
            return dict(PROFILE_COUNTS[self.benchmark])
        declared = suite_meta.get("profiles")
        if isinstance(declared, dict):
            return {str(key): int(value) for key, value in declared.items()}
        count = int(suite_meta.get("count", 0))
        return {"smoke": count, "quick": count}

    def stratum(self, row: Mapping[str, Any]) -> str:
        """The stratum a row belongs to for balanced selection (default: one stratum)."""
        return ""

    @abstractmethod
    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        """Turn one suite row into a frozen case (raise ``SuiteRowError`` when it is unusable)."""

    @abstractmethod
    async def evaluate(self, ctx: CellContext) -> Grade:
        """Run the cell's protocol through ``ctx.call`` and grade the outcome."""

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        """Grade an answer that a test body produced (a benchmark written as a pytest test).

        ``answer`` is what the body returned (a reply's text when it returned a model reply);
        most benchmarks take text (``text_answer``), some a structure (a RAG benchmark takes
        the ranked results). It is the grading half of ``evaluate`` (whose other half is the
        protocol's model calls), so both grade alike. Benchmarks whose protocol is the
        product's own loop (tools, a simulated user) grade no answer: ``accepts_body_answer``
        is False and their marked tests are refused at collection.
        """
        raise NotGraded(
            f"benchmark {ctx.case.benchmark!r} cannot grade an answer returned by a test body"
        )

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        """What the built-in simulator needs to play this case (it may know the answer)."""
        return None

    def simulator_scripts(self, case: Case) -> list[tuple[Any, dict[str, Any]]]:
        """(first user message content, script) for every conversation the case opens; the
        simulator recognises a conversation by that first user message — or, when the first
        element is a list of the opening messages (system, user), by that opening."""
        script = self.simulator_script(case)
        first = next((m.content for m in case.messages if m.role == "user"), None)
        return [] if script is None or first is None else [(first, script)]


def require(row: Mapping[str, Any], key: str, kind: type | tuple[type, ...] = str) -> Any:
    """Fetch a required field of a suite row with a specific error when it is missing."""
    if key not in row or row[key] is None:
        raise SuiteRowError(f"missing field {key!r}")
    value = row[key]
    if not isinstance(value, kind):
        raise SuiteRowError(f"field {key!r} has the wrong type ({type(value).__name__})")
    return value
