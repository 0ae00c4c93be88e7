"""Raw response evidence: one append-only pack file per process and run, addressed by
``{pack, offset, length}`` locators stored on the call rows."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any, BinaryIO

from pytest_srbench.store.base import StoreError


class EvidencePacks:
    """Append-only evidence packs under a store root (xdist workers never share a file)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._handles: dict[Path, BinaryIO] = {}

    def append(self, run_dir: Path, data: bytes) -> dict[str, Any]:
        """Append bytes to this process's pack for ``run_dir``; the bytes reach the OS before
        the call row that points at them commits."""
        handle = self._handles.get(run_dir)
        if handle is None:
            folder = run_dir / "evidence"
            folder.mkdir(parents=True, exist_ok=True)
            name = f"{socket.gethostname()}-{os.getpid()}.sse"
            handle = open(folder / name, "ab", buffering=0)  # noqa: SIM115 - kept open for appends
            self._handles[run_dir] = handle
        offset = handle.tell()
        handle.write(data)
        return {
            "pack": str(Path(handle.name).relative_to(self.root)),
            "offset": offset,
            "length": len(data),
        }

    def read(self, locator: Any) -> bytes:
        """The exact bytes of a locator (a pack slice, or a legacy single file path)."""
        if isinstance(locator, dict):
            with open(self.root / locator["pack"], "rb") as handle:
                handle.seek(int(locator["offset"]))
                data = handle.read(int(locator["length"]))
            if len(data) != int(locator["length"]):
                raise StoreError("evidence pack is shorter than its locator says")
            return data
        if isinstance(locator, str):
            return (self.root / locator).read_bytes()
        raise StoreError("the call has no evidence locator")

    def close(self) -> None:
        for handle in self._handles.values():
            handle.close()
        self._handles.clear()
