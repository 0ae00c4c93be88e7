"""Store queries of the service: run rows newest first, the static facts of their frozen
plans (name, mode, profile, kind, targets with models) read by the database's JSON functions
(SQLite's ``json_extract``, PostgreSQL's ``jsonb``), so a page of runs never validates a
manifest in Python, and the run a call belongs to."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from pytest_srbench.core.models import Run
from pytest_srbench.core.report.tasks import RunKind, run_kind
from pytest_srbench.store.base import Store
from pytest_srbench.store.dialect import is_postgres, rows
from pytest_srbench.store.sqlite import RUN_MANIFEST_SQL

COLUMNS = "id, status, created_at, updated_at, plan_sha256, request_key, error, parent_run_id"
NEWEST_FIRST = ' ORDER BY created_at COLLATE "C" DESC, id COLLATE "C" DESC'
NEWEST_FIRST_SQLITE = " ORDER BY created_at DESC, id DESC"
CHUNK = 500
PG_FACTS = (
    "SELECT id, manifest::jsonb ->> 'name' AS name,"
    " coalesce(outline, manifest)::jsonb ->> 'mode' AS mode,"
    " coalesce(outline, manifest)::jsonb ->> 'profile' AS profile,"
    " (manifest::jsonb -> 'targets')::text AS targets,"
    " (SELECT json_agg(s ->> 'kind')"
    "  FROM jsonb_array_elements(coalesce(manifest::jsonb -> 'dataset' -> 'suites', '[]')) AS s"
    "  WHERE coalesce(s -> 'selected', 'true') NOT IN ('0'::jsonb, 'false'::jsonb))::text AS kinds"
    " FROM runs"
)


@dataclass(frozen=True)
class PlanFacts:
    """What never changes about a run once it is created (its plan is frozen)."""

    name: str
    mode: str
    profile: str
    kind: RunKind
    targets: tuple[dict[str, str], ...]


def _chunks(ids: Sequence[str]) -> Iterator[Sequence[str]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def _where(status: str | None) -> tuple[str, list[Any]]:
    return (" WHERE status = ?", [status]) if status else ("", [])


def count_runs(store: Store, status: str | None = None) -> int:
    where, args = _where(status)
    return int(rows(store, "SELECT COUNT(*) AS n FROM runs" + where, args)[0]["n"])


def run_ids(store: Store, status: str | None = None) -> list[str]:
    """Every run id (of ``status`` when given), newest first."""
    where, args = _where(status)
    order = NEWEST_FIRST if is_postgres(store) else NEWEST_FIRST_SQLITE
    return [row["id"] for row in rows(store, "SELECT id FROM runs" + where + order, args)]


def runs_by_id(store: Store, ids: Sequence[str]) -> dict[str, Run]:
    found: dict[str, Run] = {}
    for chunk in _chunks(ids):
        marks = ", ".join("?" for _ in chunk)
        query = f"SELECT {COLUMNS} FROM runs WHERE id IN ({marks})"
        for row in rows(store, query, list(chunk)):
            found[row["id"]] = Run.model_validate(row)
    return found


def plan_facts(store: Store, ids: Sequence[str]) -> dict[str, PlanFacts]:
    """The frozen plan facts of each run in ``ids`` (unknown ids are left out)."""
    found: dict[str, PlanFacts] = {}
    for chunk in _chunks(ids):
        marks = ", ".join("?" for _ in chunk)
        query = (PG_FACTS + f" WHERE id IN ({marks})") if is_postgres(store) else (
            "SELECT id, json_extract(manifest, '$.name') AS name,"
            " json_extract(coalesce(outline, manifest), '$.mode') AS mode,"
            " json_extract(coalesce(outline, manifest), '$.profile') AS profile,"
            " json_extract(manifest, '$.targets') AS targets,"
            # the kinds of the datasets the plan selected cases from (``run_kind``)
            " (SELECT json_group_array(json_extract(s.value, '$.kind'))"
            "  FROM json_each(manifest, '$.dataset.suites') AS s"
            "  WHERE coalesce(json_extract(s.value, '$.selected'), 1) != 0) AS kinds"
            # the plan apart from the run's row (run_plans), or in it (a schema 1 run)
            f" FROM (SELECT r.id, {RUN_MANIFEST_SQL} AS manifest,"
            "  coalesce(p.outline, r.outline) AS outline FROM runs r"
            f"  LEFT JOIN run_plans p ON p.run_id = r.id WHERE r.id IN ({marks}))"
        )  # fmt: skip
        for row in rows(store, query, list(chunk)):
            targets = orjson.loads(row["targets"]) if row["targets"] else []
            kinds = orjson.loads(row["kinds"]) if row["kinds"] else []
            found[row["id"]] = PlanFacts(
                name=str(row["name"] or ""),
                mode=str(row["mode"] or "live"),
                profile=str(row["profile"] or ""),
                kind=run_kind(kinds),
                targets=tuple(
                    {"id": str(t.get("id")), "kind": str(t.get("kind", "single")),
                     "model": str(t.get("model", ""))}
                    for t in targets
                ),
            )  # fmt: skip
    return found


def runner_sources(store: Store, ids: Sequence[str]) -> dict[str, str | None]:
    """``runner.source`` of each run (who created it), None when not recorded."""
    found: dict[str, str | None] = {}
    for chunk in _chunks(ids):
        marks = ", ".join("?" for _ in chunk)
        source = (
            "CASE WHEN jsonb_typeof(runner::jsonb -> 'source') = 'string'"
            " THEN runner::jsonb ->> 'source' END"
            if is_postgres(store)
            else "CASE WHEN json_valid(runner) THEN json_extract(runner, '$.source') END"
        )
        query = f"SELECT id, {source} AS source FROM runs WHERE id IN ({marks})"
        for row in rows(store, query, list(chunk)):
            found[row["id"]] = row["source"] if isinstance(row["source"], str) else None
    return found


def call_run_id(store: Store, call_id: str) -> str | None:
    """The run a call belongs to (None for an unknown call)."""
    found = rows(store, "SELECT run_id FROM calls WHERE id = ?", (call_id,))
    return str(found[0]["run_id"]) if found else None
