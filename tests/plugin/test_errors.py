"""The plugin's one mapping of deliberate errors: a ``SrbenchError`` becomes one usage line, in
plain hooks and generator hook wrappers alike; anything else keeps its traceback."""

from __future__ import annotations

from collections.abc import Generator

import pytest

from pytest_srbench.core.errors import InputError, SrbenchError, UnavailableError
from pytest_srbench.plugin.errors import about, usage_errors, usage_line


def test_a_deliberate_error_becomes_one_usage_line():
    @usage_errors
    def hook() -> None:
        raise InputError("benchmark 'nope' is not known")

    with pytest.raises(pytest.UsageError) as raised:
        hook()
    assert str(raised.value) == "pytest-srbench: benchmark 'nope' is not known"
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_anything_else_keeps_its_traceback():
    """A bug is not a usage line: a bare ValueError or KeyError passes unchanged."""

    @usage_errors
    def hook(error: Exception) -> None:
        raise error

    for error in (ValueError("a bug"), KeyError("a bug"), TypeError("a bug")):
        with pytest.raises(type(error)):
            hook(error)


def test_a_generator_wrapper_is_mapped_before_and_after_its_yield():
    @usage_errors
    def wrapper(fail_at: str) -> Generator[None, object, str]:
        if fail_at == "before":
            raise UnavailableError("the simulator is not running")
        sent = yield
        if fail_at == "after":
            raise InputError(f"after {sent}")
        return "done"

    with pytest.raises(pytest.UsageError, match=r"^pytest-srbench: the simulator is not running$"):
        next(wrapper("before"))
    gen = wrapper("after")
    next(gen)
    with pytest.raises(pytest.UsageError, match=r"^pytest-srbench: after outcome$"):
        gen.send("outcome")
    gen = wrapper("never")
    next(gen)
    with pytest.raises(StopIteration) as stopped:
        gen.send(None)
    assert stopped.value.value == "done"


def test_about_names_the_option_and_lets_other_errors_through():
    with pytest.raises(pytest.UsageError) as raised, about("--srbench-recover"):
        raise InputError("plan.json is not a recovery plan")
    assert (
        str(raised.value) == "pytest-srbench: --srbench-recover: plan.json is not a recovery plan"
    )
    with pytest.raises(ValueError), about("--srbench-recover"):
        raise ValueError("a bug")


def test_usage_line():
    assert usage_line(SrbenchError("x")) == "pytest-srbench: x"
    assert (
        usage_line(SrbenchError("x"), "--srbench-baseline")
        == "pytest-srbench: --srbench-baseline: x"
    )
