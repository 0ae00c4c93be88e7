"""What a task's container is made of and may use, as a suite row records it (pure).

A row's ``container`` object (written by the Terminal-Bench converter from ``task.toml`` and
the task's ``environment/`` folder) names an image, or carries a Dockerfile and its build
context; ``ContainerSpec.from_row`` checks it and names the bad field.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ContainerSpec:
    """What a task's container is made of and may use (from the task's ``task.toml`` and its
    ``environment/`` folder): a named image, or a Dockerfile with its build context."""

    image: str | None = None
    dockerfile: str | None = None
    context: Mapping[str, bytes] = field(default_factory=dict)
    compose: str | None = None
    cpus: float = 1.0
    memory_mb: int = 2048
    pids: int = 1024
    allow_internet: bool = True
    build_timeout_s: float = 600.0

    @classmethod
    def from_row(cls, data: Mapping[str, Any]) -> ContainerSpec:
        """Validate a row's ``container`` object; ``ValueError`` names the bad field."""
        if not isinstance(data, Mapping):
            raise ValueError("'container' must be an object")
        image, dockerfile, compose = (data.get(k) for k in ("image", "dockerfile", "compose"))
        for name, value in (("image", image), ("dockerfile", dockerfile), ("compose", compose)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise ValueError(f"container.{name} must be non-empty text when present")
        if image is None and dockerfile is None and compose is None:
            raise ValueError("container needs an 'image', a 'dockerfile' or a 'compose' file")
        context: dict[str, bytes] = {}
        for key, decode in (("context", _utf8), ("context_base64", _base64)):
            files = data.get(key) or {}
            if not isinstance(files, Mapping):
                raise ValueError(f"container.{key} must map relative paths to file contents")
            for name, value in files.items():
                context[relative_path(name, key)] = decode(name, value, key)
        numbers = {
            "cpus": _number(data, "cpus", 1.0, 0.01, 256),
            "memory_mb": int(_number(data, "memory_mb", 2048, 16, 1 << 20)),
            "pids": int(_number(data, "pids", 1024, 16, 1 << 22)),
            "build_timeout_s": _number(data, "build_timeout_s", 600.0, 1, 86400),
        }
        internet = data.get("allow_internet", True)
        if not isinstance(internet, bool):
            raise ValueError("container.allow_internet must be true or false")
        return cls(image, dockerfile, context, compose, allow_internet=internet, **numbers)  # type: ignore[arg-type]

    def need(self) -> str:
        """What the task asks for, in words (the first half of an unavailable message)."""
        if self.image:
            return f"this task needs Docker (task.toml names image {self.image})"
        if self.dockerfile:
            return "this task needs Docker (it ships environment/Dockerfile)"
        return "this task needs Docker Compose (it ships environment/docker-compose.yaml)"

    def build_tag(self) -> str:
        """The tag of the image built from the Dockerfile and context (same content, same tag)."""
        digest = hashlib.sha256((self.dockerfile or "").encode("utf-8"))
        for name in sorted(self.context):
            digest.update(b"\0" + name.encode("utf-8") + b"\0" + self.context[name])
        return f"srbench-task:{digest.hexdigest()[:24]}"


def _utf8(name: str, value: object, key: str) -> bytes:
    if not isinstance(value, str):
        raise ValueError(f"container.{key}[{name!r}] must be text")
    return value.encode("utf-8")


def _base64(name: str, value: object, key: str) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"container.{key}[{name!r}] is not valid base64") from None


def relative_path(name: object, key: str) -> str:
    """``name`` as a clean relative POSIX path; ``ValueError`` when it is absolute or leaves."""
    text = str(name) if name is not None else ""
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if not text or text.startswith("/") or ".." in parts or not parts:
        raise ValueError(f"container.{key} names must be relative paths inside it: {name!r}")
    return "/".join(parts)


def _number(data: Mapping[str, Any], key: str, default: float, low: float, high: float) -> float:
    value = data.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise ValueError(f"container.{key} must be a number in {low}..{high}, not {value!r}")
    return float(value)
