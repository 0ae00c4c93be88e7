"""This process's heap and Python's cyclic garbage collector: paused around work that makes
many small acyclic records (a plan, a report's rows, a recovery plan), and told to leave alone
what a session keeps to its end; the process's peak resident size.

Reference counting frees those records as soon as they are done; collections triggered by
their allocation would only walk them again. Every switch here is process-wide (the ``gc``
module's state), so it lives outside the pure core, and each one is undone where it was made.
"""

from __future__ import annotations

import atexit
import gc
import resource
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off inside the block, and as it was after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def freeze_heap() -> None:
    """Exempt every object alive now from the cyclic garbage collector's later passes.

    A session holds the plan, its cases and one item per cell until it ends; each full
    collection would walk all of them again (pytest collects twice while it unconfigures, a
    second or more at 20,000 cells), though none of them can become garbage before the end.
    Freezing them costs nothing; reference counting still frees whatever is released, and
    ``thaw_heap`` hands the objects back to the collector when the session's cleanup runs."""
    gc.freeze()


@contextmanager
def long_lived() -> Iterator[None]:
    """Build what lives to the session's end (the plan, its cases, one item per cell) without
    the cyclic collector running while it is made (none of it is garbage), then freeze it."""
    with gc_paused():
        try:
            yield
        finally:
            freeze_heap()


# The collector's thresholds while a run's cells are dispatched (CPython's default: 700, 10,
# 10). A young collection walks every tracked object made since the last one, and a run keeps
# some (pytest's reports, the cells' results, the calls in flight: 2,048 tasks with their
# coroutines and responses at C=2048), so the default's collections every 700 net
# allocations walked the same live objects again and again: at 20,000 cells, C=2048, 3,157
# collections took 6.6 s of the command's 27.8 s of CPU and found 13,349 objects to free.
# With these: 12 collections, 0.3 s (docs/performance.md). Garbage cycles are still
# collected, after more allocations; the thresholds are put back when the run ends.
RUN_THRESHOLDS = (50_000, 20, 10)


@contextmanager
def fewer_collections() -> Iterator[None]:
    """The cyclic collector's thresholds raised to ``RUN_THRESHOLDS`` inside the block (never
    lowered, nor automatic collection turned back on where a threshold of 0 turned it off),
    and as they were after it."""
    before = gc.get_threshold()
    if before[0] > 0:
        pairs = zip(RUN_THRESHOLDS, before, strict=False)  # (Python may add generations)
        gc.set_threshold(*(max(mine, theirs) for mine, theirs in pairs))
    try:
        yield
    finally:
        gc.set_threshold(*before)


def thaw_heap() -> None:
    """Undo ``freeze_heap`` when the session's cleanup runs (a program that runs pytest
    in-process keeps collecting what the session left), and freeze again at interpreter
    exit: the interpreter's last collection would otherwise walk the whole heap it is about
    to hand back to the operating system (6 s at 20,000 cells; cycles left then are not
    finalized, as for any object the interpreter does not free at exit)."""
    gc.unfreeze()
    if not _REFREEZE_AT_EXIT:
        _REFREEZE_AT_EXIT.append(atexit.register(freeze_heap))


_REFREEZE_AT_EXIT: list[object] = []  # registered once per process


def peak_rss_mb() -> float:
    """This process's peak resident set size (Linux reports KiB, macOS bytes)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)
