"""The pytest entry point's one mapping of deliberate errors: a ``SrbenchError`` raised in a
hook ends the session as a usage error (exit 4) with one ``pytest-srbench: …`` line; anything
else is a bug and keeps its traceback.

Every hook that may meet a deliberate error is wrapped by ``usage_errors`` (plain hooks and
generator wrappers alike); ``about`` names the option an error is about; ``usage_line`` is
the text of the line, for the places that hand it on instead of raising (an xdist worker
tells its controller, ``selection_notes.refuse``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar, cast

import pytest

from pytest_srbench.core.errors import SrbenchError

P = ParamSpec("P")
R = TypeVar("R")


def usage_line(error: SrbenchError, about: str | None = None) -> str:
    """The one line a deliberate error becomes (``about``: the option or input it concerns)."""
    return f"pytest-srbench: {about}: {error}" if about else f"pytest-srbench: {error}"


def usage_error(error: SrbenchError, about: str | None = None) -> pytest.UsageError:
    return pytest.UsageError(usage_line(error, about))


@contextmanager
def about(what: str) -> Iterator[None]:
    """A deliberate error inside the block is a usage error about ``what`` (an option)."""
    try:
        yield
    except SrbenchError as error:
        raise usage_error(error, what) from None


def usage_errors(hook: Callable[P, R]) -> Callable[P, R]:
    """Wrap a hook (or a generator hook wrapper) so that a deliberate error becomes one usage
    line; any other exception passes unchanged."""
    if inspect.isgeneratorfunction(hook):

        @functools.wraps(hook)
        def mapped_wrapper(*args: P.args, **kwargs: P.kwargs) -> Generator[Any, Any, Any]:
            try:
                return (yield from hook(*args, **kwargs))
            except SrbenchError as error:
                raise usage_error(error) from None

        return cast(Callable[P, R], mapped_wrapper)

    @functools.wraps(hook)
    def mapped(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return hook(*args, **kwargs)
        except SrbenchError as error:
            raise usage_error(error) from None

    return mapped
