"""Run lifecycle outside a live engine: which process owns a run, the restart sweep that marks
orphaned runs ``interrupted`` (after settling what they left in flight: ``settle.py``), and
cancellation requests from another process (run-lifecycle.md §6, §7.6).

It loads no report machinery: every controller, CLI command and the service sweeps the store
when it opens it. Ending a run with its report is ``run_end.py``.
"""

from __future__ import annotations

import os
from typing import Any

from pytest_srbench.app.settle import OWNER_STOPPED, settle_in_flight
from pytest_srbench.app.shards import sweep_shards
from pytest_srbench.core.models import TERMINAL_RUN_STATUSES, Run
from pytest_srbench.store.base import Store
from pytest_srbench.store.liveness import same_process, this_process
from pytest_srbench.store.opening import open_store


def sweep_orphans(store: Store) -> list[Run]:
    """Mark every queued or running run whose owning process is gone (on this host by its
    PID; on another, for a PostgreSQL store, by its expired lease)
    ``interrupted`` (after settling what it left in flight); returns those runs. The run's
    wall time ends at its last recorded activity, not when the sweep found it.

    A queued run that no process ever took (created by ``srbench recover``) is left waiting;
    a run owned on another host is left alone (its liveness cannot be checked here).
    """
    interrupted = []
    for run in store.active_runs():
        shards = store.shards(run.id)
        if shards:
            swept = sweep_shards(store, run, shards)
            if swept is not None:
                interrupted.append(swept)
            continue
        owner = store.owner(run.id)
        if owner is None:
            if run.status == "queued":
                continue
            where = "no owner recorded"
        elif store.owner_alive(owner) is not False:
            continue
        else:
            where = f"pid {owner['pid']} on {owner['host']}"
        ran_until = store.last_activity_at(run.id)  # before settling adds its own stamps
        settle_in_flight(store, run.id)
        interrupted.append(
            store.set_run_status(
                run.id, "interrupted", OWNER_STOPPED.format(where=where), ended_at=ran_until
            )
        )
    return interrupted


def open_swept_store(
    location: str | os.PathLike[str], local_dir: str | os.PathLike[str] | None = None
) -> tuple[Store, list[Run]]:
    """Open a store and sweep it (what every controller, CLI command and service does); a
    store this process cannot write is opened read-only and not swept."""
    store = open_store(location, local_dir=local_dir)
    if store.read_only:
        return store, []
    return store, sweep_orphans(store)


def request_cancel(store: Store, run_id: str, *, source: str = "cli") -> Run:
    """Ask the processes running ``run_id`` to stop; a terminal run is returned unchanged.

    The engines poll for the request, stop dispatching, abort in-flight streams and end the
    run ``cancelled``. A run whose owner is already gone is interrupted by the sweep instead.
    """
    run = store.require_run(run_id)
    if run.status in TERMINAL_RUN_STATUSES:
        return run
    with store.transaction():
        if not store.cancellation_requested(run_id):
            store.append_event(run_id, "cancellation_requested", {"source": source})
    owner = store.owner(run_id)
    if owner is not None and store.owner_alive(owner) is False:
        sweep_orphans(store)
    elif owner is None and run.status == "queued":
        return store.set_run_status(run_id, "cancelled", "cancelled before it started")
    return store.require_run(run_id)


def claim_ownership(store: Store, run_id: str, owner: dict[str, Any] | None = None) -> bool:
    """Take a queued run for ``owner`` (default: this process) unless a live process holds
    it; True when ``owner`` holds it afterwards (xdist workers claim for their controller)."""
    owner = owner or this_process()
    with store.transaction():
        run = store.require_run(run_id)
        current = store.owner(run_id)
        if current is not None and same_process(current, owner):
            return run.status in ("queued", "running")
        if run.status != "queued":
            return False
        if current is not None and store.owner_alive(current) is not False:
            return False
        store.set_owner(run_id, owner)
    return True
