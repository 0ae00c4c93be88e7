"""The ``srbench cache`` sub-commands: what the response cache holds (``stats``) and forgetting
it (``clear [--older-than DURATION]``). Clearing removes index entries only: the calls and
their evidence stay in the store (docs/caching-honestly.md)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from pytest_srbench.cli.store_args import command_store

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")


def parse_duration(text: str) -> timedelta:
    """``90s``, ``15m``, ``12h``, ``30d`` or ``2w`` as a time span."""
    found = DURATION.match(text)
    if found is None:
        raise argparse.ArgumentTypeError(
            f"invalid duration {text!r}: a number and a unit (s, m, h, d or w), e.g. 30d"
        )
    try:
        span = timedelta(seconds=float(found.group(1)) * UNITS[found.group(2)])
        datetime.now(UTC) - span  # a cut-off the calendar can hold
    except OverflowError:
        raise argparse.ArgumentTypeError(
            f"invalid duration {text!r}: longer than the calendar reaches back (year 1)"
        ) from None
    return span


def cmd_cache(args: argparse.Namespace) -> int:
    store = command_store(getattr(args, "store", None))
    if args.action == "stats":
        stats = store.cache_stats()
        if args.format == "json":
            sys.stdout.write(json.dumps(stats, indent=2) + "\n")
            return 0
        print(f"cache entries: {stats['entries']}")
        for target, count in stats["targets"].items():
            print(f"  {target}: {count}")
        if stats["entries"]:
            print(f"oldest {stats['oldest']} · newest {stats['newest']}")
            print(f"live cost of the cached calls: ${stats['live_cost_usd']:.6f}")
        return 0
    older: timedelta | None = args.older_than
    before = None
    if older is not None:
        before = (datetime.now(UTC) - older).isoformat(timespec="microseconds")
    removed = store.clear_cache(before)
    if args.format == "json":
        sys.stdout.write(json.dumps({"removed": removed, "older_than": before}) + "\n")
    else:
        scope = f" made before {before}" if before else ""
        print(f"removed {removed} cache entr{'y' if removed == 1 else 'ies'}{scope}")
    return 0


def add_cache_commands(subparsers: Any) -> None:
    """Register ``cache stats|clear [--older-than DURATION]`` on the root sub-parsers."""
    command = subparsers.add_parser(
        "cache",
        help="the response cache: stats, or clear [--older-than DURATION]",
        description="What the response cache of --srbench-cache holds, or forget entries. "
        "Clearing forgets index entries only: the runs, calls and evidence stay.",
    )
    command.add_argument("action", choices=("stats", "clear"))
    command.add_argument(
        "--older-than",
        type=parse_duration,
        metavar="DURATION",
        help="clear only entries made longer ago than this (e.g. 12h, 30d, 2w)",
    )
    command.add_argument("--format", choices=("text", "json"), default="text")
    command.set_defaults(func=cmd_cache)
