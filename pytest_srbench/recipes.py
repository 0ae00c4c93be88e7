"""Capture the frozen recipes of a run's router targets (``capture_recipe: true``): read each
router's configuration endpoint twice and keep the redacted recipe only when nothing changed
(the rules are in ``core/recipes.py``). Runs once, when the run is created."""

from __future__ import annotations

import os
from typing import Any

import httpx

from pytest_srbench.core.failures import CallFailure
from pytest_srbench.core.models import Manifest, Target
from pytest_srbench.core.preview import config_url
from pytest_srbench.core.recipes import ConfigRead, recipe_snapshot, unavailable
from pytest_srbench.core.redact import Redactor, target_secret_envs
from pytest_srbench.engine.call import auth_header
from pytest_srbench.store.base import now_iso


def read_config(client: httpx.Client, url: str, headers: dict[str, str]) -> ConfigRead:
    """One read of a router configuration endpoint."""
    response = client.get(url, headers=headers)
    response.raise_for_status()
    body = response.json()
    if not isinstance(body, dict):
        raise ValueError("the configuration endpoint did not return a JSON object")
    return ConfigRead(
        etag=response.headers.get("etag"),
        generated_hash=body.get("config_hash"),
        active_hash=body.get("active_config_hash"),
        config=body.get("config"),
    )


def capture_target(client: httpx.Client, target: Target, base_url: str | None) -> dict[str, Any]:
    """The recipe snapshot of one router target, or why it is unavailable."""
    try:
        url = config_url(target, base_url)
        headers = auth_header(target.preview_api_key_env or target.api_key_env)
        before = read_config(client, url, headers)
        after = read_config(client, url, headers)
    except (httpx.HTTPError, ValueError, CallFailure) as error:
        detail = str(error).split("\n")[0][:200]
        return unavailable(
            target, f"configuration could not be read ({type(error).__name__}: {detail})"
        )
    return recipe_snapshot(target, before, after, now_iso())


def capture_recipes(
    manifest: Manifest, base_urls: dict[str, str], timeout_s: float = 10.0
) -> list[dict[str, Any]]:
    """Snapshots for every router target of the plan that asks for one (an API key the
    configuration echoes is redacted like everything else the run records)."""
    wanted = [t for t in manifest.targets if t.kind == "mom" and t.capture_recipe]
    if not wanted:
        return []
    redactor = Redactor.for_env(target_secret_envs(manifest.targets), os.environ)
    with httpx.Client(timeout=timeout_s, follow_redirects=False) as client:
        return [
            redactor.value(
                capture_target(client, target, base_urls.get(target.id) or target.base_url)
            )
            for target in wanted
        ]
