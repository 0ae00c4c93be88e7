"""Keeping API keys out of everything a run records (pure).

A target names the environment variable that holds its key; the key itself must never reach
the store, the reports or the logs, even when an endpoint echoes it back (in an error body, a
response header or the stream). A ``Redactor`` knows the key values of a run's targets and
replaces every occurrence, in text, in raw bytes and inside nested JSON-like values, by
``REDACTED``. Values shorter than ``MIN_SECRET_CHARS`` are not treated as secrets: they are
the placeholders local servers accept (``EMPTY``, ``dummy``), and replacing them everywhere
would rewrite ordinary words in prompts and answers.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote

import orjson

REDACTED = "[REDACTED]"
MIN_SECRET_CHARS = 8


def _forms(secret: str) -> set[str]:
    """The secret as it may appear in text: raw, JSON-escaped, with escaped slashes, URL-quoted."""
    escaped = json.dumps(secret)[1:-1]
    return {secret, escaped, escaped.replace("/", "\\/"), quote(secret, safe="")}


class Redactor:
    """Replaces the given secret values (and their escaped forms) by ``REDACTED``."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if len(secret) >= MIN_SECRET_CHARS and REDACTED not in secret:
                forms |= _forms(secret)
        self._texts = sorted(forms, key=len, reverse=True)  # longest first: no partial leftovers
        self._bytes = [form.encode("utf-8") for form in self._texts]

    @classmethod
    def for_env(cls, names: Iterable[str | None], environ: Mapping[str, str]) -> Redactor:
        """A redactor for the values of the named environment variables (unset ones skipped)."""
        return cls(environ[name] for name in names if name and environ.get(name))

    def __bool__(self) -> bool:
        return bool(self._texts)

    def text(self, value: str) -> str:
        for form in self._texts:
            if form in value:
                value = value.replace(form, REDACTED)
        return value

    def data(self, value: bytes) -> bytes:
        for form in self._bytes:
            if form in value:
                value = value.replace(form, REDACTED.encode("ascii"))
        return value

    def value(self, value: Any) -> Any:
        """``value`` with every string inside it (keys too) redacted; unchanged values are
        returned as they are, so the common case (no secret present) copies nothing."""
        if not self._texts:
            return value
        try:
            encoded = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:
            return self._walk(value)
        if not any(form in encoded for form in self._bytes):
            return value
        return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bytes):
            return self.data(value)
        if isinstance(value, dict):
            return {
                (self.text(k) if isinstance(k, str) else k): self._walk(v) for k, v in value.items()
            }
        if isinstance(value, list | tuple):
            return type(value)(self._walk(item) for item in value)
        return value


def target_secret_envs(targets: Iterable[Any]) -> list[str]:
    """The environment variable names a run's targets read keys from."""
    names: list[str] = []
    for target in targets:
        for name in (
            getattr(target, "api_key_env", None),
            getattr(target, "preview_api_key_env", None),
        ):
            if name and name not in names:
                names.append(name)
    return names
