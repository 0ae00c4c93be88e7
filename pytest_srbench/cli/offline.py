"""``srbench regrade`` and ``srbench export``: offline artifacts from a stored run.

Both need ``args.store`` (the main parser's ``--store``); an offline refusal prints
``srbench <command>: <message>`` to stderr and exits 2.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_srbench.cli.store_args import command_store

if TYPE_CHECKING:
    from pytest_srbench.store.base import Store


def _run_offline(
    command: str,
    args: argparse.Namespace,
    operation: Callable[[Store, str, Path], dict[str, Any]],
) -> tuple[int, dict[str, Any] | None]:
    store = command_store(args.store)  # a deliberate error is one line, from cli.main
    try:
        return 0, operation(store, args.run, Path(args.output))
    finally:
        store.close()


def cmd_regrade(args: argparse.Namespace) -> int:
    from pytest_srbench.app.offline import regrade_run

    code, artifact = _run_offline("regrade", args, regrade_run)
    if artifact is not None:
        print(
            f"regrade of {artifact['source_run_id']}: {artifact['cell_count']} cells, "
            f"{artifact['changed_count']} changed ({artifact['grader_version']}), "
            f"0 model requests → {args.output}"
        )
    return code


def cmd_export(args: argparse.Namespace) -> int:
    from pytest_srbench.app.offline import export_run

    code, artifact = _run_offline("export", args, export_run)
    if artifact is not None:
        print(
            f"training matrix of {artifact['source_run_id']}: {len(artifact['cases'])} cases × "
            f"{len(artifact['targets'])} targets (split {artifact['split']}), "
            f"0 model requests → {args.output}"
        )
    return code


def add_offline_commands(subparsers: Any) -> None:
    """Register ``regrade`` and ``export`` on the main parser's subcommands."""
    regrade = subparsers.add_parser(
        "regrade",
        help="regrade a completed MCQ/grid run from its saved answers (no model requests)",
        description="Re-grade every cell of a completed live run of MCQ and grid benchmarks "
        "from the saved final text of its subject call with the current grader. Writes a "
        "separate offline-regrade artifact; the store is not changed.",
    )
    regrade.add_argument("run", metavar="RUN")
    regrade.add_argument("--output", metavar="FILE", required=True, help="artifact JSON path")
    regrade.set_defaults(func=cmd_regrade)

    export = subparsers.add_parser(
        "export",
        help="export a completed dev-split run as a training matrix (no model requests)",
        description="Write every case × target of a completed live smoke/quick run (answer, "
        "outcome, usage, cost, subject latency, final text) as a training-matrix artifact. "
        "Standard-profile (holdout) runs, recovery children and partial plans are refused.",
    )
    export.add_argument("run", metavar="RUN")
    export.add_argument("--output", metavar="FILE", required=True, help="artifact JSON path")
    export.set_defaults(func=cmd_export)
