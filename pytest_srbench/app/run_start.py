"""Starting a run from a plan draft and the cells a session selected: the plan frozen, the
checks made before anything is sent (the gate's baseline and design, every target's key
variable, retrieval indexes), the
HTTP client loaded, the run created (or found by its key), the router recipes and index
snapshots saved by the process that created it, and this invocation's shard claimed (or the
run's ownership taken).

Every process that dispatches cells (a single pytest process, each xdist worker, each shard of
a CI matrix) starts its run here; each refusal is a ``SrbenchError`` that says what to change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pytest_srbench.app.credentials import check_credentials
from pytest_srbench.app.lifecycle import claim_ownership
from pytest_srbench.app.planning import PlanDraft
from pytest_srbench.app.shards import ShardClaim, ShardRefused, claim_shard
from pytest_srbench.core.compare.design import gate_design, plan_groups
from pytest_srbench.core.compare.gate import common_part, resolve_scope
from pytest_srbench.core.compare.runs import (
    ComparisonError,
    RunSide,
    benchmarks_of,
    check_plans,
    plan_side,
)
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import Manifest, Run, Target
from pytest_srbench.core.plan.build import release_case_text
from pytest_srbench.core.shards import ShardSpec
from pytest_srbench.store.base import Store, StoreError
from pytest_srbench.transport.base import Transport


class GateRefused(InputError):
    """The baseline cannot gate this plan, or the gate could never pass (or fail) at its size."""


@dataclass(frozen=True)
class GateRequest:
    """The CI gate a session asked for, checked against the plan before anything runs."""

    baseline: RunSide
    mode: str
    margin: float
    scope: str | None  # None: the default for the plan's benchmarks (gate.default_scope)
    interval: str
    allow_mixed_sources: bool


@dataclass(frozen=True)
class RunRequest:
    """How a session wants its run: its id (when it creates one), its key, its shard."""

    run_id: str
    run_key: str | None
    owner: dict[str, Any]
    shard: ShardSpec | None = None
    gate: GateRequest | None = None


@dataclass(frozen=True)
class RunStart:
    """The run a session takes part in: its frozen plan, whether this process created it,
    this invocation's shard (None when unsharded), and whether it only reports the run
    (``view_only``: another live process holds it)."""

    manifest: Manifest
    run: Run
    created: bool
    transport: Transport
    shard: ShardClaim | None
    view_only: bool


def start_run(
    store: Store,
    draft: PlanDraft,
    cells: Iterable[tuple[str, str]],
    request: RunRequest,
    *,
    target_urls: Callable[[Iterable[Target]], dict[str, str]],
    make_transport: Callable[[], Transport],
) -> RunStart:
    """Freeze ``draft`` over ``cells`` and create (or join) the run. ``target_urls``: where
    the plan's targets are reached (the simulator, managed servers); ``make_transport``: the
    HTTP client, loaded just before the run is created so that the run's wall time starts when
    its cells can be sent. A shard that cannot take part raises ``ShardRefused``."""
    manifest = draft.freeze(cells)
    if request.gate is not None:
        check_gate(request.gate, request.run_id, manifest)
    check_credentials(
        [*manifest.targets, *manifest.auxiliary_targets.values()]
    )  # an unset key variable: one line, before any request
    check_credentials(
        [*manifest.targets, *manifest.auxiliary_targets.values()]
    )  # an unset key variable: one line, before any request
    indexes = _check_indexes(manifest, target_urls)
    transport = make_transport()
    try:
        run, created = store.create_run(request.run_id, manifest, request_key=request.run_key)
    except StoreError as error:
        if request.shard is None:
            raise
        raise ShardRefused(
            f"shard {request.shard.label}: {error}; every shard must freeze the same plan (the "
            "same options, configuration, suites and selection)"
        ) from None
    finally:
        release_case_text(manifest)  # the store has the plan's text (or never will)
    if created:
        _save_snapshots(store, run.id, manifest, indexes, target_urls)
    claim = None
    view_only = False
    if request.shard is not None:
        claim = claim_shard(store, run.id, request.shard, request.owner, manifest)
    elif run.id != request.run_id:  # the run key named an existing run
        view_only = not claim_ownership(store, run.id, request.owner)
        if not view_only and run.status == "queued":  # adopting a run the service created
            _save_snapshots(store, run.id, manifest, indexes, target_urls)
    return RunStart(manifest, run, created, transport, claim, view_only)


def check_gate(gate: GateRequest, run_id: str, manifest: Manifest) -> None:
    """The baseline must be comparable with the plan on the benchmarks both have (a benchmark
    on one side only is reported, not gated; none in common is refused), and the gate able to
    pass and to fail at the plan's size (refused before anything runs, naming the cases it
    would need)."""
    from pytest_srbench.core.report.build import plan_identity  # the report model: only to gate

    whole = plan_side(run_id, plan_identity(manifest))
    baseline, planned, found = common_part(gate.baseline, whole)
    refused = f"the baseline {gate.baseline.run_id} ({gate.baseline.source}) cannot gate this run"
    if not found["common"]:
        raise GateRefused(
            f"{refused}: no benchmark in common (the baseline has "
            f"{', '.join(found['removed_benchmarks'])}; this run "
            f"{', '.join(found['added_benchmarks'])})"
        )
    try:
        check_plans(baseline, planned, gate.allow_mixed_sources)
    except ComparisonError as error:
        raise GateRefused(f"{refused}: {error}") from None
    names, sizes, weights = plan_groups(planned.plan)
    scope, why = resolve_scope(gate.scope, names, benchmarks_of(whole))
    design = gate_design(
        names,
        sizes,
        weights,
        mode=gate.mode,
        margin=gate.margin,
        scope=scope,
        interval=gate.interval,
    )
    if not design["usable"]:
        default = (
            ""
            if why is None
            else f" (the default scope: {why}; --srbench-gate-scope=macro gates the macro score)"
        )
        raise GateRefused(str(design["problem"]) + default)


def _check_indexes(
    manifest: Manifest, target_urls: Callable[[Iterable[Target]], dict[str, str]]
) -> dict[str, dict[str, Any]]:
    """Before any query: an unusable index is an environment problem, not bad retrieval."""
    if not any(target.kind == "retrieval" for target in manifest.targets):
        return {}
    from pytest_srbench.app.index_check import check_indexes  # httpx: only for retrieval runs

    return check_indexes(manifest, target_urls(manifest.targets))


def _save_snapshots(
    store: Store,
    run_id: str,
    manifest: Manifest,
    indexes: dict[str, dict[str, Any]],
    target_urls: Callable[[Iterable[Target]], dict[str, str]],
) -> None:
    """What the process that created the run records once: router recipes (read from the
    routers now) and the retrieval indexes' metadata."""
    snapshots: list[dict[str, Any]] = []
    if any(t.kind == "mom" and t.capture_recipe for t in manifest.targets):
        from pytest_srbench.app.recipes import capture_recipes  # httpx: only when one is wanted

        snapshots = capture_recipes(manifest, target_urls(manifest.targets))
    if snapshots:
        with store.transaction():
            for snapshot in snapshots:
                store.save_recipe(run_id, snapshot)
    with store.transaction():
        for target_id, info in indexes.items():
            store.save_snapshot(run_id, "index", target_id, info)
