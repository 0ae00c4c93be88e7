"""Raw response evidence: one append-only pack file per process and run, addressed by
``{pack, offset, length}`` locators stored on the call rows."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from pytest_srbench.store.base import StoreError


class _Pack:
    """One open pack: its handle, its name relative to the store root and where the next
    bytes go (this process is the pack's only writer, so its size is known without asking)."""

    def __init__(self, handle: BinaryIO, name: str) -> None:
        self.handle = handle
        self.name = name
        self.offset = os.fstat(handle.fileno()).st_size

    def write(self, data: bytes) -> None:
        """Write all of ``data`` at the end; on a failure, learn the true size again."""
        try:
            view = memoryview(data)
            while view:
                view = view[self.handle.write(view) or 0 :]
        except BaseException:
            self.offset = os.fstat(self.handle.fileno()).st_size
            raise
        self.offset += len(data)


def _close_all(descriptors: dict[str, int]) -> None:
    for fd in descriptors.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    descriptors.clear()


class EvidencePacks:
    """Append-only evidence packs under a store root (xdist workers never share a file)."""

    READERS = 64  # packs kept open for reading (past this, the least recently read closes)

    def __init__(self, root: Path) -> None:
        self.root = root
        self._packs: dict[Path, _Pack] = {}
        self._readers: dict[str, int] = {}  # pack name -> a read-only descriptor (pread)
        self._readers_lock = threading.Lock()
        # descriptors are not closed by the garbage collector: a store dropped unclosed
        # closes them when it goes
        weakref.finalize(self, _close_all, self._readers)

    def _pack(self, run_dir: Path) -> _Pack:
        pack = self._packs.get(run_dir)
        if pack is None:
            folder = run_dir / "evidence"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{socket.gethostname()}-{os.getpid()}.sse"
            handle = open(path, "ab", buffering=0)  # noqa: SIM115 - kept open for appends
            pack = self._packs[run_dir] = _Pack(handle, str(path.relative_to(self.root)))
        return pack

    def append(self, run_dir: Path, data: bytes) -> dict[str, Any]:
        """Append bytes to this process's pack for ``run_dir``; the bytes reach the OS before
        the call row that points at them commits."""
        return self.append_many(run_dir, [data])[0]

    def append_many(self, run_dir: Path, blobs: Sequence[bytes]) -> list[dict[str, Any]]:
        """Append several calls' bytes with one write; one locator per blob, in order."""
        pack = self._pack(run_dir)
        offset = pack.offset
        locators = []
        for data in blobs:
            locators.append({"pack": pack.name, "offset": offset, "length": len(data)})
            offset += len(data)
        pack.write(blobs[0] if len(blobs) == 1 else b"".join(blobs))
        return locators

    def read(self, locator: Any) -> bytes:
        """The exact bytes of a locator (a pack slice, or a legacy single file path)."""
        if isinstance(locator, dict):
            name, offset, length = (
                str(locator["pack"]),
                int(locator["offset"]),
                int(locator["length"]),
            )
            data = os.pread(self._reader(name), length, offset)
            if len(data) != length:  # the file replaced since it was opened: open it afresh
                data = os.pread(self._reader(name, again=True), length, offset)
            if len(data) != length:
                raise StoreError("evidence pack is shorter than its locator says")
            return data
        if isinstance(locator, str):
            return (self.root / locator).read_bytes()
        raise StoreError("the call has no evidence locator")

    def _reader(self, name: str, *, again: bool = False) -> int:
        """A read-only descriptor of the pack ``name``, opened once (a cached run reads one
        slice per cell; ``pread`` leaves no shared offset between threads)."""
        with self._readers_lock:
            fd = self._readers.pop(name, None)
            if fd is not None and again:
                os.close(fd)
                fd = None
            if fd is None:
                fd = os.open(self.root / name, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                while len(self._readers) >= self.READERS:
                    os.close(self._readers.pop(next(iter(self._readers))))
            self._readers[name] = fd  # (re)inserted last: the most recently used
            return fd

    def close(self) -> None:
        for pack in self._packs.values():
            pack.handle.close()
        self._packs.clear()
        with self._readers_lock:
            _close_all(self._readers)
