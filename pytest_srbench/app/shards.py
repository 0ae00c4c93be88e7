"""Runs sharded across invocations: which process owns each shard of a run, which shard
finishes last (and so finalizes the run, ``run_end.py``) and what a dead shard leaves behind.

Every shard of a run owns a deterministic share of its frozen plan (``core/shards.py``). A
shard's row records its owner (host, pid, process start) and state:

- ``running``: its owner dispatches its share; a second claim is refused while that owner
  lives; a dead owner's shard may be claimed again (it runs only its cells without results);
- ``finalizing``: it finished last and is writing the run's report;
- ``finished`` / ``interrupted``: it ended (an ``interrupted`` shard died, or was stopped).

The decision "this shard is the last" is taken in one store transaction, so exactly one shard
finalizes the run. A dead shard's in-flight calls settle ``sent_unknown`` like any stopped
process's; the run then ends ``interrupted`` and its missing cells are recoverable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_srbench.app.settle import OWNER_STOPPED, WORKER_STOPPED, settle_in_flight
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import Manifest, Run
from pytest_srbench.core.shards import ShardSpec, shard_share
from pytest_srbench.store.base import Row, Store, now_iso

ENDED = ("finished", "interrupted")


class ShardRefused(InputError):
    """A shard cannot be claimed or a sharded run cannot be finalized (the message says why)."""


@dataclass(frozen=True)
class ShardClaim:
    """What a shard's owner dispatches: ``to_run`` (its share without the cells that already
    have results, for a shard claimed again after its owner died)."""

    run_id: str
    spec: ShardSpec
    share: list[tuple[str, str]]
    to_run: list[tuple[str, str]]
    attempt: int


@dataclass(frozen=True)
class ShardEnd:
    """How a shard ended: whether it is the run's last (it finalizes), the shards lost."""

    mine: bool
    last: bool = False
    lost: list[str] = field(default_factory=list)
    ran: int = 0


def share_of(manifest: Manifest, spec: ShardSpec) -> list[tuple[str, str]]:
    """``spec``'s share of a frozen plan."""
    benchmarks = {case.id: case.benchmark for case in manifest.cases}
    return shard_share(manifest.planned_keys(), benchmarks, spec)


def _label(row: Row) -> str:
    return f"{row['shard']}/{row['shards']}"


def _where(row: Row) -> str:
    return f"pid {row['pid']} on {row['host']}"


def _same_owner(row: Row, owner: dict[str, Any]) -> bool:
    return (row["host"], int(row["pid"]), row.get("process_started")) == (
        owner["host"],
        int(owner["pid"]),
        owner.get("process_started"),
    )


def _dead(store: Store, row: Row) -> bool:
    """A shard whose owner still holds it (running or finalizing) but is gone (by its PID on
    this host; on another host by its lease, where the store keeps leases)."""
    return row["state"] not in ENDED and store.owner_alive(row) is False


def _interrupt(store: Store, run_id: str, row: Row, manifest: Manifest | None) -> Manifest:
    """Settle a dead shard's in-flight calls and cells ``sent_unknown``; mark it interrupted
    (inside the caller's transaction). Returns the plan (read once per caller)."""
    manifest = manifest or store.get_manifest(run_id)
    spec = ShardSpec(int(row["shard"]), int(row["shards"]))
    settle_in_flight(store, run_id, set(share_of(manifest, spec)))
    row.update(
        state="interrupted", ended_at=now_iso(), error=OWNER_STOPPED.format(where=_where(row))
    )
    store.save_shard(run_id, row)
    return manifest


def claim_shard(
    store: Store, run_id: str, spec: ShardSpec, owner: dict[str, Any], manifest: Manifest
) -> ShardClaim:
    """Take shard ``spec`` of ``run_id`` for ``owner`` (xdist workers claim for their
    controller: a second claim by the same owner returns the first). Refused while another
    live process holds it, once it finished, for a run split into another number of shards,
    and for a run that has ended."""
    share = share_of(manifest, spec)
    with store.transaction():
        run = store.require_run(run_id)
        rows = {int(row["shard"]): row for row in store.shards(run_id)}
        counts = {int(row["shards"]) for row in rows.values()} - {spec.count}
        if counts:
            raise ShardRefused(
                f"run {run_id} is split into {counts.pop()} shards, not {spec.count}: give every "
                "shard the same N in --srbench-shard K/N"
            )
        row = rows.get(spec.index)
        if row is not None and _same_owner(row, owner) and row["state"] == "running":
            done = {tuple(cell) for cell in row.get("done_before") or []}
            to_run = [cell for cell in share if cell not in done]
            return ShardClaim(run_id, spec, share, to_run, int(row.get("attempt") or 1))
        if run.status not in ("queued", "running"):
            raise ShardRefused(
                f"run {run_id} already ended {run.status}; shard {spec.label} cannot join it "
                f"(srbench recover-plan {run_id} lists the cells it is missing)"
            )
        if not rows and run.status != "queued":  # started whole, by an unsharded invocation
            raise ShardRefused(
                f"run {run_id} (run key {run.request_key!r}) is running unsharded; shard "
                f"{spec.label} cannot join it: give the shards a run key of their own"
            )
        attempt = 1
        done_before: list[tuple[str, str]] = []
        if row is not None:
            if row["state"] == "finished":
                raise ShardRefused(
                    f"shard {spec.label} of run {run_id} already finished "
                    f"({row.get('ran', 0)} cells); nothing is left for it to run"
                )
            if row["state"] not in ENDED:
                if store.owner_alive(row) is not False:
                    raise ShardRefused(
                        f"shard {spec.label} of run {run_id} is held by a live process "
                        f"({_where(row)}); wait for it, or stop it first"
                    )
                _interrupt(store, run_id, row, manifest)
            statuses = store.result_statuses(run_id)
            done_before = [cell for cell in share if cell in statuses]
            attempt = int(row.get("attempt") or 1) + 1
        to_run = [cell for cell in share if cell not in set(done_before)]
        store.save_shard(
            run_id,
            {
                "shard": spec.index,
                "shards": spec.count,
                "state": "running",
                "host": owner["host"],
                "pid": owner["pid"],
                "process_started": owner.get("process_started"),
                "started_at": now_iso(),
                "ended_at": None,
                "cells": len(share),
                "ran": len(to_run),
                "attempt": attempt,
                "done_before": done_before,
            },
        )
    return ShardClaim(run_id, spec, share, to_run, attempt)


def finish_shard(
    store: Store, run_id: str, spec: ShardSpec, owner: dict[str, Any], *, interrupted: bool
) -> ShardEnd:
    """End ``owner``'s shard (``finished``, or ``interrupted`` when it was stopped) and decide,
    in the same transaction, whether it is the run's last: every shard has a row and no other
    is held by a live process (a dead one is settled and marked interrupted here). The last
    one is left ``finalizing`` until ``finalized`` is called."""
    with store.transaction():
        rows = store.shards(run_id)
        mine = next((row for row in rows if int(row["shard"]) == spec.index), None)
        if mine is None or not _same_owner(mine, owner) or mine["state"] != "running":
            return ShardEnd(mine=False)
        mine.update(state="interrupted" if interrupted else "finished", ended_at=now_iso())
        manifest = None
        for row in rows:
            if row is not mine and _dead(store, row):
                manifest = _interrupt(store, run_id, row, manifest)
        live = [row for row in rows if row is not mine and row["state"] not in ENDED]
        run = store.require_run(run_id)
        last = not live and len(rows) == spec.count and run.status in ("queued", "running")
        if last and not interrupted:
            mine["state"] = "finalizing"
        store.save_shard(run_id, mine)
        lost = [f"shard {_label(row)}" for row in rows if row["state"] == "interrupted"]
    return ShardEnd(mine=True, last=last, lost=lost, ran=int(mine.get("ran") or 0))


def finalized(store: Store, run_id: str, spec: ShardSpec) -> None:
    """The last shard wrote the run's report: it is ``finished`` too."""
    with store.transaction():
        for row in store.shards(run_id):
            if int(row["shard"]) == spec.index and row["state"] == "finalizing":
                row.update(state="finished", ended_at=now_iso())
                store.save_shard(run_id, row)


def sweep_shards(store: Store, run: Run, rows: Sequence[Row]) -> Run | None:
    """The restart sweep of a sharded run: each dead shard's share is settled and the shard
    marked interrupted; the run itself is marked interrupted only when every shard has a row
    and none is held by a live process (a shard not started yet may still come: the run waits
    for it or for ``srbench finalize``). Returns the run when it was marked."""
    manifest = None
    with store.transaction():
        for row in store.shards(run.id):
            if _dead(store, row):
                manifest = _interrupt(store, run.id, row, manifest)
        rows = store.shards(run.id)
        if len(rows) < int(rows[0]["shards"]) or any(row["state"] not in ENDED for row in rows):
            return None
        ran_until = store.last_activity_at(run.id)
        lost = [f"shard {_label(row)}" for row in rows if row["state"] == "interrupted"]
        error = (
            f"{WORKER_STOPPED} (lost: {', '.join(lost)})"
            if lost
            else OWNER_STOPPED.format(where="no shard finalized the run")
        )
        return store.set_run_status(run.id, "interrupted", error, ended_at=ran_until)


def close_shards(store: Store, run_id: str) -> list[str]:
    """Before ``srbench finalize RUN`` ends a sharded run: settle its dead shards and name every
    shard lost (interrupted, or never started); refused, naming them, while any shard is held
    by a live process, and for a run that is not sharded."""
    with store.transaction():
        rows = store.shards(run_id)
        if not rows:
            store.require_run(run_id)
            raise ShardRefused(
                f"run {run_id} is not sharded: the process that ran it wrote its report "
                f"(srbench report {run_id} writes it again)"
            )
        manifest = None
        for row in rows:
            if _dead(store, row):
                manifest = _interrupt(store, run_id, row, manifest)
        live = [row for row in rows if row["state"] not in ENDED]
        if live:
            names = ", ".join(f"shard {_label(row)} ({_where(row)})" for row in live)
            raise ShardRefused(
                f"run {run_id} still has live shards: {names}; the last of them finalizes the "
                "run when it ends"
            )
    count = int(rows[0]["shards"])
    present = {int(row["shard"]) for row in rows}
    lost = [f"shard {_label(row)}" for row in rows if row["state"] == "interrupted"]
    lost += [f"shard {k}/{count} (never started)" for k in range(1, count + 1) if k not in present]
    return lost


def shard_provenance(rows: Sequence[Row]) -> list[dict[str, Any]] | None:
    """The report's ``provenance.shards`` (None for a run that is not sharded)."""
    if not rows:
        return None
    keys = ("host", "pid", "cells", "ran", "attempt", "started_at", "ended_at")
    return [
        {
            "shard": _label(row),
            # the shard writing the report has finished its cells
            "state": "finished" if row["state"] == "finalizing" else row["state"],
            **{key: row.get(key) for key in keys},
        }
        for row in rows
    ]
