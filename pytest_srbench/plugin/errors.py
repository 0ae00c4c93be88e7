"""The pytest entry point's one mapping of deliberate errors: a ``SrbenchError`` raised in a
set-up or collection hook ends the session as a usage error (exit 4) with one
``pytest-srbench: …`` line; anything else is a bug and keeps its traceback."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import pytest

from pytest_srbench.core.errors import SrbenchError

P = ParamSpec("P")
R = TypeVar("R")


def usage_errors(hook: Callable[P, R]) -> Callable[P, R]:
    """Wrap a hook so that a deliberate error becomes one usage line."""

    @functools.wraps(hook)
    def mapped(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return hook(*args, **kwargs)
        except SrbenchError as error:
            raise pytest.UsageError(f"pytest-srbench: {error}") from None

    return mapped
