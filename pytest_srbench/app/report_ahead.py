"""A run's report begun before its last cells end: the cells this process saw end (their
result rows committed) are read back and fed to the report's cell pass in planned order, a
slice at a time, while the process would otherwise wait for the next outcome; the report
then reads only the cells after them (``report_from_store(ahead=...)``).

A cell counts once it is final: it ended in this process with its result row committed, and
every cell planned before it has been fed too. What could still change a fed cell sends the
report back to a full read: a run with anything settled at its end (calls or cells left in
flight), an accounting correction, a plan other than the one the pass was started with, or
a failed read or pass (which the full read then meets again, with its own error).

The process's waits are the report's only while it has CPU to spare: where the engine keeps
one core busy (answers that come at once), every step would be taken from the run, and the
report is left to the end (``SpareCpu``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from itertools import islice
from typing import Any

from pytest_srbench.app.heap import gc_paused
from pytest_srbench.core.models import Manifest
from pytest_srbench.core.report.build import CellPass, start_cell_pass
from pytest_srbench.render.cells_file import CellsFile
from pytest_srbench.store.base import Store

SLICE = 256  # cells read and fed per step at most (a few milliseconds)
BATCH = 64  # cells ready before a step reads any: one read per few dozen cells, not per cell


class SpareCpu:
    """Whether this process left CPU to spare over its last ``window`` seconds: it used less
    than ``most`` of one core (its threads share one interpreter lock, so a process that uses
    a whole core has none to give). Unknown until a first window has passed: no."""

    def __init__(
        self,
        *,
        window: float = 0.25,
        most: float = 0.6,
        wall: Callable[[], float] = time.monotonic,
        cpu: Callable[[], float] = time.process_time,
    ) -> None:
        self.window = window
        self.most = most
        self._wall, self._cpu = wall, cpu
        self._since, self._used = wall(), cpu()
        self._spare = False

    def __call__(self) -> bool:
        now = self._wall()
        if now - self._since >= self.window:
            used = self._cpu()
            self._spare = (used - self._used) < self.most * (now - self._since)
            self._since, self._used = now, used
        return self._spare


def always() -> bool:
    return True


class ReportAhead:
    """The report of run ``run_id`` begun early, for the one process that runs all of its
    cells and then builds its report (not a worker of a distributed run, not a shard)."""

    def __init__(
        self, store: Store, run_id: str, manifest: Manifest, spare: Callable[[], bool] = always
    ) -> None:
        self.store = store
        self.spare = spare  # whether a step may take CPU now (``SpareCpu`` in a session)
        self.run_id = run_id
        self.manifest = manifest
        self.fed = 0  # planned cells fed so far (the first ones, in planned order)
        self._pass: CellPass | None = start_cell_pass(manifest, cell_sink=CellsFile())
        # the plan walked twice: up to the first cell that has not ended, and up to the first
        # cell not yet fed (the cells between are ready, counted, never held)
        self._ahead: Iterator[tuple[str, str]] = manifest.iter_planned_keys()
        self._next: tuple[str, str] | None = next(self._ahead, None)
        self._behind: Iterator[tuple[str, str]] = manifest.iter_planned_keys()
        self._ready = 0
        self._ended: set[tuple[str, str]] = set()  # ended out of planned order, not yet ready

    @property
    def usable(self) -> bool:
        return self._pass is not None

    def ended(self, cell: tuple[str, str]) -> None:
        """Cell ``cell`` ended in this process and its result row is committed."""
        if self._pass is None:
            return
        if cell != self._next:
            self._ended.add(cell)
            return
        ended = self._ended
        self._ready += 1
        self._next = next(self._ahead, None)
        while self._next is not None and self._next in ended:
            ended.discard(self._next)
            self._ready += 1
            self._next = next(self._ahead, None)

    def step(self, limit: int = SLICE, least: int = BATCH) -> int:
        """Feed the next cells in planned order that have ended, up to ``limit`` of them, once
        at least ``least`` are ready (or the plan's last cell has ended) and the process has
        CPU to spare; how many were fed (0 also when the pass was given up)."""
        cell_pass = self._pass
        ready = self._ready
        if cell_pass is None or not ready or (ready < least and self._next is not None):
            return 0
        if not self.spare():
            return 0
        keys = list(islice(self._behind, min(ready, limit)))
        self._ready -= len(keys)
        try:
            with gc_paused():  # as the report is built: its rows are freed by counting
                cell_pass.feed(self.store.cell_rows(self.run_id, keys, outside=False))
        except Exception:  # the report's full read meets it again and says what it is
            self.give_up()
            return 0
        self.fed += len(keys)
        return len(keys)

    def give_up(self) -> None:
        """The report is built from every cell's rows after all."""
        self._pass = None
        self._ended.clear()

    def take(self, manifest: Manifest, correction: Mapping[str, Any] | None) -> CellPass | None:
        """The pass, fed the plan's first ``fed`` cells, for the report of ``manifest`` read
        through ``correction``; None when the report must read every cell (see the module's
        docstring). Taken once."""
        cell_pass, self._pass = self._pass, None
        self._ended.clear()
        if cell_pass is None or manifest is not self.manifest or correction is not None:
            return None
        return cell_pass
