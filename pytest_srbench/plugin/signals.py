"""SIGTERM (what ``timeout``, Docker and Kubernetes send) ends a srbench run like Ctrl-C.

The session plugin installs the handler when its session starts (main thread only) and
puts the previous handler back at unconfigure, so a process that is not running a srbench
session keeps its own signal handling.

Ctrl-C is Python's own ``KeyboardInterrupt``. On Python 3.11 it can land on an instruction
without a line number (``tb_lineno`` is None); pytest's terminal reporter then fails while
describing it (a ``TypeError`` in ``pytest_keyboard_interrupt``), the session never learns it
was interrupted, and a cancelled run ended ``failed``. :func:`describable` drops such entries
from the interrupt's traceback before pytest describes it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from pytest_srbench.core.models import TERMINAL_RUN_STATUSES
from pytest_srbench.store.opening import open_store

TERMINATING = (signal.SIGTERM,)


def has_line_number(entry: Any) -> bool:
    """Whether a traceback entry can say its line (pytest's ``TracebackEntry.lineno`` raises
    ``TypeError`` for an instruction without one)."""
    try:
        entry.lineno  # noqa: B018 (the property is the check)
    except TypeError:
        return False
    return True


def describable(excinfo: Any) -> None:
    """Drop the entries without a line number from ``excinfo``'s traceback (a
    ``pytest.ExceptionInfo``), so that pytest can describe the interrupt."""
    excinfo.traceback = excinfo.traceback.filter(has_line_number)


Handler = Callable[[int, FrameType | None], Any]


class SignalHandlers:
    """Install one handler for the terminating signals and restore the previous ones."""

    def __init__(self) -> None:
        self._previous: dict[int, Any] = {}

    @property
    def installed(self) -> bool:
        return bool(self._previous)

    def install(self, handler: Handler) -> bool:
        """Install ``handler`` (only possible on the main thread); True when installed."""
        if self._previous or threading.current_thread() is not threading.main_thread():
            return False
        for signum in TERMINATING:
            self._previous[signum] = signal.signal(signum, handler)
        return True

    def restore(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
        self._previous.clear()


def request_cancellation(
    store_path: str | Path, run_id: str, run_key: str | None, signal_name: str
) -> None:
    """Record a cancellation request for ``run_id`` and the run bound to ``run_key`` (as
    ``srbench cancel`` does), so that every engine of the run stops within its polling
    interval. Opens its own connection: it runs on a helper thread, never inside the signal
    handler, which may have interrupted a transaction. A run that does not exist yet gets the
    request too, and its engines see it when they start; a run that already ended is left
    alone."""
    store = open_store(store_path)
    try:
        run_ids = [run_id]
        bound = store.find_run_by_key(run_key) if run_key else None
        if bound is not None:
            run_ids.append(bound.id)
        with store.transaction():
            for each in dict.fromkeys(run_ids):
                run = store.get_run(each)
                if run is not None and run.status in TERMINAL_RUN_STATUSES:
                    continue
                if not store.cancellation_requested(each):
                    store.append_event(
                        each,
                        "cancellation_requested",
                        {"source": "signal", "signal": signal_name},
                    )
    finally:
        store.close()
