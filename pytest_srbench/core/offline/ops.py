"""Offline operations on a finished run: regrade and the training-matrix export.

Both read only what the run saved (frozen manifest, result rows, call receipts), make zero
model requests and return a separate artifact; neither touches the store (the I/O layer,
``pytest_srbench.app.offline``, reads the store and writes the artifact file).

- ``regrade``: re-grade every cell of a completed live run of MCQ / grid benchmarks from the
  ``final`` text of its one completed subject call with the current grader. A truncated output
  (finish reason ``length``, ``output_limit``) stays incorrect.
- ``training_matrix``: the dev-split case × target rectangle of a completed live run, with each
  target's answer, outcome, usage, cost, subject latency and final text. Holdout (standard)
  runs, recovery children and plans with explicit execution cells are refused.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pytest_srbench.core.calls.usage import add_buckets, sum_cost
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.grading.grids import grade_grids
from pytest_srbench.core.grading.judge import JUDGE_VERSION
from pytest_srbench.core.grading.mcq import GRADER_VERSION as MCQ_GRADER_VERSION
from pytest_srbench.core.grading.mcq import grade_choice
from pytest_srbench.core.models import Case, Manifest, Run
from pytest_srbench.core.offline.reconcile import correction_summary, effective_calls
from pytest_srbench.core.plan.srbench import PROFILE_SPLIT

REGRADE_KIND = "offline-regrade"
TRAINING_KIND = "training-matrix"
TRAINING_SPLIT = "dev"

# Why the built-in benchmarks that are not MCQ or grid cannot be regraded offline.
_NOT_REGRADABLE: dict[str, str] = {
    "simpleqa-verified": "judged",
    "hle": "judged",
    "livecodebench": "code",
    "scicode": "code",
    "humaneval": "code",
    "terminal-bench-2.1": "agent",
    "tau3": "agent",
}

Row = Mapping[str, Any]


class OfflineError(InputError):
    """An offline operation refuses the run (wrong kind of run, benchmark, or saved evidence)."""


@dataclass(frozen=True)
class Regraded:
    """What a grader says about one saved final text."""

    correct: bool
    answer: Any
    answer_status: str


class OfflineGrader(Protocol):
    """A pure grader of one case's saved final text (the benchmark's current grader)."""

    @property
    def version(self) -> str: ...

    def grade(self, case: Case, final: str) -> Regraded: ...


@dataclass(frozen=True)
class McqGrader:
    """The multiple-choice grader over the case's option ``letters`` (``sr-bench-mcq-final-v2``)."""

    version: str = MCQ_GRADER_VERSION

    def grade(self, case: Case, final: str) -> Regraded:
        letters = case.metadata.get("letters")
        if not isinstance(letters, str) or not letters:
            raise OfflineError(f"case {case.id} has no option letters; it is not a MCQ case")
        grade = grade_choice(final, str(case.answer), letters)
        return Regraded(correct=grade.correct, answer=grade.answer, answer_status=grade.status)


@dataclass(frozen=True)
class GridGrader:
    """The exact-match grid grader (the version string is the ARC adapter's)."""

    version: str

    def grade(self, case: Case, final: str) -> Regraded:
        correct, valid, parsed = grade_grids(final, case.answer)
        return Regraded(
            correct=correct, answer=parsed, answer_status="answered" if valid else "unparsed"
        )


# -- shared checks ------------------------------------------------------------------------------


def _cell_name(case_id: str, target_id: str) -> str:
    return f"{case_id} × {target_id}"


def _require_completed_live(manifest: Manifest, run: Run, what: str) -> None:
    if manifest.mode != "live":
        raise OfflineError(
            f"{what} requires a completed live run; run {run.id} is a {manifest.mode} run"
        )
    if run.status != "completed":
        raise OfflineError(f"{what} requires a completed live run; run {run.id} is {run.status}")
    if run.plan_sha256 != manifest.plan_sha256:
        raise OfflineError(
            f"run {run.id} is bound to plan {run.plan_sha256[:12]}… but its manifest is "
            f"{manifest.plan_sha256[:12]}…"
        )


def _results_by_cell(results: Iterable[Row]) -> dict[tuple[str, str], Row]:
    indexed: dict[tuple[str, str], Row] = {}
    for row in results:
        key = (str(row["case_id"]), str(row["target_id"]))
        if key in indexed:
            raise OfflineError(f"cell {_cell_name(*key)} has more than one result row")
        indexed[key] = row
    return indexed


def _completed_result(
    indexed: Mapping[tuple[str, str], Row], case_id: str, target_id: str, what: str
) -> Row:
    row = indexed.get((case_id, target_id))
    if row is None:
        raise OfflineError(f"{what}: cell {_cell_name(case_id, target_id)} has no saved result")
    if row.get("status") != "completed" or not isinstance(row.get("correct"), bool):
        raise OfflineError(
            f"{what}: cell {_cell_name(case_id, target_id)} is {row.get('status')}, not a "
            "completed graded cell"
        )
    return row


def _subject_calls(calls: Iterable[Row]) -> dict[tuple[str, str], list[Row]]:
    """Completed subject calls per cell, in stored order."""
    by_cell: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for call in calls:
        if call.get("role", "subject") == "subject" and call.get("status") == "completed":
            by_cell[(str(call["case_id"]), str(call["target_id"]))].append(call)
    return by_cell


def _truncated(call: Row, result: Row) -> bool:
    details = result.get("details") or {}
    return (
        call.get("finish_reason") == "length"
        or call.get("output_complete") is False
        or details.get("quality_failure") == "output_limit"
    )


# -- regrade ------------------------------------------------------------------------------------


def _kind_of(
    benchmark: str, results: Sequence[Row], calls: Sequence[Row], case_ids: set[str]
) -> str:
    """Why a benchmark cannot be regraded: judged, code, agent, or simply not MCQ / grid."""
    if benchmark in _NOT_REGRADABLE:
        return _NOT_REGRADABLE[benchmark]
    roles = {call.get("role") for call in calls if call.get("case_id") in case_ids}
    versions = {
        (row.get("details") or {}).get("grader_version")
        for row in results
        if row.get("case_id") in case_ids
    }
    if "judge" in roles or JUDGE_VERSION in versions:
        return "judged"
    if "simulator" in roles:
        return "agent"
    return "unsupported"


def _check_regradable(
    manifest: Manifest,
    results: Sequence[Row],
    calls: Sequence[Row],
    graders: Mapping[str, OfflineGrader],
) -> None:
    cases_of: dict[str, set[str]] = defaultdict(set)
    for case in manifest.cases:
        cases_of[case.benchmark].add(case.id)
    refused = {
        benchmark: _kind_of(benchmark, results, calls, case_ids)
        for benchmark, case_ids in sorted(cases_of.items())
        if benchmark not in graders
    }
    if not refused:
        return
    judged = [benchmark for benchmark, kind in refused.items() if kind == "judged"]
    if judged:
        raise OfflineError(
            "regrade of a run containing judged benchmarks is rejected "
            f"({', '.join(judged)}): a judge model's verdict cannot be reproduced offline; "
            "only MCQ and grid benchmarks can be regraded"
        )
    benchmark, kind = next(iter(refused.items()))
    article = "an" if kind[0] in "aeiou" else "a"
    reason = "has no offline grader" if kind == "unsupported" else f"is {article} {kind} benchmark"
    raise OfflineError(
        f"regrade supports only MCQ and grid benchmarks; {benchmark} {reason}"
        + (f" (also refused: {', '.join(list(refused)[1:])})" if len(refused) > 1 else "")
    )


def regrade(
    manifest: Manifest,
    run: Run,
    results: Sequence[Row],
    calls: Sequence[Row],
    graders: Mapping[str, OfflineGrader],
) -> dict[str, Any]:
    """Re-grade every planned cell from its saved final text with the current ``graders``
    (benchmark → grader); returns the ``offline-regrade`` artifact."""
    _require_completed_live(manifest, run, "regrade")
    _check_regradable(manifest, results, calls, graders)
    cases = {case.id: case for case in manifest.cases}
    indexed = _results_by_cell(results)
    subject = _subject_calls(calls)
    rows: list[dict[str, Any]] = []
    for cell in manifest.planned_cells():
        case = cases[cell.case_id]
        result = _completed_result(indexed, cell.case_id, cell.target_id, "regrade")
        made = subject.get((cell.case_id, cell.target_id), [])
        if len(made) != 1:
            raise OfflineError(
                f"regrade needs exactly one completed subject call per cell; cell "
                f"{_cell_name(cell.case_id, cell.target_id)} has {len(made)}"
            )
        (call,) = made
        final = call.get("final")
        if not isinstance(final, str):
            raise OfflineError(
                f"call {call.get('id')} of cell {_cell_name(cell.case_id, cell.target_id)} "
                "has no saved final text"
            )
        grader = graders[case.benchmark]
        outcome = grader.grade(case, final)
        truncated = _truncated(call, result)
        correct = outcome.correct and not truncated
        previous = bool(result["correct"])
        details = result.get("details") or {}
        rows.append(
            {
                "case_id": cell.case_id,
                "target_id": cell.target_id,
                "benchmark": case.benchmark,
                "call_id": call.get("id"),
                "previous_grader_version": details.get("grader_version"),
                "grader_version": grader.version,
                "previous_correct": previous,
                "correct": correct,
                "previous_answer": result.get("answer"),
                "answer": outcome.answer,
                "previous_answer_status": details.get("answer_status"),
                "answer_status": outcome.answer_status,
                "quality_failure": "output_limit" if truncated else None,
                "changed": correct != previous,
            }
        )
    present = sorted({case.benchmark for case in manifest.cases})
    versions = {benchmark: graders[benchmark].version for benchmark in present}
    return {
        "kind": REGRADE_KIND,
        "grader_version": "+".join(sorted(set(versions.values()))),
        "grader_versions": versions,
        "source_run_id": run.id,
        "source_plan_sha256": manifest.plan_sha256,
        "profile": manifest.profile,
        "benchmarks": present,
        "cell_count": len(rows),
        "results": rows,
        "changed_count": sum(1 for row in rows if row["changed"]),
        "previous_correct_count": sum(1 for row in rows if row["previous_correct"]),
        "correct_count": sum(1 for row in rows if row["correct"]),
        "model_requests": 0,
    }


# -- training-matrix export ---------------------------------------------------------------------


def _check_trainable(manifest: Manifest, run: Run) -> None:
    _require_completed_live(manifest, run, "training export")
    parent = (manifest.recovery or {}).get("parent_run_id") or run.parent_run_id
    if manifest.recovery is not None or run.parent_run_id is not None:
        raise OfflineError(
            f"training export of a recovery child is rejected (run {run.id} recovers "
            f"{parent or 'another run'}); export the parent run's complete rectangle instead"
        )
    if manifest.execution_cells is not None:
        raise OfflineError(
            "training export requires the full case × target rectangle; the plan of run "
            f"{run.id} lists explicit execution_cells"
        )
    for profile in (manifest.profile, manifest.dataset.profile):
        split = PROFILE_SPLIT.get(profile)
        if split == "holdout":
            raise OfflineError(
                f"training export of a {profile}-profile (holdout) run is rejected; only "
                "dev-split profiles (smoke, quick) can be exported for training"
            )
        if split != TRAINING_SPLIT:
            raise OfflineError(
                f"training export requires a dev-split profile; profile {profile!r} has no "
                "dev split"
            )
    for case in manifest.cases:
        split = case.metadata.get("split", TRAINING_SPLIT)
        if split != TRAINING_SPLIT:
            raise OfflineError(
                f"training export takes only dev-split cases; case {case.id} belongs to the "
                f"{split} split"
            )


def _accounting(result: Row, made: Sequence[Row], corrected: bool) -> tuple[Any, Any]:
    """(usage, cost_usd) of a cell: the result's own numbers, or the sums over its subject calls
    read through the accounting correction (an unverified call makes them unknown)."""
    if not corrected:
        return result.get("usage"), result.get("cost_usd")
    usages = [call.get("usage") for call in made]
    known = [usage for usage in usages if isinstance(usage, Mapping)]
    usage = dict(add_buckets(known)) if known and len(known) == len(usages) else None
    return usage, sum_cost(call.get("cost_usd") for call in made)


def training_matrix(
    manifest: Manifest,
    run: Run,
    results: Sequence[Row],
    calls: Sequence[Row],
    correction: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``training-matrix`` artifact of a completed live dev-split run: every case with every
    target's answer, outcome, usage, cost, subject latency and final text."""
    _check_trainable(manifest, run)
    if correction is not None and correction.get("run_id") not in (None, run.id):
        raise OfflineError(
            f"accounting correction {correction.get('id')} belongs to run {correction['run_id']}"
        )
    indexed = _results_by_cell(results)
    subject = _subject_calls(effective_calls([dict(call) for call in calls], correction))
    cases: list[dict[str, Any]] = []
    for case in manifest.cases:
        targets: dict[str, dict[str, Any]] = {}
        for target in manifest.targets:
            result = _completed_result(indexed, case.id, target.id, "training export")
            made = subject.get((case.id, target.id), [])
            usage, cost = _accounting(result, made, correction is not None)
            final = made[-1].get("final") if made else None
            targets[target.id] = {
                "answer": result.get("answer"),
                "correct": result["correct"],
                "score": result.get("score"),
                "usage": usage,
                "cost_usd": cost,
                "subject_latency_s": result.get("subject_latency_s"),
                "final": final,
            }
        cases.append(
            {
                "case_id": case.id,
                "benchmark": case.benchmark,
                "messages": [message.model_dump(mode="json") for message in case.messages],
                "reference_answer": case.answer,
                "metadata": dict(case.metadata),
                "targets": targets,
            }
        )
    summary = correction_summary(correction) if correction is not None else None
    return {
        "kind": TRAINING_KIND,
        "split": TRAINING_SPLIT,
        "profile": manifest.profile,
        "source_run_id": run.id,
        "source_plan_sha256": manifest.plan_sha256,
        "targets": [{"id": target.id, "model": target.model} for target in manifest.targets],
        "cases": cases,
        "accounting_correction": summary,
        "model_requests": 0,
    }
