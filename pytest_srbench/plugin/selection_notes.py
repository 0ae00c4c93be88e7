"""Why a srbench session would run nothing, in one line, instead of pytest's bare "no tests ran".

Two cases, two exit statuses:

- the **plan** has no cell (a benchmark has no target of the kind it needs, or its suite
  selects no case for the profile): the command can never run anything as given, so it is a
  usage error (exit 4), like an unknown target. When other benchmarks do run, one line names
  each benchmark left out and why;
- the plan has cells but the **test selection** (``-k``, ``-m``, ``--deselect``) removed them
  all: pytest's own rule applies (exit 5, "no tests ran"), and one line says what deselected
  the cells and what their ids look like. No run is created and nothing is sent.

Under xdist a worker's output is not shown, and a worker that raises never reports its
(empty) collection: workers hand the line to the controller in ``workeroutput``; the
controller prints it once and sets the exit status (``XdistBridge``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest

from pytest_srbench.app.config import SrbenchConfig
from pytest_srbench.app.planning import PlanDraft
from pytest_srbench.core.plan.srbench import SR_BENCH_BENCHMARKS

KIND_WORDS = {"single": "model", "mom": "router", "retrieval": "retrieval", "python": "your code"}
WORKER_KEY = "srbench_nothing_selected"


def check_plan(
    config: pytest.Config, draft: PlanDraft, project: SrbenchConfig, requested: Sequence[str] | None
) -> bool:
    """A usage error when the draft has no cell at all; one line per benchmark left without a
    cell when others run. Returns whether the draft was refused (only an xdist worker returns
    then: it collects nothing and the controller reports)."""
    reason = unplanned_reason(draft, project, requested)
    if reason is None:
        return False
    if draft.cells():
        say(config, f"pytest-srbench: not run — {reason}")
        return False
    refuse(config, f"pytest-srbench: nothing to run — {reason}")
    return True


def refuse(config: pytest.Config, line: str) -> None:
    """A usage error raised during collection: raised here, or, in an xdist worker (whose own
    errors the controller never shows), handed to the controller, which prints it once and
    exits 4. Only a worker returns."""
    if not _tell_controller(config, line, usage_error=True):
        raise pytest.UsageError(line)


def note_deselected(config: pytest.Config, draft: PlanDraft | None) -> None:
    """Say that the test selection removed every cell (pytest then exits 5)."""
    say(config, deselected_note(config, draft))


def say(config: pytest.Config, line: str) -> None:
    if not _tell_controller(config, line, usage_error=False):
        show(config, line)


def _tell_controller(config: pytest.Config, line: str, *, usage_error: bool) -> bool:
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is None:
        return False
    workeroutput.setdefault(WORKER_KEY, []).append({"line": line, "usage_error": usage_error})
    return True


def show(config: pytest.Config, line: str, *, error: bool = False) -> None:
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if terminal is not None:
        terminal.ensure_newline()
        terminal.write_line(f"ERROR: {line}" if error else line, red=error, yellow=not error)


def unplanned_reason(
    draft: PlanDraft, project: SrbenchConfig, requested: Sequence[str] | None
) -> str | None:
    """``None`` when every benchmark of the draft has a cell; else why each of the others has
    none."""
    cases = Counter(case.benchmark for case in draft.cases)
    reasons = []
    for benchmark, kinds in draft.target_kinds.items():
        if not cases[benchmark]:
            reasons.append(_no_cases(benchmark, draft))
        elif not any(target.kind in kinds for target in draft.targets):
            reasons.append(_no_targets(benchmark, kinds, project, requested))
    if not reasons and not draft.cells():
        reasons.append("the plan has no (case, target) cell")
    return "; ".join(reasons) or None


def _no_cases(benchmark: str, draft: PlanDraft) -> str:
    profile = draft.dataset.profile
    text = f"benchmark {benchmark} selects no case for profile {profile!r}"
    path = draft.suite_paths.get(benchmark)
    if benchmark in SR_BENCH_BENCHMARKS or path is None or path.suffix == ".json":
        return text
    rows = next((s.get("rows") for s in draft.dataset.suites if s.get("benchmark") == benchmark), 0)
    return (
        f"{text}: {path / 'suite.json'} must say how many cases each profile takes, e.g. "
        f'"profiles": {{"{profile}": {rows or 1}}} (see docs/suites.md)'
    )


def _no_targets(
    benchmark: str,
    kinds: Sequence[str],
    project: SrbenchConfig,
    requested: Sequence[str] | None,
) -> str:
    known = project.all_targets()
    need = " or ".join(KIND_WORDS.get(kind, kind) for kind in kinds)
    if requested:
        chosen, where = list(requested), "--srbench-target selects only"
    else:
        chosen, where = list(project.default_targets or []), "default_targets lists only"
    listed = ", ".join(
        f"{i} ({KIND_WORDS.get(known[i].kind, known[i].kind)})" for i in chosen if i in known
    )
    fitting = sorted(t.id for t in known.values() if t.kind in kinds)
    hint = f"pass --srbench-target {fitting[0]}" if fitting else "define one in [tool.srbench]"
    if len(fitting) > 1:
        hint += f" (or another {need} target: {', '.join(fitting[1:])})"
    source = f"{where} {listed}" if listed else "no target is selected"
    return f"benchmark {benchmark} needs a {need} target, but {source}; {hint}"


def deselected_note(config: pytest.Config, draft: PlanDraft | None) -> str:
    """What removed every cell from the session, and what a cell id looks like."""
    parts = []
    if config.getoption("keyword", None):
        parts.append(f"-k {config.getoption('keyword')!r}")
    if config.getoption("markexpr", None):
        parts.append(f"-m {config.getoption('markexpr')!r}")
    if config.getoption("deselect", None):
        parts.append("--deselect")
    how = " and ".join(parts) or "the test selection"
    cells = draft.cells() if draft is not None else []
    example = f" (cell ids look like {cells[0][0]}[{cells[0][1]}])" if cells else ""
    return (
        f"pytest-srbench: nothing to run — {how} deselected all {len(cells) or 'the'} "
        f"planned cells{example}; no run was created and no request was sent"
    )
