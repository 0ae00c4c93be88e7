"""The two facts pytest-srbench reads from a GGUF model file's header: its architecture
(``general.architecture``) and the context length it was trained with
(``<architecture>.context_length``).

llama-server caps every slot at the trained context; serving past it on purpose (a target's
configured ``context``) overrides that key (``--override-kv``), which needs the architecture's
name. The header is read sequentially: magic ``GGUF``, version, tensor and key counts, then
key/value pairs (little-endian; strings are a u64 length and UTF-8 bytes; arrays a u32 item
type, a u64 count and the items), stopping as soon as both facts are known.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import IO, Any

# value type -> struct format of one scalar (8 = string, 9 = array are read apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}  # fmt: skip
STRING, ARRAY = 8, 9
MAX_KEYS = 100_000


class GgufError(ValueError):
    """The file is not a GGUF model this reader understands."""


def _read(handle: IO[bytes], size: int) -> bytes:
    data = handle.read(size)
    if len(data) != size:
        raise GgufError("the GGUF header ends early")
    return data


def _unpack(handle: IO[bytes], fmt: str) -> Any:
    return struct.unpack(fmt, _read(handle, struct.calcsize(fmt)))[0]


def _string(handle: IO[bytes]) -> str:
    return _read(handle, _unpack(handle, "<Q")).decode("utf-8", "replace")


def _value(handle: IO[bytes], kind: int, keep: bool) -> Any:
    """One value; skipped (None) unless ``keep`` (arrays are always skipped)."""
    if kind == STRING:
        return _string(handle)
    if kind == ARRAY:
        item, count = _unpack(handle, "<I"), _unpack(handle, "<Q")
        if item in _SCALARS:
            handle.seek(struct.calcsize(_SCALARS[item]) * count, 1)
        else:
            for _ in range(count):
                _value(handle, item, False)
        return None
    if kind not in _SCALARS:
        raise GgufError(f"unknown GGUF value type {kind}")
    value = _unpack(handle, _SCALARS[kind])
    return value if keep else None


def model_facts(path: Path) -> tuple[str | None, int | None]:
    """(architecture, trained context length) of a GGUF file; None for what it lacks."""
    with open(path, "rb") as handle:
        if _read(handle, 4) != b"GGUF":
            raise GgufError(f"{path} is not a GGUF file")
        version = _unpack(handle, "<I")
        if version < 2:
            raise GgufError(f"{path}: GGUF version {version} is not supported")
        _unpack(handle, "<Q")  # tensors
        keys = _unpack(handle, "<Q")
        architecture: str | None = None
        lengths: dict[str, int] = {}
        for _ in range(min(keys, MAX_KEYS)):
            key = _string(handle)
            kind = _unpack(handle, "<I")
            value = _value(handle, kind, keep=True)
            if key == "general.architecture" and isinstance(value, str):
                architecture = value
            elif key.endswith(".context_length") and isinstance(value, int):
                lengths[key.removesuffix(".context_length")] = value
            if architecture is not None and architecture in lengths:
                break
    return architecture, lengths.get(architecture or "")
