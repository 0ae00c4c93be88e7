"""Pausing Python's cyclic garbage collector around work that makes many small acyclic
records (a plan, a report's rows, a recovery plan): reference counting frees them as soon as
they are done, and collections triggered by their allocation would only walk them again."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off inside the block, and as it was after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
