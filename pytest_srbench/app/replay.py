"""Offline replay against a store (run-lifecycle.md §11.2): review a (live baseline, preview)
pair, list the previews a baseline can be replayed with, and create the replay run through the
normal idempotent create — all with zero model requests.

The replay run is written in one transaction: the run (mode ``replay``), one ``replayed`` call
per routed cell (``source_call_id`` naming the baseline call, event ``call_replayed``), the
result rows with ``details.evidence_mode`` ``offline_estimate``, and the ``completed`` status.
The same idempotency key returns the same run; a key bound to another pair is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from pytest_srbench.core.models import Run
from pytest_srbench.core.offline.replay import (
    ReplayError,
    refusal,
    replay_manifest,
    replayed_call,
    replayed_result,
    review,
)
from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.store.run_listing import plan_facts

MAX_OPTIONS_PAGE = 100


def review_pair(store: Store, baseline_run_id: str, preview_run_id: str) -> dict[str, Any]:
    """The replay review of two runs of the store (read-only)."""
    baseline_run = store.require_run(baseline_run_id)
    preview_run = store.require_run(preview_run_id)
    baseline = store.get_manifest(baseline_run_id)
    preview = store.get_manifest(preview_run_id)
    with store.snapshot():
        return review(
            baseline_run,
            baseline,
            store.results(baseline_run_id),
            store.calls(baseline_run_id),
            preview_run,
            preview,
            store.results(preview_run_id),
        )


def create_replay(
    store: Store,
    baseline_run_id: str,
    preview_run_id: str,
    *,
    idempotency_key: str,
    run_id: str | None = None,
) -> tuple[Run, bool, dict[str, Any]]:
    """Create (or find, by ``idempotency_key``) the replay run; returns it, whether it was
    created now, and the review it was made from. ``ReplayError`` names every reason a pair
    cannot be replayed; ``StoreError`` when the key is bound to another pair."""
    if not idempotency_key:
        raise ReplayError("a replay needs an idempotency key")
    existing = store.find_run_by_key(idempotency_key)
    if existing is not None:
        sources = store.get_manifest(existing.id).replay_sources or {}
        if sources != {"baseline_run_id": baseline_run_id, "preview_run_id": preview_run_id}:
            raise StoreError(
                f"idempotency key {idempotency_key!r} is already bound to another run "
                f"({existing.id})"
            )
        return existing, False, review_pair(store, baseline_run_id, preview_run_id)
    doc = review_pair(store, baseline_run_id, preview_run_id)
    if not doc["eligible"]:
        raise ReplayError(refusal(doc))
    manifest = replay_manifest(store.get_manifest(preview_run_id), baseline_run_id, preview_run_id)
    baseline_results = {(r["case_id"], r["target_id"]): r for r in store.results(baseline_run_id)}
    source_calls = {c["id"]: c for c in store.calls(baseline_run_id)}
    previews = {(r["case_id"], r["target_id"]): r for r in store.results(preview_run_id)}
    new_id = run_id or "run-" + uuid.uuid4().hex[:20]
    with store.transaction():
        run, created = store.create_run(
            new_id, manifest, request_key=idempotency_key, status="running"
        )
        if not created:
            return run, False, doc
        store.set_runner(run.id, {"source": "replay", "model_requests": 0})
        store.append_event(run.id, "replay_created", dict(manifest.replay_sources or {}))
        for cell in doc["cells"]:
            key = (cell["case_id"], cell["target_id"])
            routing = previews[key]["details"]["routing"]
            source = source_calls[cell["source_call_id"]]
            call = replayed_call(source, "call-" + uuid.uuid4().hex, cell["target_id"], routing)
            store.insert_call(run.id, call)
            store.append_event(
                run.id,
                "call_replayed",
                {"call_id": call["id"], "source_call_id": source["id"],
                 "case_id": cell["case_id"], "target_id": cell["target_id"]},
            )  # fmt: skip
            base = baseline_results[(cell["case_id"], cell["baseline_target_id"])]
            store.upsert_result(
                run.id,
                replayed_result(
                    base, cell["target_id"], routing, cell["baseline_target_id"], source["id"]
                ),
            )
        run = store.set_run_status(run.id, "completed")
    return run, True, doc


def replay_options(
    store: Store, baseline_run_id: str, *, after: str | None = None, limit: int = 20
) -> dict[str, Any]:
    """The completed previews (newest first, recovery children left out) a baseline could be
    replayed with, each with its review's verdict and counts (not its cells); ``after``: the
    last preview id of the page before; ``next_cursor``: this page's last id when more may
    follow."""
    store.require_run(baseline_run_id)
    return {
        "baseline_run_id": baseline_run_id,
        **_options(store, "preview", "preview_run_id",
                   lambda run: review_pair(store, baseline_run_id, run.id),
                   after=after, limit=limit),
    }  # fmt: skip


def baseline_options(
    store: Store, preview_run_id: str, *, after: str | None = None, limit: int = 20
) -> dict[str, Any]:
    """The reverse lookup: the completed live runs (newest first, recovery children left out)
    a preview could be replayed on, each with its review's verdict and counts (not its cells);
    ``after`` and ``next_cursor`` page them as in ``replay_options``."""
    store.require_run(preview_run_id)
    return {
        "preview_run_id": preview_run_id,
        **_options(store, "live", "baseline_run_id",
                   lambda run: review_pair(store, run.id, preview_run_id),
                   after=after, limit=limit),
    }  # fmt: skip


def _options(
    store: Store,
    mode: str,
    key: str,
    reviewed: Callable[[Run], dict[str, Any]],
    *,
    after: str | None,
    limit: int,
) -> dict[str, Any]:
    """Up to ``limit`` completed runs of ``mode`` (recovery children left out) after the run
    ``after``, newest first, each under ``key`` with its plan's name and the verdict of its
    review; ``next_cursor``: the page's last run when more may follow."""
    limit = max(1, min(limit, MAX_OPTIONS_PAGE))
    options: list[dict[str, Any]] = []
    passed = after is None
    offset, page = 0, 200
    more = False
    while True:
        runs = store.list_runs(limit=page, offset=offset, status="completed")
        facts = plan_facts(store, [run.id for run in runs])
        for run in runs:
            if not passed:
                passed = run.id == after
                continue
            plan = facts.get(run.id)
            if plan is None or plan.mode != mode or run.parent_run_id is not None:
                continue
            if len(options) == limit:
                more = True
                break
            doc = reviewed(run)
            options.append(
                {
                    key: run.id,
                    "name": plan.name,
                    "created_at": run.created_at,
                    "eligible": doc["eligible"],
                    "problems": doc["problems"],
                    "eligible_cells": doc["eligible_cells"],
                    "ineligible_cells": doc["ineligible_cells"],
                }
            )
        if more or len(runs) < page:
            break
        offset += page
    return {"options": options, "next_cursor": options[-1][key] if more and options else None}
