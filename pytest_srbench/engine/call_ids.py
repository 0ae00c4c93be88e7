"""Call ids: ``call-`` and 32 hex digits, unique across processes and hosts, made without a
system call per call (each one would hand the interpreter lock to the pytest thread and wait
to get it back): a random 64-bit prefix per process, drawn again in a forked child, and a
counter."""

from __future__ import annotations

import itertools
import os


class _CallIds:
    def __init__(self) -> None:
        self.reseed()

    def reseed(self) -> None:
        self.prefix = "call-" + os.urandom(8).hex()
        self.counter = itertools.count()

    def next(self) -> str:
        return f"{self.prefix}{next(self.counter):016x}"


_IDS = _CallIds()
os.register_at_fork(after_in_child=_IDS.reseed)


def new_call_id() -> str:
    """A fresh call id (``call-`` + 32 lowercase hex digits)."""
    return _IDS.next()
