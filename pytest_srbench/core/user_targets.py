"""Targets that are the user's own code: a pytest fixture declared with ``@target("id")``.

The decorator only records which fixture serves which target id (it imports nothing and
changes nothing about the fixture); the plugin turns each declaration into a frozen ``python``
target of the plan and hands the fixture's value to the test bodies of that target's cells.
Declarations must be made at import time of a ``conftest.py`` or of the test module, so that
they are known when the plan is made.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pytest_srbench.core.errors import InputError

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")
Fixture = TypeVar("Fixture")


@dataclass(frozen=True)
class UserTarget:
    """One declared target: its id, the fixture that provides it and the model it reports."""

    id: str
    fixture: str
    model: str
    uses: tuple[str, ...] = ()


_DECLARED: dict[str, UserTarget] = {}


def target(
    target_id: str, *, model: str | None = None, uses: str | Sequence[str] = ()
) -> Callable[[Fixture], Fixture]:
    """Declare a pytest fixture as benchmark target ``target_id`` (apply it above
    ``@pytest.fixture``). ``model`` names what the report shows as its model (default: the id);
    ``uses`` names the configured targets (models) the code calls through ``srbench_client``,
    so that they are in the plan (frozen, priced) even when only this target is selected.

    The fixture's value is the system under test: a callable (sync or async) that takes the
    case's messages and returns the answer text, or any object the test body knows how to use
    (``srbench_target.app``).
    """
    if not isinstance(target_id, str) or not _ID.match(target_id):
        raise InputError(f"target id {target_id!r} must match {_ID.pattern}")
    used = (uses,) if isinstance(uses, str) else tuple(uses)
    for name in used:
        if not isinstance(name, str) or not _ID.match(name):
            raise InputError(f"target {target_id!r}: uses= names target ids, not {name!r}")

    def declare(fixture: Fixture) -> Fixture:
        name = getattr(fixture, "name", None) or getattr(fixture, "__name__", None)
        if not isinstance(name, str) or not name:
            raise InputError(f"@target({target_id!r}) must decorate a pytest fixture")
        declared = UserTarget(id=target_id, fixture=name, model=model or target_id, uses=used)
        existing = _DECLARED.get(target_id)
        if existing is not None and existing != declared:
            raise InputError(
                f"target {target_id!r} is declared twice (fixtures {existing.fixture!r} and "
                f"{name!r})"
            )
        _DECLARED[target_id] = declared
        return fixture

    return declare


def declared_targets() -> list[UserTarget]:
    """Every target declared so far, by id."""
    return [_DECLARED[key] for key in sorted(_DECLARED)]


def target_record(declared: UserTarget) -> dict[str, Any]:
    """The fields of the frozen ``Target`` a declaration becomes."""
    return {"id": declared.id, "kind": "python", "model": declared.model}
