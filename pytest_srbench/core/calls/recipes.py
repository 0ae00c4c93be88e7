"""Frozen router recipes, pure: decide from two reads of a router's configuration whether a
redacted recipe may be kept with a run, and make that redacted projection.

A recipe is captured only when, before and after the capture, the router's generated and
active configuration hashes both equal the target's frozen ``config_hash`` and the
configuration's ETag did not change. The projection drops deployment connection details and
credentials; it documents the routing recipe, it is not a deployable configuration. A run
without a captured recipe says "unavailable" and never borrows a later one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_srbench.core.canonical import digest
from pytest_srbench.core.models import Target

REDACTED_NAMES = frozenset(
    {"api_key", "apikey", "authorization", "token", "secret", "password", "credentials",
     "headers", "base_url", "url", "endpoint", "endpoints", "address", "host", "port", "dsn"}
)  # fmt: skip
REDACTED_SUFFIXES = ("_key", "_url", "_token", "_secret", "_password", "_address", "_host")


@dataclass(frozen=True)
class ConfigRead:
    """One read of a router's configuration endpoint."""

    etag: str | None
    generated_hash: str | None
    active_hash: str | None
    config: Any


def _redacted(name: str) -> bool:
    lowered = name.lower()
    return lowered in REDACTED_NAMES or lowered.endswith(REDACTED_SUFFIXES)


def redact(value: Any) -> Any:
    """The value without any key that names a connection detail or a credential (recursively)."""
    if isinstance(value, dict):
        return {key: redact(item) for key, item in value.items() if not _redacted(str(key))}
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


def unavailable(target: Target, reason: str) -> dict[str, Any]:
    return {"target_id": target.id, "status": "unavailable", "reason": reason}


def recipe_snapshot(
    target: Target, before: ConfigRead, after: ConfigRead, captured_at: str
) -> dict[str, Any]:
    """The captured recipe, or an "unavailable" record saying which condition failed."""
    frozen = target.config_hash
    for when, read in (("before", before), ("after", after)):
        if read.generated_hash != frozen:
            return unavailable(
                target, f"generated config hash {when} capture differs from the frozen one"
            )
        if read.active_hash != frozen:
            return unavailable(
                target, f"active config hash {when} capture differs from the frozen one"
            )
    if before.etag is None or before.etag != after.etag:
        return unavailable(target, "the configuration ETag changed (or is missing) during capture")
    projection = redact(before.config)
    return {
        "target_id": target.id,
        "status": "captured",
        "captured_at": captured_at,
        "config_hash": frozen,
        "etag": before.etag,
        "projection_sha256": digest(projection),
        "recipe": projection,
    }


def recipe_summary(target: Target, snapshot: dict[str, Any] | None) -> dict[str, Any]:
    """What a report shows of a router target's recipe (the body stays in the store)."""
    if snapshot is None:
        reason = (
            "capture_recipe is off for this target"
            if not target.capture_recipe
            else "no recipe was captured for this run"
        )
        return unavailable(target, reason)
    return {key: value for key, value in snapshot.items() if key != "recipe"}
