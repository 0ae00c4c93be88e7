"""The ``srbench reconcile-usage`` sub-command: the offline accounting correction of a run."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Mapping
from typing import Any

from pytest_srbench.cli.store_args import command_store


def summary_lines(artifact: Mapping[str, Any]) -> list[str]:
    """A short text summary of a correction artifact."""
    lines = [
        f"correction {artifact['id']} ({artifact['version']}) for run {artifact['run_id']}",
        f"qualified: {'yes' if artifact['qualified'] else 'no'}",
        f"calls: {artifact['verified_call_count']} verified, "
        f"{artifact['unverifiable_call_count']} unverifiable, "
        f"{artifact['corrected_call_count']} corrected",
        f"known spend: original ${artifact['original_known_spend_usd']:.6f}, "
        f"corrected ${artifact['corrected_known_spend_usd']:.6f}",
    ]
    reasons = Counter(
        str(row.get("unknown_reason")) for row in artifact.get("calls") or [] if not row["verified"]
    )
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"  unverifiable ({count}): {reason}")
    lines.append(
        f"model requests: {artifact['model_requests']}; original receipts preserved; "
        f"created {artifact.get('created_at')}"
    )
    return lines


def cmd_reconcile_usage(args: argparse.Namespace) -> int:
    from pytest_srbench.app.reconcile import reconcile_usage

    artifact = reconcile_usage(command_store(getattr(args, "store", None)), args.run)
    if args.format == "json":
        sys.stdout.write(json.dumps(artifact, indent=2, ensure_ascii=False) + "\n")
    else:
        for line in summary_lines(artifact):
            print(line)
    return 0


def add_reconcile_commands(subparsers: Any) -> None:
    """Register ``reconcile-usage RUN [--format text|json]`` on the root sub-parsers."""
    command = subparsers.add_parser(
        "reconcile-usage",
        help="re-verify a finished live run's saved streams and append an accounting correction",
        description="Re-read every saved call stream of a terminal live run, verify it against "
        "the call's receipt and the frozen prices, and append an accounting correction that "
        "reports read from then on. Makes no model requests and never edits the original "
        "receipts; running it again on the same evidence returns the same correction.",
    )
    command.add_argument("run", metavar="RUN")
    command.add_argument("--format", choices=("text", "json"), default="text")
    command.set_defaults(func=cmd_reconcile_usage)
