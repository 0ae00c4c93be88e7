"""The run options: what a user chooses for one run, declared once.

Every way to start a run reads this model. The ``--srbench-*`` pytest flags are generated from
its fields (their spelling is ``app/run_flags.py``), the plugin validates what the flags gave
through it, the service's run request is it, the pytest command line the service starts for a
request is rendered from it (``pytest_args``), and planning takes it as input. A new run option
is a field here and its flag's row there.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pytest_srbench.app.run_flags import RUN_FLAGS
from pytest_srbench.core.errors import InputError, validation_message
from pytest_srbench.core.models import check_run_retrieval

Profile = Literal["smoke", "quick", "standard"]
Mode = Literal["live", "preview"]


MAX_NAMES = 256
Name = Annotated[str, Field(min_length=1, max_length=200)]


class RunOptions(BaseModel):
    """What a user asks to run (pytest flags, the service's request, planning's input)."""

    model_config = ConfigDict(extra="forbid")

    profile: Profile = "smoke"
    # bounded: a run names a handful of each (and each becomes a worker's argument)
    benchmarks: list[Name] | None = Field(None, max_length=MAX_NAMES)
    targets: list[Name] | None = Field(None, max_length=MAX_NAMES)
    limit: int | None = Field(None, ge=1, le=100_000)
    seed: int | None = Field(None, ge=0, le=2**63 - 1)
    repeats: int = Field(1, ge=1, le=100)
    name: str = Field("sr-bench", min_length=1, max_length=200)
    limits: dict[Name, int | float] = Field(default_factory=dict, max_length=MAX_NAMES)
    sampling: dict[Name, int | float] = Field(default_factory=dict, max_length=MAX_NAMES)
    # mode, top_k, rrf_k, reranker of every retrieval target of the plan (frozen into it)
    retrieval: dict[str, str | int] = Field(default_factory=dict)
    mode: Mode = "live"
    preview_context: dict[str, str | int] | None = None
    offline: bool = False
    concurrency: int | None = Field(None, ge=1, le=4096)

    @field_validator("retrieval", mode="before")
    @classmethod
    def _retrieval(cls, value: Any) -> Any:
        """Checked as given (a bool is not a top_k): unknown keys and bad values are refused,
        null values dropped (they override nothing); null as a whole is no override."""
        if value is None:
            return {}
        return check_run_retrieval(value) if isinstance(value, dict) else value

    def pytest_args(self) -> list[str]:
        """The ``--srbench-*`` flags that ask pytest for exactly these options (every value
        that is set, defaults included, so that no project configuration can fill them)."""
        args: list[str] = []
        for name in type(self).model_fields:
            flag = RUN_FLAGS[name]
            value = getattr(self, name)
            if value is None or value is False:
                continue
            if value is True:
                args.append(flag.name)
            elif isinstance(value, dict):
                args += [f"{flag.name}={key}={item}" for key, item in value.items()]
            elif isinstance(value, list):
                args += [f"{flag.name}={item}" for item in value]
            else:
                args.append(f"{flag.name}={value}")
        return args


def validated_options(values: dict[str, object]) -> RunOptions:
    """``RunOptions`` from raw values; an invalid one is an ``InputError`` naming its flag."""
    try:
        return RunOptions.model_validate(values)
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            field = str(problem["loc"][0]) if problem["loc"] else ""
            where = RUN_FLAGS[field].name if field in RUN_FLAGS else field
            problems.append(f"{where}: {validation_message(dict(problem))}")
        raise InputError("; ".join(problems)) from None
