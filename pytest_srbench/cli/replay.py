"""``srbench replay``: an offline replay of a router's preview on a live baseline of single
models (run-lifecycle.md §11.2) — zero model requests.

Prints the review (every routed cell: the baseline model and call it takes, or its
``replay_ineligible`` reason), then the replay run's report; a refused pair exits 2 with the
reasons on one line. ``--review`` only prints the review.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from pytest_srbench.cli.store_args import command_store


def review_lines(doc: dict[str, Any]) -> list[str]:
    """The review as the command prints it: the verdict, run-level problems, one line a cell."""
    verdict = "eligible" if doc["eligible"] else "NOT eligible"
    lines = [
        f"replay review: preview {doc['preview_run_id']} on baseline {doc['baseline_run_id']}: "
        f"{verdict} · {doc['eligible_cells']} eligible, {doc['ineligible_cells']} ineligible "
        "cells · 0 model requests"
    ]
    lines += [f"  {problem}" for problem in doc["problems"]]
    for cell in doc["cells"]:
        if cell["reason"]:
            lines.append(f"  {cell['target_id']} × {cell['case_id']}: {cell['reason']}")
        else:
            lines.append(
                f"  {cell['target_id']} × {cell['case_id']}: {cell['selected_model']} → "
                f"{cell['baseline_target_id']} call {cell['source_call_id']}"
            )
    return lines


def cmd_replay(args: argparse.Namespace) -> int:
    from pytest_srbench.app.replay import create_replay, review_pair
    from pytest_srbench.app.reports import report_from_store
    from pytest_srbench.core.offline.replay import ReplayError
    from pytest_srbench.render.compare import replay_markdown
    from pytest_srbench.render.json_report import write_report
    from pytest_srbench.render.terminal import render_summary

    store = command_store(args.store)
    try:
        if args.review or not args.idempotency_key:
            doc = review_pair(store, args.baseline, args.preview)
            print("\n".join(review_lines(doc)))
            if not args.review:
                raise ReplayError("--idempotency-key KEY is required to create the replay run")
            return 0 if doc["eligible"] else 1
        try:
            run, created, doc = create_replay(
                store, args.baseline, args.preview, idempotency_key=args.idempotency_key
            )
        except ReplayError:
            print("\n".join(review_lines(review_pair(store, args.baseline, args.preview))))
            raise
        print("\n".join(review_lines(doc)))
        print(f"{'created' if created else 'existing'} replay run {run.id} ({run.status}), "
              "0 model requests")  # fmt: skip
        report = report_from_store(store, run.id)
        print()
        print("\n".join(render_summary(report)))
        if args.json:
            write_report(report, Path(args.json))
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with open(summary, "a", encoding="utf-8") as handle:
                handle.write("\n".join(replay_markdown(report)) + "\n")
        if args.print_run_id:
            print(json.dumps({"run_id": run.id, "created": created}))
        return 0
    finally:
        store.close()


def add_replay_command(subparsers: Any) -> None:
    """Register ``replay`` on the main parser's subcommands."""
    replay = subparsers.add_parser(
        "replay",
        help="estimate a router offline from its preview and a live run of single models "
        "(no model requests)",
        description="From a completed live run of single-model targets (--baseline) and a "
        "completed preview of a router on the same frozen cases and sampling (--preview), "
        "create a replay run (mode replay): each routed cell takes the selected model's "
        "answer from the baseline. Its accuracy, cost and latency are estimates; compare and "
        "the gate refuse it as live evidence. A cell that cannot be replayed is named with "
        "its replay_ineligible reason and refuses the replay.",
    )
    replay.add_argument("--baseline", required=True, metavar="LIVE_RUN")
    replay.add_argument("--preview", required=True, metavar="PREVIEW_RUN")
    replay.add_argument(
        "--idempotency-key", metavar="KEY", help="the same key returns the same run"
    )
    replay.add_argument(
        "--review", action="store_true", help="only print the review (which cells can replay)"
    )
    replay.add_argument("--json", metavar="FILE", help="write the replay run's JSON report")
    replay.add_argument(
        "--print-run-id", action="store_true", help="end with a JSON line {run_id, created}"
    )
    replay.set_defaults(func=cmd_replay)
