"""Pydantic records of the protocol: targets, prices, limits, cases, the frozen manifest and
runs (call receipts and cell results, written on the hot path, are typed dicts in
``core/records.py``).

Why one long module: these are the frozen records a plan hash covers; keeping them together
makes a change to the hashed shape visible in one diff."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from pytest_srbench.core.plan.choices import DEFAULT_SEED
from pytest_srbench.core.plan.planned import planned_keys, runs_on

CostPolicy = Literal["require_priced", "capability_only"]
RunStatus = Literal["queued", "running", "completed", "failed", "cancelled", "interrupted"]
TERMINAL_RUN_STATUSES: frozenset[str] = frozenset(get_args(RunStatus)) - {"queued", "running"}
CellStatus = Literal["running", "completed", "failed", "cancelled", "sent_unknown"]
# a cell's row is final once it leaves "running"; every final status but "completed" failed
TERMINAL_CELL_STATUSES: frozenset[str] = frozenset(get_args(CellStatus)) - {"running"}
FAILED_CELL_STATUSES: frozenset[str] = TERMINAL_CELL_STATUSES - {"completed"}
CallStatus = Literal["sent", "completed", "failed", "cancelled", "sent_unknown", "replayed"]
Role = Literal["subject", "judge", "simulator"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
# A variant of a target (a benchmark written as a test with parametrize, or several test
# functions answering one benchmark) is a target of its own: ``<target>~<variant>``.
VARIANT_SEP = "~"
_VARIANT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}(~[A-Za-z0-9][A-Za-z0-9._:-]{0,63})?$")


def variant_of(target_id: str) -> tuple[str, str | None]:
    """(the target a variant target varies, its variant), or (the id, None)."""
    base, sep, variant = target_id.partition(VARIANT_SEP)
    return (base, variant) if sep else (target_id, None)


_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")


# One set object per distinct set of explicitly given field names, shared by every frozen
# record that has it. pydantic gives each instance a set of its own (a Case's five names hold
# 728 bytes, a Message's two 216: about half of a plan's memory per case at 100,000 cases).
# Only a frozen record may share it: pydantic adds to the set only on assignment (refused for
# frozen records) and ``model_copy`` copies it before adding ``update``'s names.
_FIELDS_SETS: dict[frozenset[str], set[str]] = {}


def _share_fields_set(record: BaseModel) -> None:
    given = record.__pydantic_fields_set__
    key = frozenset(given)
    shared = _FIELDS_SETS.get(key)
    if shared is None:
        shared = _FIELDS_SETS[key] = given
    object.__setattr__(record, "__pydantic_fields_set__", shared)


class Frozen(BaseModel):
    """Base for frozen protocol records: unknown keys are rejected, instances are immutable
    (and share the set of names they were given: ``_share_fields_set``)."""

    model_config = ConfigDict(defer_build=True, extra="forbid", frozen=True)

    def model_post_init(self, context: Any, /) -> None:
        _share_fields_set(self)


def _finite_non_negative(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number")
    if value < 0:
        raise ValueError(f"{name} must be >= 0")
    return float(value)


class Prices(Frozen):
    """Prices of one model in USD per million tokens, one per exclusive token bucket."""

    input: float
    cached_input: float
    cache_write: float
    output: float

    @field_validator("input", "cached_input", "cache_write", "output", mode="before")
    @classmethod
    def _check(cls, value: object, info: Any) -> float:
        return _finite_non_negative(value, info.field_name)


def _shown_url(url: str) -> str:
    """The URL for an error message, or nothing when it may hold a secret (``user:pw@``, a
    query): a message must never print a credential."""
    if any(mark in url for mark in ("@", "?", "#")) or len(url) > 200:
        return ""
    return f" (got {url!r})"


def check_base_url(url: str, field: str = "base_url") -> str:
    """An http(s) URL with a host and no credentials, query or fragment. The messages never
    repeat a URL that may carry a secret."""
    if "@" in url.split("?", 1)[0].split("#", 1)[0]:
        raise ValueError(
            f"{field} must not contain credentials (user:password@host): keys come only from "
            "the environment variable named by api_key_env"
        )
    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise ValueError(
            f"{field} is not a valid URL{_shown_url(url)}; expected e.g. http://127.0.0.1:8000/v1"
        ) from None
    if parts.scheme not in ("http", "https") or not host:
        raise ValueError(
            f"{field} must be an http(s) URL with a host{_shown_url(url)}; expected e.g. "
            "http://127.0.0.1:8000/v1"
        )
    if parts.query or parts.fragment:
        raise ValueError(
            f"{field} must not contain a query or a fragment: keys come only from the "
            "environment variable named by api_key_env"
        )
    return url.rstrip("/")


RETRIEVAL_MODES = ("fts", "vector", "hybrid")
RETRIEVAL_RERANKERS = ("none", "minilm-maxsim")  # the notes engine's (notes/rerank.py)
RETRIEVAL_PARAMS = frozenset(
    {"mode", "top_k", "rrf_k", "reranker", "embedding_model", "embedding_dimensions"}
)
RUN_RETRIEVAL_SETTINGS = ("mode", "top_k", "rrf_k", "reranker")  # a run may override these


def _whole(value: object, low: int, high: int | None = None) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and value >= low
        and (high is None or value <= high)
    )


def _digits(text: str) -> bool:
    return text.isascii() and text.isdecimal()


def retrieval_problem(key: str, value: object) -> str | None:
    """What is wrong with one retrieval parameter's value, or None."""
    if key == "mode" and value not in RETRIEVAL_MODES:
        return f"retrieval.mode must be one of {list(RETRIEVAL_MODES)}"
    if key == "top_k" and not _whole(value, 1, 50):
        return "retrieval.top_k must be in 1..50"
    if key == "rrf_k" and not _whole(value, 0, 1000):
        return "retrieval.rrf_k must be an integer in 0..1000"
    if key == "reranker" and value is not None and value not in RETRIEVAL_RERANKERS:
        return f"retrieval.reranker must be null or one of {list(RETRIEVAL_RERANKERS)}"
    if key == "embedding_dimensions" and value is not None and not _whole(value, 1):
        return "embedding_dimensions must be a positive integer"
    return None


def check_retrieval_params(params: dict[str, Any], target_id: str) -> None:
    """A retrieval target's frozen parameters: a mode, and optional top_k (1..50), rrf_k
    (0..1000), reranker (null, "none", "minilm-maxsim") and the embedding model / dimensions
    its engine is expected to use."""
    unknown = sorted(set(params) - RETRIEVAL_PARAMS)
    if unknown:
        raise ValueError(
            f"retrieval target {target_id!r}: unknown retrieval parameter(s) {unknown}"
        )
    for key in ("mode", "top_k", "rrf_k", "reranker", "embedding_dimensions"):
        if key == "mode" or key in params:
            problem = retrieval_problem(key, params.get(key))
            if problem:
                raise ValueError(f"retrieval target {target_id!r}: {problem}")


def check_run_retrieval(settings: dict[str, Any]) -> dict[str, Any]:
    """A run's retrieval settings (``mode``, ``top_k``, ``rrf_k``, ``reranker``), which
    override those of every retrieval target of its plan: a null value overrides nothing
    and is dropped; ``top_k`` / ``rrf_k`` may be given as digit strings (a command line's).
    ValueError naming an unknown key or the first bad value."""
    unknown = sorted(set(settings) - set(RUN_RETRIEVAL_SETTINGS))
    if unknown:
        named = ", ".join(repr(key[:40]) for key in unknown[:3]) + (", …" if unknown[3:] else "")
        raise ValueError(
            f"unknown retrieval setting(s) {named}; a run may set "
            f"{', '.join(RUN_RETRIEVAL_SETTINGS)}"
        )
    checked: dict[str, Any] = {}
    for key in RUN_RETRIEVAL_SETTINGS:
        value = settings.get(key)
        if value is None:
            continue
        if key in ("top_k", "rrf_k") and isinstance(value, str) and _digits(value.strip()):
            value = int(value)
        problem = retrieval_problem(key, value)
        if problem:
            raise ValueError(problem)
        checked[key] = value
    return checked


ALLOWED_REQUEST_PARAMS = frozenset(
    {
        "n", "temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty",
        "repetition_penalty", "length_penalty", "stop", "seed", "max_tokens", "min_tokens",
        "reasoning_effort", "chat_template_kwargs", "ignore_eos", "skip_special_tokens",
        "spaces_between_special_tokens",
    }
)  # fmt: skip
REASONING_EFFORTS = frozenset({"none", "minimal", "low", "medium", "high", "xhigh", "max"})


def check_request_params(params: dict[str, Any], where: str) -> dict[str, Any]:
    """Validate generation parameters against the sr-bench whitelist and ranges."""
    unknown = sorted(set(params) - ALLOWED_REQUEST_PARAMS)
    if unknown:
        raise ValueError(
            f"{where}: unsupported generation parameter(s) {', '.join(unknown)}; accepted: "
            + ", ".join(sorted(ALLOWED_REQUEST_PARAMS))
        )

    def number(key: str, lo: float, hi: float) -> None:
        value = params.get(key)
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
            raise ValueError(f"{where}: {key} must be a number in [{lo}, {hi}]")

    for key in ("max_tokens", "min_tokens", "top_k", "seed", "n"):
        value = params.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ValueError(f"{where}: {key} must be an integer")
    if params.get("n", 1) != 1:
        raise ValueError(f"{where}: n must be exactly 1")
    if "max_tokens" in params and params["max_tokens"] < 1:
        raise ValueError(f"{where}: max_tokens must be >= 1")
    if "top_k" in params and params["top_k"] != -1 and params["top_k"] < 1:
        raise ValueError(f"{where}: top_k must be -1 or >= 1")
    number("temperature", 0, 2)
    number("top_p", 0, 1)
    number("min_p", 0, 1)
    number("presence_penalty", -2, 2)
    number("frequency_penalty", -2, 2)
    effort = params.get("reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        raise ValueError(f"{where}: reasoning_effort must be one of {sorted(REASONING_EFFORTS)}")
    return params


class Target(Frozen):
    """One system under test (a ``single`` model, a ``mom`` router, a ``retrieval`` service, or
    ``python``: the user's own code, a pytest fixture), or an auxiliary model."""

    # a validation error never repeats the input: a URL may carry a password
    model_config = ConfigDict(
        defer_build=True, extra="forbid", frozen=True, hide_input_in_errors=True
    )

    id: str
    kind: Literal["single", "mom", "retrieval", "python"] = "single"
    base_url: str | None = None
    model: str
    api_key_env: str | None = None
    prices: dict[str, Prices] = Field(default_factory=dict)
    session_mode: Literal["stateless", "session_aware"] = "stateless"
    request_params: dict[str, Any] = Field(default_factory=dict)
    simulated: bool = False
    managed: Literal["llama-server"] | None = None
    config_hash: str | None = None
    max_inference_calls: int | None = None
    expected_response_model: str | None = None
    preview_url: str | None = None
    preview_api_key_env: str | None = None
    capture_recipe: bool = False
    config_url: str | None = None
    retrieval: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _forbid_secrets(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key in ("api_key", "authorization", "headers"):
                if key in data:
                    raise ValueError(
                        f"target field {key!r} is not allowed: credentials come only from the "
                        "environment variable named by api_key_env"
                    )
        return data

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _VARIANT_ID.match(value):
            raise ValueError(f"target id {value!r} must match {_ID.pattern}")
        return value

    @field_validator("api_key_env", "preview_api_key_env")
    @classmethod
    def _env(cls, value: str | None) -> str | None:
        if value is not None and not _ENV.match(value):
            raise ValueError(f"{value!r} is not a valid environment variable name")
        return value

    @field_validator("base_url", "preview_url", "config_url")
    @classmethod
    def _url(cls, value: str | None, info: ValidationInfo) -> str | None:
        return None if value is None else check_base_url(value, info.field_name or "base_url")

    @field_validator("request_params")
    @classmethod
    def _params(cls, value: dict[str, Any]) -> dict[str, Any]:
        return check_request_params(value, "request_params")

    @model_validator(mode="after")
    def _reachable(self) -> Target:
        if self.kind == "python":
            if self.base_url is not None or self.managed is not None or self.simulated:
                raise ValueError(f"target {self.id!r}: a python target is a fixture, not a server")
        elif self.base_url is None and not self.simulated and self.managed is None:
            raise ValueError(
                f"target {self.id!r} needs a base_url (or simulated = true, or managed = 'llama-server')"
            )
        if self.max_inference_calls is not None and not 1 <= self.max_inference_calls <= 256:
            raise ValueError("max_inference_calls must be in 1..256")
        if self.kind == "retrieval":
            check_retrieval_params(self.retrieval, self.id)
        elif self.retrieval:
            raise ValueError("retrieval parameters are only for retrieval targets")
        if self.kind != "mom":
            for field in ("preview_url", "config_url", "preview_api_key_env"):
                if getattr(self, field) is not None:
                    raise ValueError(f"{field} is only for mom (router) targets")
            if self.capture_recipe:
                raise ValueError("capture_recipe is only for mom (router) targets")
        return self


class Limits(Frozen):
    """Frozen safety limits of a run (sr-bench 1.0 names and defaults, minus concurrency)."""

    total_timeout_s: float = 180.0
    idle_timeout_s: float = 30.0
    max_output_tokens: int = 4096
    max_output_chars: int = 131072
    repetition_window: int = 128
    repetition_limit: int = 5
    max_cost_usd: float = 5.0
    max_run_seconds: float = 1800.0
    max_calls_per_case: int = 32
    case_timeout_s: float = 600.0
    max_call_attempts: int = 1
    retry_backoff_s: float = 1.0

    @model_validator(mode="before")
    @classmethod
    def _positive(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for key, value in data.items():
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ValueError(f"limit {key} must be a number")
                if not math.isfinite(value) or value <= 0:
                    raise ValueError(f"limit {key} must be finite and > 0")
        return data

    @model_validator(mode="after")
    def _hierarchy(self) -> Limits:
        if self.total_timeout_s > self.max_run_seconds:
            raise ValueError("total_timeout_s must be <= max_run_seconds")
        if self.idle_timeout_s > self.total_timeout_s:
            raise ValueError("idle_timeout_s must be <= total_timeout_s")
        if not 1 <= self.max_call_attempts <= 8:
            raise ValueError("max_call_attempts must be in 1..8")
        if self.retry_backoff_s > 60:
            raise ValueError("retry_backoff_s must be in (0, 60]")
        return self

    @model_validator(mode="before")
    @classmethod
    def _drop_retired_fields(cls, data: Any) -> Any:
        """Plans recorded by 0.1.0 carry ``max_log_bytes``, a limit nothing enforced; it is
        read and dropped so those runs still load (their recorded plan hash stays theirs)."""
        if isinstance(data, dict) and "max_log_bytes" in data:
            data = {k: v for k, v in data.items() if k != "max_log_bytes"}
        return data


# Named sets of limits, chosen with ``preset = "<name>"`` in ``[tool.srbench.limits]`` (the
# other keys there override the preset's). The plan records the resulting numbers.
LIMIT_PRESETS: dict[str, dict[str, float]] = {
    # a CPU-only local model on a small or loaded machine: a long prompt can take minutes
    # before its first token (docs/howto-local-model.md)
    "slow_server": {
        "idle_timeout_s": 600.0,
        "total_timeout_s": 1200.0,
        "case_timeout_s": 3600.0,
        "max_run_seconds": 14400.0,
    },
}


def with_limit_preset(values: Mapping[str, Any]) -> dict[str, Any]:
    """Limit values with ``preset`` expanded (the explicit values win over the preset's)."""
    merged = dict(values)
    name = merged.pop("preset", None)
    if name is None:
        return merged
    if name not in LIMIT_PRESETS:
        raise ValueError(
            f"unknown limits preset {name!r}; choose one of {', '.join(sorted(LIMIT_PRESETS))}"
        )
    return {**LIMIT_PRESETS[name], **merged}


class Message(BaseModel):
    """One chat message; content may be a string or a list of content parts."""

    model_config = ConfigDict(defer_build=True, extra="allow", frozen=True)

    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: Any = None

    def model_post_init(self, context: Any, /) -> None:
        _share_fields_set(self)

    def as_request(self) -> dict[str, Any]:
        """``model_dump()``, without pydantic's serializer for the common message (text
        content, no extra fields): a request is built from it on every call."""
        if type(self.content) is str and not self.__pydantic_extra__:
            return {"role": self.role, "content": self.content}
        return self.model_dump()


class Case(Frozen):
    """One frozen task of one benchmark; ``id`` is ``<benchmark>/<native id>``."""

    id: str
    benchmark: str
    messages: list[Message] = Field(default_factory=list)
    answer: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _id_prefix(self) -> Case:
        if not self.id.startswith(self.benchmark + "/") or len(self.id) <= len(self.benchmark) + 1:
            raise ValueError(f"case id {self.id!r} must look like '{self.benchmark}/<native id>'")
        return self


class Cell(Frozen):
    """One (case, target) pair: the unit of the denominator and one pytest item."""

    case_id: str
    target_id: str


class DatasetInfo(Frozen):
    """Where the cases came from: suites with their content hashes, profile and selection."""

    profile: str
    seed: int
    selection: str = "stratified-hash-v1"
    custom_subset: bool = False
    suites: list[dict[str, Any]] = Field(default_factory=list)


class Manifest(Frozen):
    """The frozen plan of a run; ``plan_sha256`` covers every other field."""

    version: Literal["sr-bench-1.0"] = "sr-bench-1.0"
    name: str = "sr-bench"
    mode: Literal["live", "preview", "replay"] = "live"
    profile: str = "smoke"
    seed: int = DEFAULT_SEED
    cost_policy: CostPolicy = "require_priced"
    output_policy: Literal["bounded", "native"] = "bounded"
    targets: list[Target]
    auxiliary_targets: dict[str, Target] = Field(default_factory=dict)
    cases: list[Case]
    execution_cells: list[Cell] | None = None
    repeats: int = Field(1, ge=1, le=100)
    benchmark_weights: dict[str, float]
    benchmark_options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    adapter_versions: dict[str, str]
    limits: Limits = Field(default_factory=Limits)
    sampling: dict[str, Any] = Field(default_factory=dict)
    case_sha256: str
    dataset: DatasetInfo
    recovery: dict[str, Any] | None = None
    limitations: list[str] = Field(default_factory=list)
    preview_context: dict[str, Any] | None = None
    replay_sources: dict[str, str] | None = Field(
        None,
        description="A replay run (mode 'replay'): the live baseline and the preview it was made "
        "from (``baseline_run_id``, ``preview_run_id``). Absent from the plan's hash when None.",
    )
    target_kinds: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per benchmark, the target kinds it runs against when not chat models and "
        "routers (a RAG benchmark: retrieval); planned cells pair only compatible ones.",
    )
    benchmark_targets: dict[str, list[str]] | None = Field(
        None,
        description="Per benchmark, the targets that answer it, when not every target of its "
        "kinds does: a plan with variants (``<target>~<variant>``), each answering only the "
        "benchmark its test answers. Absent from the plan's hash when None.",
    )
    plan_sha256: str = ""

    def planned_cells(self) -> list[Cell]:
        """The explicit execution cells, or the case-major cross product of cases x targets."""
        if self.execution_cells:
            return list(self.execution_cells)
        return [
            Cell(case_id=case_id, target_id=target_id) for case_id, target_id in self.planned_keys()
        ]

    def planned_keys(self) -> list[tuple[str, str]]:
        """``planned_cells`` as (case id, target id) pairs, without building a record per cell."""
        return list(self.iter_planned_keys())

    def iter_planned_keys(self) -> Iterator[tuple[str, str]]:
        """``planned_keys`` one pair at a time (a reader that goes through them once holds
        none: 12 MB of pairs at 100,000 cells)."""
        if self.execution_cells:
            for cell in self.execution_cells:
                yield (cell.case_id, cell.target_id)
            return
        runs_on = self._runs_on()
        for case in self.cases:
            for target_id in runs_on[case.benchmark]:
                yield (case.id, target_id)

    def planned_count(self) -> int:
        """``len(planned_keys())``, without making the pairs (a progress line asks often)."""
        if self.execution_cells:
            return len(self.execution_cells)
        runs_on = self._runs_on()
        return sum(len(runs_on[case.benchmark]) for case in self.cases)

    def _runs_on(self) -> dict[str, list[str]]:
        return runs_on(
            {case.benchmark for case in self.cases},
            [(target.id, target.kind) for target in self.targets],
            self.target_kinds,
            self.benchmark_targets,
        )

    def target_inventory(self) -> dict[str, Target]:
        """Subject targets and auxiliary targets by id."""
        inventory = dict(self.auxiliary_targets)
        inventory.update({target.id: target for target in self.targets})
        return inventory


class CaseOutline(Case):
    """A planned case read without its content: ``messages`` and ``answer`` in the stored
    plan are skipped (left empty), so neither is built. What a JSON report reads of a case
    (its id, benchmark and metadata) is all there."""

    model_config = ConfigDict(extra="ignore")

    # aliases no stored key has: the plan's "messages" and "answer" become ignored extra keys
    messages: list[Message] = Field(default_factory=list, validation_alias="\0messages")
    answer: Any = Field(None, validation_alias="\0answer")


class ReportPlan(Manifest):
    """A frozen plan as a report reads it (``Store.report_plan``): every field validated as a
    ``Manifest``'s, its cases as ``CaseOutline``s — at 100,000 cases about half the time and
    100 MB less than the whole plan. Not for anything that shows or sends a case's content
    (an HTML page's drill-down, a run)."""

    cases: list[CaseOutline]  # type: ignore[assignment]


def outline_document(manifest: Manifest, *, cases: bool = True) -> dict[str, Any]:
    """The manifest's skeleton that ``PlanOutline.from_document`` reads: ids, hash, mode and
    budget, without case content (a store keeps it beside the full manifest); ``cases``
    False: its case list left empty (``core.plan.build.outline_json`` writes it)."""
    document = {
        "plan_sha256": manifest.plan_sha256,
        "mode": manifest.mode,
        "profile": manifest.profile,
        "targets": [{"id": target.id, "kind": target.kind} for target in manifest.targets],
        "limits": {"max_cost_usd": manifest.limits.max_cost_usd},
        "cases": [{"id": case.id, "benchmark": case.benchmark} for case in manifest.cases]
        if cases
        else [],
        "execution_cells": [cell.model_dump() for cell in manifest.execution_cells or ()],
        "target_kinds": manifest.target_kinds,
        "benchmark_targets": manifest.benchmark_targets,
    }
    return document


@dataclass(frozen=True)
class PlanOutline:
    """What operator commands need of a frozen plan (hash, mode, targets, budget, planned cells),
    readable from a store without validating every case of a 100,000-cell manifest."""

    plan_sha256: str
    mode: str
    profile: str
    target_ids: list[str]
    max_cost_usd: float | None
    cells: list[tuple[str, str]]

    @classmethod
    def of(cls, manifest: Manifest) -> PlanOutline:
        return cls(
            plan_sha256=manifest.plan_sha256,
            mode=manifest.mode,
            profile=manifest.profile,
            target_ids=[target.id for target in manifest.targets],
            max_cost_usd=manifest.limits.max_cost_usd,
            cells=manifest.planned_keys(),
        )

    @classmethod
    def from_document(cls, doc: dict[str, Any]) -> PlanOutline:
        """The outline of a stored manifest document (its JSON form), read without validation."""
        return cls(
            plan_sha256=doc["plan_sha256"],
            mode=doc["mode"],
            profile=doc["profile"],
            target_ids=[target["id"] for target in doc["targets"]],
            max_cost_usd=doc["limits"]["max_cost_usd"],
            cells=planned_keys(
                [(case["id"], case.get("benchmark", "")) for case in doc["cases"]],
                [(target["id"], target.get("kind", "single")) for target in doc["targets"]],
                [(c["case_id"], c["target_id"]) for c in doc.get("execution_cells") or ()],
                doc.get("target_kinds") or {},
                doc.get("benchmark_targets"),
            ),
        )


class Run(BaseModel):
    """One execution of one frozen plan, as the store records it."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    id: str
    status: RunStatus
    created_at: str
    updated_at: str
    plan_sha256: str
    request_key: str | None = None
    error: str | None = None
    parent_run_id: str | None = None
