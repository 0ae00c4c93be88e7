"""Project configuration: ``srbench.toml`` or ``[tool.srbench]`` in ``pyproject.toml``.

Targets, judges, limits, sampling, suites and simulated models are declared here; API keys
never are (a target names the environment variable that holds its key).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)

from pytest_srbench.app.config_files import ConfigError as ConfigError  # noqa: PLC0414 - re-exported: every entry point imports it from here
from pytest_srbench.app.config_files import config_table
from pytest_srbench.core.errors import validation_message
from pytest_srbench.core.models import VARIANT_SEP, Limits, Target, with_limit_preset
from pytest_srbench.core.plan.choices import DEFAULT_SEED, TRANSPORTS
from pytest_srbench.simulator.profiles import (
    BUILTIN_MODELS,
    DEFAULT_SIM_TARGETS,
    SimModel,
    simulated_target,
)
from pytest_srbench.simulator.targets import (
    BUILTIN_ROUTERS,
    simulated_retrieval_targets,
    simulated_router_target,
)


class ManagedServerConfig(BaseModel):
    """How a managed llama-server is started (``[tool.srbench.targets.server]``); each value
    left out is chosen from the plan (docs/howto-local-model.md)."""

    model_config = ConfigDict(extra="forbid")

    context: int | None = Field(
        None,
        ge=256,
        le=1_048_576,
        description="Tokens per slot (default: the plan's longest prompt plus max_tokens, "
        "within the model's trained context; set it to go past that context).",
    )
    slots: int | None = Field(
        None, ge=1, le=64, description="Parallel slots (default: the concurrency, at most 4)."
    )
    threads: int | None = Field(
        None,
        ge=1,
        le=256,
        description="llama.cpp compute threads (default: the usable cores less one).",
    )


class TargetConfig(Target):
    """A target as configured: the frozen ``Target`` (what the plan records) plus settings that
    only shape execution and never enter the plan."""

    concurrency: int | None = Field(None, ge=1, le=4096)
    keep_alive: bool | None = Field(
        None,
        description="Reuse connections (default true; false for managed llama-server targets).",
    )
    server: ManagedServerConfig | None = Field(
        None, description="How a managed llama-server is started (managed targets only)."
    )

    @field_validator("id")
    @classmethod
    def _no_variant_mark(cls, value: str) -> str:
        if VARIANT_SEP in value:
            raise ValueError(
                f"target id {value!r}: {VARIANT_SEP!r} is kept for the variants of a target "
                "(<target>~<variant>, made from a benchmark test's parameters)"
            )
        return value

    @model_validator(mode="after")
    def _server_needs_a_managed_target(self) -> TargetConfig:
        if self.server is not None and self.managed is None:
            raise ValueError(
                f"target {self.id!r}: server settings are only for managed = 'llama-server' targets"
            )
        return self

    @model_validator(mode="wrap")
    @classmethod
    def _errors_name_the_target(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """Every rule of the frozen target is checked when the file is read, so a bad URL or a
        target without one is a configuration error naming the target, not a failure later."""
        try:
            return handler(data)
        except ValidationError as error:
            target_id = data.get("id") if isinstance(data, dict) else None
            raise ValueError(_target_problems(str(target_id), error)) from None

    def to_target(self) -> Target:
        return Target.model_validate(
            self.model_dump(exclude={"concurrency", "keep_alive", "server"})
        )

    def reuses_connections(self) -> bool:
        if self.keep_alive is not None:
            return self.keep_alive
        return self.managed != "llama-server"


class SimulatorConfig(BaseModel):
    """Extra simulated models, by name."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("models")
    @classmethod
    def _models(cls, value: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        """Each simulated model is checked when the file is read, not when a run starts."""
        for name, spec in value.items():
            try:
                SimModel.model_validate({"name": name, **spec})
            except ValidationError as error:
                raise ValueError(f"model {name!r}: {_format_validation(error)}") from None
        return value

    def sim_models(self) -> dict[str, SimModel]:
        return {
            name: SimModel.model_validate({"name": name, **spec})
            for name, spec in self.models.items()
        }


class SrbenchConfig(BaseModel):
    """Everything ``[tool.srbench]`` may say."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    store: str = ".srbench"
    reports: str = "reports"
    profile: str = "smoke"
    seed: int = DEFAULT_SEED
    concurrency: int = Field(16, ge=1, le=4096)
    transport: str = "aiohttp"
    cost_policy: Literal["require_priced", "capability_only"] = "require_priced"
    default_targets: list[str] | None = None
    targets: list[TargetConfig] = Field(default_factory=list)
    judges: list[TargetConfig] = Field(default_factory=list)
    benchmarks: dict[str, dict[str, Any]] = Field(default_factory=dict)
    limits: dict[str, Any] = Field(default_factory=dict)
    sampling: dict[str, Any] = Field(default_factory=dict)
    suites: list[str] = Field(default_factory=lambda: ["suites"])
    run_suites: Literal["auto", "always", "never"] = Field(
        "auto",
        description="When a srbench session runs the suite benchmarks (the built-in module): "
        "auto — when --srbench-benchmark names one no collected test answers, or when no "
        "marked test was collected; always; never.",
    )
    simulator: SimulatorConfig = Field(default_factory=SimulatorConfig)
    offline: bool = Field(
        False, description="Allow agent benchmarks against simulated targets (default: refused)."
    )
    cache: Literal["use", "off"] = Field(
        "off",
        description="The response cache (docs/caching-honestly.md): use — a call whose frozen "
        "request equals a completed live call in the store is answered from that call's saved "
        "evidence (a `replayed` receipt, no spend); off — every call goes to its endpoint.",
    )
    source: str | None = None

    @field_validator("transport")
    @classmethod
    def _transport(cls, value: str) -> str:
        if value not in TRANSPORTS:
            raise ValueError(f"unknown transport {value!r}; choose one of {', '.join(TRANSPORTS)}")
        return value

    @field_validator("targets", "judges")
    @classmethod
    def _unique_ids(cls, value: list[TargetConfig]) -> list[TargetConfig]:
        seen: set[str] = set()
        for target in value:
            if target.id in seen:
                raise ValueError(f"target id {target.id!r} is defined more than once")
            seen.add(target.id)
        return value

    @field_validator("limits")
    @classmethod
    def _limits(cls, value: dict[str, Any]) -> dict[str, Any]:
        Limits.model_validate(with_limit_preset(value))  # an unknown preset names the known
        return value

    def frozen_limits(self, overrides: dict[str, Any] | None = None) -> Limits:
        """The plan's limits: a preset's, then the configured ones, then the run's overrides."""
        try:
            return Limits.model_validate({**with_limit_preset(self.limits), **(overrides or {})})
        except ValidationError as error:
            raise ConfigError(f"invalid limits: {_format_validation(error)}") from None

    def sim_models(self) -> dict[str, SimModel]:
        models = dict(BUILTIN_MODELS)
        models.update(self.simulator.sim_models())
        return models

    def all_targets(self) -> dict[str, TargetConfig]:
        """Built-in simulated targets, then configured ones (a configured id replaces a built-in)."""
        found: dict[str, TargetConfig] = {}
        for name in DEFAULT_SIM_TARGETS:
            builtin = simulated_target(BUILTIN_MODELS[name])
            found[builtin.id] = TargetConfig.model_validate(builtin.model_dump())
        for router in BUILTIN_ROUTERS.values():
            builtin = simulated_router_target(router)
            found[builtin.id] = TargetConfig.model_validate(builtin.model_dump())
        for builtin in simulated_retrieval_targets():
            found[builtin.id] = TargetConfig.model_validate(builtin.model_dump())
        for configured in self.targets:
            found[configured.id] = configured
        return found

    def select_targets(
        self,
        requested: list[str] | None,
        kinds: set[str] | None = None,
        *,
        drop_other_kinds: bool = False,
    ) -> list[TargetConfig]:
        """The targets a run uses: ``--srbench-target`` ids, else ``default_targets``, else the
        built-in simulated ones its benchmarks need (the two models for chat benchmarks, the
        three retrieval modes for RAG benchmarks). ``drop_other_kinds``: requested targets of
        no needed kind are left out instead of refused (a benchmark of a session of several). Only targets of ``kinds`` are kept from the
        defaults; when RAG benchmarks need a retrieval target and ``default_targets`` lists
        none, the three built-in retrieval modes stand in (``default_targets`` usually names
        chat models). An explicitly requested target of no needed kind is an error."""
        known = self.all_targets()
        kinds = kinds or {"single", "mom"}
        if requested:
            ids = list(requested)
        elif self.default_targets:
            ids = [i for i in self.default_targets if i not in known or known[i].kind in kinds]
            listed = [known[i].kind for i in self.default_targets if i in known]
            if "retrieval" in kinds and "retrieval" not in listed:
                ids += [t.id for t in simulated_retrieval_targets() if t.id not in ids]
        else:
            ids = []
            if kinds & {"single", "mom"}:
                ids += list(DEFAULT_SIM_TARGETS)
            if "retrieval" in kinds:
                ids += [t.id for t in simulated_retrieval_targets()]
        missing = [target_id for target_id in ids if target_id not in known]
        if missing:
            raise ConfigError(
                f"unknown target(s) {', '.join(missing)}; known targets: {', '.join(sorted(known))}"
            )
        if len(set(ids)) != len(ids):
            raise ConfigError(f"a target is selected twice: {ids}")
        selected = [known[target_id] for target_id in ids]
        if drop_other_kinds:  # one benchmark's share of a session's requested targets
            selected = [t for t in selected if t.kind in kinds]
        useless = [t.id for t in selected if t.kind not in kinds]
        if useless:
            raise ConfigError(
                f"target(s) {', '.join(useless)} can run none of the selected benchmarks "
                f"(they need {' or '.join(sorted(kinds))} targets)"
            )
        models = self.sim_models()
        for target in selected:
            if (
                target.simulated
                and target.base_url is None
                and target.model not in models
                and target.model not in BUILTIN_ROUTERS
                and target.kind != "retrieval"
            ):
                raise ConfigError(
                    f"target {target.id!r} is simulated but model {target.model!r} is not a simulated "
                    f"model (known: {', '.join(sorted(models))}); add [tool.srbench.simulator.models."
                    f"{target.model}]"
                )
        return selected


def _format_validation(error: ValidationError) -> str:
    """Where and what, for every error; never the input value (it may be a secret URL)."""
    parts = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"])
        message = validation_message(dict(item))
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def _target_problems(target_id: str, error: ValidationError) -> str:
    """``target 'x': <field> …`` for the frozen target's errors, without repeating a field or
    the id a message already names (and never the input value)."""
    parts = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"])
        message = validation_message(dict(item))
        parts.append(f"{where}: {message}" if where and not message.startswith(where) else message)
    text = "; ".join(parts)
    prefix = f"target {target_id!r}"
    return text if text.startswith(prefix) else f"{prefix}: {text}"


def parse_config(data: dict[str, Any], source: str) -> SrbenchConfig:
    """Validate a ``[tool.srbench]`` table."""
    try:
        return SrbenchConfig.model_validate({**data, "source": source})
    except ValidationError as error:
        raise ConfigError(
            f"{source}: invalid [tool.srbench] configuration: {_format_validation(error)}"
        ) from None


def controller_config(document: dict[str, Any]) -> SrbenchConfig:
    """The configuration an xdist controller hands its workers (they may run in another
    folder or on another host, where its configuration file is not)."""
    try:
        return SrbenchConfig.model_validate(document)
    except ValidationError as error:
        raise ConfigError(
            f"the controller's configuration does not validate here: {error}"
        ) from None


def load_config(rootdir: Path, explicit: Path | None = None) -> SrbenchConfig:
    """Read ``explicit``, else ``<rootdir>/srbench.toml``, else ``[tool.srbench]`` of
    ``<rootdir>/pyproject.toml``; no file means defaults."""
    found = config_table(rootdir, explicit)
    if found is None:
        return SrbenchConfig()
    table, source = found
    return parse_config(table, source)
