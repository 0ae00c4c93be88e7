"""Counting a run's cells by status: the one rule behind the live status line, the service's
RUN objects and the final run status.

A cell is ``completed``, ended otherwise (``failed``, ``cancelled``, ``sent_unknown``: all
count as wrong), ``running``, or pending (planned, no row yet).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_srbench.core.models import FAILED_CELL_STATUSES


@dataclass(frozen=True)
class CellProgress:
    """How far the cells of a run have come."""

    planned: int
    completed: int
    failed: int
    running: int

    @property
    def done(self) -> int:
        """Cells with a final row (completed or ended otherwise)."""
        return self.completed + self.failed

    @property
    def pending(self) -> int:
        """Planned cells with no row yet."""
        return max(0, self.planned - self.done - self.running)

    @property
    def all_completed(self) -> bool:
        return self.completed == self.planned


def cell_progress(status_counts: Mapping[str, int], planned: int) -> CellProgress:
    """Progress from the number of result rows per status."""
    return CellProgress(
        planned=planned,
        completed=status_counts.get("completed", 0),
        failed=sum(n for status, n in status_counts.items() if status in FAILED_CELL_STATUSES),
        running=status_counts.get("running", 0),
    )
