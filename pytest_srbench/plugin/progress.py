"""Run progress while cells are in flight: done / in flight / failed, spend and elapsed time.

On a terminal the status is drawn in place at the end of pytest's progress line while the
session waits for a cell, and erased before the next result character is printed; in a
non-interactive log it becomes a plain line at most every ``LOG_INTERVAL_S`` seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from pytest_srbench.core.progress import cell_progress
from pytest_srbench.store.base import Store

LIVE_INTERVAL_S = 1.0
LOG_INTERVAL_S = 30.0


@dataclass(frozen=True)
class Status:
    planned: int
    done: int
    failed: int
    in_flight: int
    spend_usd: float
    elapsed_s: float

    def text(self) -> str:
        minutes, seconds = divmod(int(self.elapsed_s), 60)
        return (
            f"srbench {self.done}/{self.planned} cells done · {self.in_flight} in flight · "
            f"{self.failed} failed · ${self.spend_usd:.4f} known spend · {minutes}m{seconds:02d}s"
        )


def read_status(store: Store, run_id: str, planned: int, started: float) -> Status:
    """Counts from the store (works for every process of a distributed run)."""
    counts = store.progress_counts(run_id)
    cells = cell_progress(counts.statuses, planned)
    return Status(
        planned,
        cells.done,
        cells.failed,
        counts.in_flight,
        counts.spend_usd,
        time.monotonic() - started,
    )


class ProgressDisplay:
    """Draws the status on the terminal (in place) or as periodic log lines."""

    def __init__(self, terminal: Any, *, interactive: bool) -> None:
        self.terminal = terminal
        self.interactive = interactive
        self.shown = ""
        self.last = time.monotonic()

    def due(self) -> bool:
        return self.due_in() <= 0

    def due_in(self) -> float:
        """Seconds until the next line is due (<= 0: now)."""
        interval = LIVE_INTERVAL_S if self.interactive else LOG_INTERVAL_S
        return self.last + interval - time.monotonic()

    def show(self, status: Status) -> None:
        self.last = time.monotonic()
        text = status.text()
        if not self.interactive:
            self.terminal.ensure_newline()
            self.terminal.write_line(text)
            return
        writer = self.terminal._tw
        room = writer.fullwidth - writer.width_of_current_line - 3
        if room < 20:
            return
        self.clear()
        shown = f"  {text}"[:room]
        writer._file.write(shown)
        writer._file.flush()
        self.shown = shown

    def clear(self) -> None:
        """Erase an in-place status before pytest writes again."""
        if self.shown:
            writer = self.terminal._tw
            width = len(self.shown)
            writer._file.write("\b" * width + " " * width + "\b" * width)
            writer._file.flush()
            self.shown = ""
