"""A target's key variable, checked once before its run: an unset variable is the user's
mistake, refused in one line naming the target and the variable before any request (the key is
read, never kept)."""

from __future__ import annotations

from collections.abc import Iterable

from pytest_srbench.app.config import ConfigError
from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.models import Target
from pytest_srbench.transport.auth import auth_header


def credentials(target: Target) -> dict[str, str]:
    """The target's auth header; an unset key variable is a ``ConfigError``, said once."""
    try:
        return auth_header(target.api_key_env)
    except CallFailure:
        raise ConfigError(
            f"target {target.id!r}: the environment variable {target.api_key_env} named by "
            "api_key_env is not set"
        ) from None


def check_credentials(targets: Iterable[Target]) -> None:
    """Every target's key variable is set (the plan's targets, before its run is created)."""
    for target in targets:
        credentials(target)
