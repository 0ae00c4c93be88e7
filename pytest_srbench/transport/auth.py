"""Credentials for a target's requests: read from the environment variable the target names,
at the moment of the request, and never kept anywhere else."""

from __future__ import annotations

import os

from pytest_srbench.core.calls.failures import CallFailure


def auth_header(env_name: str | None) -> dict[str, str]:
    """``Authorization: Bearer …`` from the named environment variable (never stored)."""
    if not env_name:
        return {}
    secret = os.environ.get(env_name)
    if not secret:
        raise CallFailure(f"Target credential environment variable is not set ({env_name})")
    return {"Authorization": f"Bearer {secret}"}
