"""Canonical JSON and SHA-256 digests used for every frozen identity (plans, cases, cells)."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring  # the escaper json.dumps(ensure_ascii=False) uses
from typing import Any

from pytest_srbench.core.errors import InputError

_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
)


def canonical_json(value: Any) -> str:
    """Serialise with sorted keys, no spaces, UTF-8 kept, NaN and Infinity rejected."""
    return _CANONICAL.encode(value)  # one encoder for every call (json.dumps builds one per call)


class StrictJsonError(InputError):
    """A JSON document that parses but breaks the strict rules (duplicate keys, NaN)."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise StrictJsonError(f"duplicate key {key!r}")
        found[key] = value
    return found


def _no_constant(name: str) -> Any:
    raise StrictJsonError(f"{name} is not a JSON number")


# A \uD800-\uDFFF escape: half of a surrogate pair, or a lone surrogate.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _lone_surrogate(value: Any) -> str | None:
    """The first string in ``value`` (keys too) that holds a lone surrogate, else None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def json_loads_checked(text: str, **options: Any) -> Any:
    """``json.loads`` that raises ``StrictJsonError`` (a ``ValueError``) for what would
    otherwise fail later, without a place: nesting deeper than Python's recursion limit (a
    ``RecursionError``), and a ``\\uD800``-``\\uDFFF`` escape that is not half of a surrogate
    pair (a string that cannot be written as UTF-8)."""
    try:
        value = json.loads(text, **options)
    except RecursionError:
        raise StrictJsonError("nested too deeply (arrays or objects inside each other)") from None
    if _SURROGATE_ESCAPE.search(text):
        bad = _lone_surrogate(value)
        if bad is not None:
            code = next(ord(c) for c in bad if 0xD800 <= ord(c) <= 0xDFFF)
            raise StrictJsonError(
                f"a lone surrogate escape (\\u{code:04x}), not a Unicode character"
            )
    return value


def strict_json_loads(text: str) -> Any:
    """Parse JSON refusing duplicate keys, NaN / Infinity, nesting deeper than the recursion
    limit and lone surrogates (``json.JSONDecodeError`` for syntax, ``StrictJsonError`` for
    the strict rules; both are ``ValueError``)."""
    return json_loads_checked(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)


def digest(value: Any) -> str:
    """Lowercase hex SHA-256 of the canonical JSON of ``value``."""
    text = encode_basestring(value) if type(value) is str else canonical_json(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()  # a string: its escaped literal


def canonical_list_pieces(items: Iterable[Any]) -> Iterator[str]:
    """``canonical_json`` of a list, written one item at a time (the items are never all
    serialised, or held, at once)."""
    yield "["
    first = True
    for item in items:
        yield canonical_json(item) if first else "," + canonical_json(item)
        first = False
    yield "]"


# A value no plan holds: it marks where a spliced list goes in its mapping's canonical text.
_SPLICE = "\x00pytest-srbench: the spliced list goes here\x00"


def canonical_spliced_pieces(head: dict[str, Any], key: str, items: Iterable[Any]) -> Iterator[str]:
    """``canonical_json({**head, key: list(items)})``, written in pieces: ``head`` at once,
    the list one item at a time. For a large plan's cases, whose full dump (a dict per case)
    is several times the size of its text."""
    before, after = canonical_splice(head, key)
    yield before
    yield from canonical_list_pieces(items)
    yield after


def canonical_splice(head: dict[str, Any], key: str) -> tuple[str, str]:
    """The canonical text of ``{**head, key: <a list>}`` before and after the list's text."""
    text = canonical_json({**head, key: _SPLICE})
    before, marker, after = text.partition(encode_basestring(_SPLICE))
    if not marker or encode_basestring(_SPLICE) in after:  # pragma: no cover - see _SPLICE
        raise ValueError("the splice marker is part of the value")
    return before, after


SPLICED_LIST = "\x00pytest-srbench: the list written in batches goes here\x00"


def compact_spliced_pieces(
    document: Any, items: Iterable[Any], batch: int = 1000
) -> Iterator[bytes]:
    """``orjson.dumps`` of ``document`` with ``items`` as a list where it holds
    ``SPLICED_LIST``, the list dumped ``batch`` items at a time (a 10^5-entry list is never
    made whole). Raises ValueError, before anything is written, unless the marker is there
    exactly once (a JSON string holding it elsewhere: the caller dumps the plain way)."""
    import orjson  # (not at import: the plugin's entry point loads this module)

    parts = orjson.dumps(document).split(orjson.dumps(SPLICED_LIST))
    if len(parts) != 2:
        raise ValueError("the splice marker is not in the document exactly once")
    return _spliced(parts[0], items, batch, parts[1])


def _spliced(before: bytes, items: Iterable[Any], batch: int, after: bytes) -> Iterator[bytes]:
    import orjson

    yield before + b"["
    pending: list[Any] = []
    separator = b""
    for item in items:
        pending.append(item)
        if len(pending) == batch:
            yield separator + orjson.dumps(pending)[1:-1]
            separator = b","
            pending.clear()
    if pending:
        yield separator + orjson.dumps(pending)[1:-1]
    yield b"]" + after


def digest_pieces(pieces: Iterable[str]) -> str:
    """``digest`` of the canonical text given in pieces (as the functions above write it)."""
    hasher = hashlib.sha256()
    batch: list[str] = []
    for piece in pieces:
        batch.append(piece)
        if len(batch) == 1024:  # one update per batch: fewer calls, little held
            hasher.update("".join(batch).encode("utf-8"))
            batch.clear()
    hasher.update("".join(batch).encode("utf-8"))
    return hasher.hexdigest()


def sha256_bytes(data: bytes) -> str:
    """Lowercase hex SHA-256 of raw bytes (dataset files, SSE evidence)."""
    return hashlib.sha256(data).hexdigest()


def integralize(value: Any) -> Any:
    """Turn every float with an integral value (1.0, -0.0) into an int, recursively.

    Clients that serialise 1.0 as 1 must obtain the same plan hash, so the plan digest
    is taken over this form. Case and dataset digests keep the exact content.
    """
    kind = type(value)
    if kind is dict:  # the common containers first, leaves kept without a call per leaf
        return {
            key: item if type(item) in _LEAVES else integralize(item) for key, item in value.items()
        }
    if kind is list:
        return [item if type(item) in _LEAVES else integralize(item) for item in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        return value
    if isinstance(value, dict):
        return {key: integralize(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [integralize(item) for item in value]
    return value


_LEAVES = frozenset({str, int, bool, type(None)})  # exactly these types: nothing to change


def cell_digest(case_id: str, target_id: str) -> str:
    """Identity of one (case, target) cell; its first 24 hex name the cell's evidence folder."""
    return pair_digest(case_id, target_id)


def pair_digest(first: str | int, second: str) -> str:
    """``digest([first, second])`` for a string or an int and a string, written directly (the
    text ``canonical_json`` gives: an int's digits, a string escaped as it escapes one), for the
    per-case keys a large plan computes tens of thousands of times."""
    if type(first) is int:
        head = str(first)
    elif type(first) is str:
        head = encode_basestring(first)
    else:
        return digest([first, second])
    if type(second) is not str:
        return digest([first, second])
    text = f"[{head},{encode_basestring(second)}]"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
