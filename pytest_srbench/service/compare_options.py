"""What Compare iterations offers (the results guide): baselines are live runs with a
single-model target that have at least one compatible candidate; candidates are the other
live runs of the same comparison identity (cases, sampling, weights, adapters, options,
limits, output policy), in creation order. A cheap grouping only: the service still
validates every paired outcome when "Compare runs" is clicked."""

from __future__ import annotations

import hashlib
from typing import Any

from pytest_srbench.core.canonical import canonical_json
from pytest_srbench.store.base import Store
from pytest_srbench.store.run_listing import run_ids, runs_by_id

COMPARED_STATUSES = ("completed", "failed")
MOST_RUNS = 2000
IDENTITY = ("case_sha256", "mode", "sampling", "benchmark_weights", "adapter_versions",
            "output_policy", "limits", "repeats")  # fmt: skip


def _group(manifest: Any) -> str:
    plan = manifest.model_dump(mode="json")
    key = {name: plan.get(name) for name in IDENTITY}
    key["benchmark_options"] = {
        bench: {role: v for role, v in options.items() if role not in ("judge", "simulator")}
        for bench, options in (plan.get("benchmark_options") or {}).items()
    }
    return hashlib.sha256(canonical_json(key).encode()).hexdigest()[:16]


def compare_options(store: Store) -> dict[str, Any]:
    """Every live completed or failed run (newest ``MOST_RUNS``), oldest first, with its
    comparison group and whether it can be a baseline; ``baselines`` lists those that can."""
    ids = [i for status in COMPARED_STATUSES for i in run_ids(store, status)]
    runs = sorted(runs_by_id(store, ids).values(), key=lambda r: (r.created_at, r.id))
    runs = runs[-MOST_RUNS:]
    views: list[dict[str, Any]] = []
    for run in runs:
        manifest = store.get_manifest(run.id)
        if manifest.mode != "live":
            continue  # previews and replays are never compared
        kinds = {t.id: getattr(t, "kind", "single") for t in manifest.targets}
        views.append(
            {
                "id": run.id, "name": manifest.name, "profile": manifest.profile,
                "status": run.status, "created_at": run.created_at,
                "targets": [t.id for t in manifest.targets],
                "single": any(kind == "single" for kind in kinds.values()),
                "group": _group(manifest),
            }
        )  # fmt: skip
    sizes: dict[str, int] = {}
    for view in views:
        group = str(view["group"])
        sizes[group] = sizes.get(group, 0) + 1
    baselines = [v["id"] for v in views if v["single"] and sizes[v["group"]] > 1]
    return {"runs": views, "baselines": baselines}
