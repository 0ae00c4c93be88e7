"""Capture the frozen recipes of a run's router targets (``capture_recipe: true``): read each
router's configuration endpoint twice and keep the redacted recipe only when nothing changed
(the rules are in ``core/calls/recipes.py``). Runs once, when the run is created."""

from __future__ import annotations

import os
from typing import Any

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.preview import config_url
from pytest_srbench.core.calls.recipes import ConfigRead, recipe_snapshot, unavailable
from pytest_srbench.core.models import Manifest, Target
from pytest_srbench.core.redact import Redactor, target_secret_envs
from pytest_srbench.store.base import now_iso
from pytest_srbench.transport.auth import auth_header
from pytest_srbench.transport.sync_read import JsonReader, ReadFailure, json_reader


def read_config(reader: JsonReader, url: str, headers: dict[str, str]) -> ConfigRead:
    """One read of a router configuration endpoint."""
    answer = reader.get(url, headers)
    body = answer.body
    if not isinstance(body, dict):
        raise ReadFailure("ValueError", "the configuration endpoint did not return a JSON object")
    return ConfigRead(
        etag=answer.headers.get("etag"),
        generated_hash=body.get("config_hash"),
        active_hash=body.get("active_config_hash"),
        config=body.get("config"),
    )


def capture_target(reader: JsonReader, target: Target, base_url: str | None) -> dict[str, Any]:
    """The recipe snapshot of one router target, or why it is unavailable."""
    try:
        url = config_url(target, base_url)
        headers = auth_header(target.preview_api_key_env or target.api_key_env)
        before = read_config(reader, url, headers)
        after = read_config(reader, url, headers)
    except (ReadFailure, ValueError, CallFailure) as error:
        kind = error.kind if isinstance(error, ReadFailure) else type(error).__name__
        detail = str(error).split("\n")[0][:200]
        return unavailable(target, f"configuration could not be read ({kind}: {detail})")
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
    with json_reader(timeout_s) as reader:
        return [
            redactor.value(
                capture_target(reader, target, base_urls.get(target.id) or target.base_url)
            )
            for target in wanted
        ]
