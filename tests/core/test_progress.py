"""Counting cells by status: one rule for every view of a run's progress."""

from __future__ import annotations

from pytest_srbench.core.progress import cell_progress


def test_every_ended_status_counts_as_failed_and_pending_is_the_rest():
    counts = {"completed": 3, "failed": 1, "cancelled": 2, "sent_unknown": 1, "running": 2}
    cells = cell_progress(counts, planned=12)
    assert (cells.completed, cells.failed, cells.running) == (3, 4, 2)
    assert cells.done == 7 and cells.pending == 3 and not cells.all_completed


def test_no_rows_yet_means_everything_is_pending():
    cells = cell_progress({}, planned=5)
    assert cells.done == 0 and cells.pending == 5 and cells.failed == 0


def test_all_completed_needs_every_planned_cell():
    assert cell_progress({"completed": 4}, planned=4).all_completed
    assert not cell_progress({"completed": 4}, planned=5).all_completed


def test_pending_never_goes_negative_when_rows_outnumber_the_plan():
    assert cell_progress({"completed": 6}, planned=4).pending == 0
