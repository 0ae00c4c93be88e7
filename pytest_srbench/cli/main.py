"""The ``srbench`` command line: inspect runs and reports in a store, run the simulator.

It reuses the core, the store and the renderers; it never imports pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_srbench.cli.cache import add_cache_commands
from pytest_srbench.cli.datasets import add_datasets_commands
from pytest_srbench.cli.offline import add_offline_commands
from pytest_srbench.cli.reconcile import add_reconcile_commands
from pytest_srbench.cli.replay import add_replay_command
from pytest_srbench.cli.serve import add_serve_command
from pytest_srbench.cli.servers import cmd_preview, cmd_real, cmd_sim
from pytest_srbench.cli.store_args import DEFAULT_STORE, command_store
from pytest_srbench.core.commands import pytest_recover_command, srbench_command
from pytest_srbench.core.errors import InputError, SrbenchError
from pytest_srbench.core.plan.choices import (
    GATE_FAILED,
    GATE_INTERVALS,
    GATE_MODES,
    GATE_SCOPES,
    RECOVERY_MODES,
)

if TYPE_CHECKING:
    from pytest_srbench.store.base import Store

# Each command imports what it runs when it runs: `srbench --help` and argument errors load
# neither pydantic nor the store.


def _store(args: argparse.Namespace) -> Store:
    return command_store(args.store)


def _named_store(args: argparse.Namespace) -> str | None:
    """The store to name in a command printed for the user (None: the default one)."""
    return None if args.store == DEFAULT_STORE else str(args.store)


def _page(rows: list[dict[str, Any]], limit: int, cursor: str) -> tuple[list[dict[str, Any]], Any]:
    """A page of ``limit`` rows (``limit + 1`` were read) and the cursor of the next one."""
    if len(rows) > limit:
        return rows[:limit], rows[limit - 1][cursor]
    return rows, None


def _elapsed(started: str | None) -> float | None:
    if not started:
        return None
    return round((datetime.now(UTC) - datetime.fromisoformat(started)).total_seconds(), 3)


def _report(store: Store, run_id: str) -> dict[str, Any]:
    from pytest_srbench.app.reports import report_from_store

    return report_from_store(store, run_id)


def _run_error_text(error: tuple[str | None, str | None]) -> str:
    """A run's error as ``srbench runs`` lists it: the code and the text a reader needs
    ("BENCHMARK_RUN_FAILED: Runner process stopped …"), either one alone when the other is
    missing."""
    code, text = error
    if code and text:
        return text if text.startswith(code) else f"{code}: {text}"
    return code or text or ""


def cmd_runs(args: argparse.Namespace) -> int:
    from pytest_srbench.core.benchmark_errors import run_error
    from pytest_srbench.render.terminal import table

    store = _store(args)
    runs = store.list_runs(limit=args.limit, offset=args.offset, status=args.status)
    rows = []
    for run in runs:
        outline = store.plan_outline(run.id)
        rows.append(
            [run.id, run.status, outline.profile, ",".join(outline.target_ids),
             str(len(outline.cells)), run.created_at[:19], _run_error_text(run_error(run.status, run.error))]
        )  # fmt: skip
    header = ["run", "status", "profile", "targets", "cells", "created (UTC)", "error"]
    for line in table(header, rows):
        print(line)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from pytest_srbench.core.calls.recipes import recipe_summary
    from pytest_srbench.store.base import StoreError

    store = _store(args)
    run = store.require_run(args.run)
    if args.call_id:
        call = store.get_call(args.call_id)
        if call is None or call.get("_seq") is None or call.get("case_id") is None:
            raise StoreError(f"no call {args.call_id!r} in {store.location}")
        print(json.dumps({"call": call}, indent=2))
        return 0
    if args.recipes:
        manifest = store.get_manifest(args.run)
        snapshots = store.recipes(args.run)
        rows = [
            snapshots.get(t.id) or recipe_summary(t, None)
            for t in manifest.targets
            if t.kind == "mom"
        ]
        print(json.dumps({"recipes": rows}, indent=2))
        return 0
    if args.results:
        rows, cursor = _page(
            store.results(args.run, after=args.after, limit=args.limit + 1), args.limit, "_row"
        )
        print(json.dumps({"results": rows, "next_cursor": cursor}, indent=2))
        return 0
    if args.calls:
        rows, cursor = _page(
            store.calls(args.run, active=args.active, after=args.after, limit=args.limit + 1),
            args.limit,
            "_seq",
        )
        for row in rows:
            for key in ("request", "final", "reasoning", "raw_usage", "tool_calls"):
                row.pop(key, None)
            if args.active:
                row["elapsed_s"] = _elapsed(row.get("started_at"))
        print(json.dumps({"calls": rows, "next_cursor": cursor}, indent=2))
        return 0
    if args.events:
        print(
            json.dumps(
                {"events": store.events(args.run, after=args.after, limit=min(args.limit, 1000))},
                indent=2,
            )
        )
        return 0
    outline = store.plan_outline(args.run)
    print(json.dumps(
        {"run": run.model_dump(), "plan_sha256": outline.plan_sha256, "profile": outline.profile,
         "targets": outline.target_ids, "cells": len(outline.cells)},
        indent=2,
    ))  # fmt: skip
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    from pytest_srbench.app.lifecycle import request_cancel
    from pytest_srbench.core.models import TERMINAL_RUN_STATUSES

    store = _store(args)
    before = store.require_run(args.run)
    run = request_cancel(store, args.run)
    if before.status in TERMINAL_RUN_STATUSES:
        print(f"run {run.id} is already {run.status}; nothing to cancel")
    else:
        print(f"cancellation requested for {run.id} (now {run.status}); its processes stop "
              "dispatching, abort in-flight calls and end it cancelled")  # fmt: skip
    return 0


def cmd_recover_plan(args: argparse.Namespace) -> int:
    from collections import Counter
    from operator import itemgetter

    import orjson

    from pytest_srbench.app.recovery import plan_for
    from pytest_srbench.render.outputs import write_output

    store = _store(args)
    plan = plan_for(store, args.run, args.mode)
    if args.output:
        write_output(args.output, orjson.dumps(plan, option=orjson.OPT_INDENT_2) + b"\n")
    reasons = Counter(map(itemgetter("reason"), plan["excluded"]))
    print(f"recovery plan for {args.run} ({args.mode}): {plan['counts']['eligible']} eligible, "
          f"{plan['counts']['excluded']} excluded; plan {plan['plan_sha256'][:16]}")  # fmt: skip
    for reason, count in sorted(reasons.items()):
        print(f"  {count:>7}  {reason}")
    if args.output:
        then = srbench_command(
            _named_store(args), "recover", args.run, f"--plan={args.output}",
            "--idempotency-key=KEY",
        )  # fmt: skip
        print(f'written to {args.output}; add "selected_cells" to choose a subset, then: {then}')
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    from pytest_srbench.app.recovery import create_child, read_plan_file
    from pytest_srbench.core.offline.recovery import RecoveryError

    store = _store(args)
    plan = read_plan_file(Path(args.plan))
    if plan.get("parent_run_id") != args.run:
        raise RecoveryError("Recovery plan belongs to another parent run")
    run, created = create_child(
        store,
        args.run,
        plan,
        idempotency_key=args.idempotency_key,
        acknowledge_new_attempt=args.acknowledge_new_attempt,
    )
    print(f"{'created' if created else 'existing'} recovery child {run.id} ({run.status}) of "
          f"{args.run}: {len(store.plan_outline(run.id).cells)} cells")  # fmt: skip
    acknowledge = args.acknowledge_new_attempt and plan.get("mode") == "failed"
    command = pytest_recover_command(
        args.plan,
        args.idempotency_key,
        store=_named_store(args),
        acknowledge_new_attempt=acknowledge,
    )
    print(f"run it with: {command}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from pytest_srbench.app.reports import report_from_store, write_html_report
    from pytest_srbench.render.json_report import report_json, write_report
    from pytest_srbench.render.terminal import render_summary

    store = _store(args)
    # the HTML page reads the run's plan too: validated once for both (a second at 10^5 cases),
    # without its cases' content (the page reads each case's prompt from the store in turn)
    manifest = store.report_plan(args.run) if args.html else None
    report = report_from_store(store, args.run, manifest=manifest)
    if args.json:
        write_report(report, Path(args.json))
    if args.html:
        write_html_report(store, args.run, report, Path(args.html), manifest=manifest)
    if args.format == "json":
        sys.stdout.write(report_json(report))
    else:
        for line in render_summary(report):
            print(line)
    return 0


def cmd_finalize(args: argparse.Namespace) -> int:
    from pytest_srbench import __version__
    from pytest_srbench.app.reports import write_html_report
    from pytest_srbench.app.run_end import finalize_sharded
    from pytest_srbench.render.terminal import render_summary

    store = _store(args)
    report = finalize_sharded(
        store,
        args.run,
        runner={"finalized_by": f"srbench finalize ({__version__})"},
        json_path=Path(args.json) if args.json else None,
    )
    if args.html:
        write_html_report(store, args.run, report, Path(args.html))
    for line in render_summary(report):
        print(line)
    return 0


def cmd_store_copy(args: argparse.Namespace) -> int:
    from pytest_srbench.store.base import StoreError
    from pytest_srbench.store.copy import copy_runs
    from pytest_srbench.store.opening import describe_location, open_store, store_exists

    if not store_exists(args.source):
        raise StoreError(f"no store at {describe_location(args.source)}")
    source = open_store(args.source, read_only=True)
    destination = open_store(args.destination)
    outcome = copy_runs(source, destination, args.runs)
    target = describe_location(args.destination)
    for run_id in outcome.copied:
        print(f"copied {run_id} to {target}")
    for run_id in outcome.identical:
        print(f"{run_id} is already in {target} (identical): left as it is")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from pytest_srbench.app.reports import load_side
    from pytest_srbench.core.compare.runs import (
        SAME_TARGET,
        STRONGEST_SINGLE,
        ComparisonError,
        compare_many,
    )

    PAIRINGS = {"strongest-single": STRONGEST_SINGLE, "same-target": SAME_TARGET}
    from pytest_srbench.render.compare import comparison_csv, render_comparison
    from pytest_srbench.render.html import render_compare_html, write_html
    from pytest_srbench.render.outputs import write_output
    from pytest_srbench.store.opening import open_store, store_exists

    store = open_store(args.store) if store_exists(args.store) else None
    baseline = load_side(args.baseline, store)
    candidates = [load_side(reference, store) for reference in args.candidates]
    try:
        result: dict[str, Any] | None = compare_many(
            baseline,
            candidates,
            margin=args.margin,
            allow_mixed_sources=args.allow_mixed_sources,
            allow_cached=args.allow_cached,
            pairing=PAIRINGS[args.pairing],
        )
    except ComparisonError as error:
        if args.fail_on is None:
            raise
        # the gate reads the part both runs share (a benchmark on one side only is reported)
        print(f"srbench compare: no full comparison ({error}); gating the common part",
              file=sys.stderr)  # fmt: skip
        result = None
    gates = [] if args.fail_on is None else _gates(args, baseline, candidates)
    text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    if result is not None:
        if args.json:
            write_output(args.json, text)
        if args.csv:
            write_output(args.csv, comparison_csv(result))
        if args.html:
            write_html(render_compare_html(result), Path(args.html))
    if args.format == "json":
        if gates:
            text = json.dumps({"comparison": result, "gates": gates}, indent=2, ensure_ascii=False)
            text += "\n"
        sys.stdout.write(text)
    elif args.format == "csv":
        if result is not None:
            sys.stdout.write(comparison_csv(result))
    elif result is not None:
        for line in render_comparison(result):
            print(line)
    if not gates:
        return 0
    from pytest_srbench.render.compare import gate_terminal_lines

    out = sys.stdout if args.format == "text" else sys.stderr
    for gate in gates:
        for line in gate_terminal_lines(gate):
            print(line, file=out)
        print(gate["line"], file=out)
    # a failed gate's exit status is the plugin's (pytest's "tests failed")
    return 0 if all(gate["passed"] for gate in gates) else GATE_FAILED


def _gates(args: argparse.Namespace, baseline: Any, candidates: list[Any]) -> list[dict[str, Any]]:
    """The plugin's gate (``--srbench-baseline``) on every candidate against the baseline."""
    from pytest_srbench.core.compare.gate import evaluate_gate

    return [
        evaluate_gate(
            baseline,
            candidate,
            mode=args.fail_on,
            margin=args.margin,
            interval=args.interval,
            scope=args.scope,
            allow_mixed_sources=args.allow_mixed_sources,
            allow_cached=args.allow_cached,
        )
        for candidate in candidates
    ]


def _margin(text: str) -> float:
    from pytest_srbench.core.compare.gate import parse_margin

    try:
        return parse_margin(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(f"--margin {error}") from None


def _limit(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 500:
        raise argparse.ArgumentTypeError("--limit must be in 1..500")
    return value


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="srbench", description="Inspect pytest-srbench runs and reports."
    )
    root.add_argument(
        "--store",
        default=DEFAULT_STORE,
        help="store folder (default .srbench) or postgresql:// URL (credentials from "
        "PGPASSWORD, ~/.pgpass or a libpq service file)",
    )
    sub = root.add_subparsers(dest="command", required=True)

    runs = sub.add_parser("runs", help="list runs, newest first")
    runs.add_argument("--limit", type=int, default=50)
    runs.add_argument("--offset", type=int, default=0)
    runs.add_argument("--status")
    runs.set_defaults(func=cmd_runs)

    show = sub.add_parser("show", help="one run, or its results / calls / events")
    show.add_argument("run")
    view = show.add_mutually_exclusive_group()
    view.add_argument("--results", action="store_true")
    view.add_argument("--calls", action="store_true")
    view.add_argument("--events", action="store_true")
    view.add_argument("--call-id", metavar="ID", help="one call's whole receipt")
    view.add_argument(
        "--recipes", action="store_true", help="the run's frozen router recipes (redacted)"
    )
    show.add_argument("--active", action="store_true", help="with --calls: only calls in flight")
    show.add_argument("--after", type=int, default=0)
    show.add_argument("--limit", type=_limit, default=100)
    show.set_defaults(func=cmd_show)

    report = sub.add_parser("report", help="the full-denominator report of a run")
    report.add_argument("run")
    report.add_argument("--json", metavar="PATH", help="also write the JSON report")
    report.add_argument("--html", metavar="PATH", help="also write the HTML report")
    report.add_argument("--format", choices=("text", "json"), default="text")
    report.set_defaults(func=cmd_report)

    cancel = sub.add_parser("cancel", help="ask a running run to stop (it ends cancelled)")
    cancel.add_argument("run")
    cancel.set_defaults(func=cmd_cancel)

    rplan = sub.add_parser(
        "recover-plan", help="which cells of a finished run may be attempted again (read-only)"
    )
    rplan.add_argument("run")
    rplan.add_argument("--mode", choices=RECOVERY_MODES, default="undispatched")
    rplan.add_argument("--output", metavar="PLAN.json", help="write the plan for review")
    rplan.set_defaults(func=cmd_recover_plan)

    recover = sub.add_parser("recover", help="create a recovery child run from a reviewed plan")
    recover.add_argument("run")
    recover.add_argument("--plan", required=True, metavar="PLAN.json")
    recover.add_argument("--idempotency-key", required=True, metavar="KEY")
    recover.add_argument(
        "--acknowledge-new-attempt",
        action="store_true",
        help="required for --mode failed: cells that already spent money are attempted again",
    )
    recover.set_defaults(func=cmd_recover)

    fin = sub.add_parser(
        "finalize",
        help="end a sharded run whose shards all ended or died, and write its report",
    )
    fin.add_argument("run")
    fin.add_argument("--json", metavar="PATH", help="also write the JSON report here")
    fin.add_argument("--html", metavar="PATH", help="also write the HTML report here")
    fin.set_defaults(func=cmd_finalize)

    comp = sub.add_parser(
        "compare",
        help="paired comparison of runs (run ids in the store or JSON report files)",
        description="Compare candidate runs with a baseline run case by case. BASELINE and "
        "CANDIDATE are run ids in --store or paths of JSON reports; candidates are ordered by "
        "creation time.",
    )
    comp.add_argument("baseline", metavar="BASELINE")
    comp.add_argument("candidates", metavar="CANDIDATE", nargs="+")
    comp.add_argument(
        "--margin",
        type=_margin,
        default=0.05,
        help="margin for cases-needed, and the non-inferiority margin of --fail-on",
    )
    comp.add_argument(
        "--pairing",
        choices=("strongest-single", "same-target"),
        default="strongest-single",
        help="which baseline target each candidate target is paired with: the baseline's "
        "strongest single model (default, sr-bench's rule) or its target of the same id (the "
        "gate's pairing: two versions of your app; a target the baseline lacks falls back to "
        "the strongest single model)",
    )
    comp.add_argument("--format", choices=("text", "json", "csv"), default="text")
    comp.add_argument("--json", metavar="PATH", help="also write the comparison as JSON")
    comp.add_argument("--csv", metavar="PATH", help="also write the comparison as CSV")
    comp.add_argument("--html", metavar="PATH", help="also write the comparison as HTML")
    comp.add_argument(
        "--fail-on",
        choices=GATE_MODES,
        help="gate every candidate against the baseline as --srbench-baseline does (the same "
        f"verdict line) and exit {GATE_FAILED} when a gate fails: regression (a significant "
        "drop) or noninferiority (within --margin); benchmarks on one side only are reported "
        "and the common part gated",
    )
    comp.add_argument(
        "--scope",
        choices=GATE_SCOPES,
        help="with --fail-on: gate the macro score or every benchmark on its own (default: "
        "macro for the full sr-bench set, per benchmark otherwise)",
    )
    comp.add_argument(
        "--interval",
        choices=GATE_INTERVALS,
        default="wald",
        help="with --fail-on: the paired interval the gate reads (default wald)",
    )
    comp.add_argument(
        "--allow-mixed-sources",
        action="store_true",
        help="compare even when a benchmark's cases come from different data (a kind, released "
        "revision or synthetic seed); the comparison is then flagged in every format",
    )
    comp.add_argument(
        "--allow-cached",
        action="store_true",
        help="pair cells answered from the response cache (never complete live evidence); the "
        "comparison then says so",
    )
    comp.set_defaults(func=cmd_compare)

    real = sub.add_parser("real", help="build, inspect or serve the real local model parts")
    real.add_argument("action", choices=("build", "status", "serve"))
    real.add_argument(
        "--litellm",
        action="store_true",
        help="build: also install LiteLLM's proxy; serve: also start it in front of llama-server",
    )
    real.add_argument(
        "--llama-cpp-python", action="store_true", help="also build llama-cpp-python's server"
    )
    real.add_argument("--all", action="store_true", help="build every real part")
    real.add_argument("--jobs", type=int, default=2)
    real.add_argument(
        "--alias", default="smollm2-135m", help="model name llama-server answers with"
    )
    real.add_argument(
        "--port", type=int, default=0, help="serve: llama-server's port (default: a free one)"
    )
    real.add_argument(
        "--context", type=int, default=4096, help="serve: tokens per slot (default 4096)"
    )
    real.add_argument("--slots", type=int, default=4, help="serve: parallel slots (default 4)")
    real.add_argument(
        "--threads", type=int, help="serve: compute threads (default: the usable cores less one)"
    )
    real.add_argument(
        "--litellm-port", type=int, default=0, help="serve --litellm: the proxy's port"
    )
    real.set_defaults(func=cmd_real)

    add_datasets_commands(sub)
    add_reconcile_commands(sub)
    add_cache_commands(sub)
    add_offline_commands(sub)
    add_replay_command(sub)
    add_serve_command(sub)

    preview = sub.add_parser(
        "preview",
        help="preview run: ask router targets where they would route each case (runs pytest)",
    )
    preview.add_argument(
        "pytest_args",
        nargs=argparse.REMAINDER,
        help="pytest / --srbench-* options, e.g. "
        "--srbench-target sim-router --srbench-profile smoke",
    )
    preview.set_defaults(func=cmd_preview)

    store = sub.add_parser("store", help="work on whole stores")
    store_sub = store.add_subparsers(dest="store_command", required=True)
    copy = store_sub.add_parser(
        "copy",
        help="copy runs between stores (folders and postgresql:// databases), losslessly",
        description="Copy runs with everything they recorded (results, calls, events with "
        "their numbers, corrections, claims, snapshots, evidence) from SRC to DST. A run "
        "already in DST is skipped when identical and refused when different.",
    )
    copy.add_argument("source", metavar="SRC", help="store folder or postgresql:// URL")
    copy.add_argument("destination", metavar="DST", help="store folder or postgresql:// URL")
    copy.add_argument(
        "--run", action="append", dest="runs", metavar="RUN", help="copy only this run (repeat)"
    )
    copy.set_defaults(func=cmd_store_copy)

    sim = sub.add_parser("sim", help="run the built-in simulator (loopback only)")
    sim.add_argument("--host", default="127.0.0.1")
    sim.add_argument("--port", type=int, default=8089)
    sim.add_argument("--models", help="JSON list of extra simulated models")
    sim.set_defaults(func=cmd_sim)
    return root


def _split_preview(argv: list[str]) -> tuple[list[str], list[str]]:
    """``srbench [--store DIR] preview PYTEST-ARGS…``: everything after ``preview`` goes to
    pytest untouched (argparse would read pytest's options as its own)."""
    head = (
        argv[:2]
        if argv[:1] == ["--store"]
        else argv[:1]
        if argv[:1] and argv[0].startswith("--store=")
        else []
    )
    rest = argv[len(head) :]
    if rest[:1] == ["preview"]:
        return [*head, "preview"], rest[1:]
    return argv, []


def main(argv: Sequence[str] | None = None) -> int:
    own, passed = _split_preview(list(sys.argv[1:] if argv is None else argv))
    args = parser().parse_args(own)
    if args.command == "preview":
        args.pytest_args = passed
    if args.command == "show" and args.active and not args.calls:
        print("srbench: --active requires --calls", file=sys.stderr)
        return 2
    try:
        code: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
    except SrbenchError as error:  # every deliberate error: one line, named by its command
        print(f"srbench {args.command}: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `srbench runs | head`: the reader has all it wanted
        _discard_stdout()
        return BROKEN_PIPE_EXIT
    return code


BROKEN_PIPE_EXIT = 141  # 128 + SIGPIPE, what a shell reports for `yes | head`


def _discard_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's final flush of what is still
    buffered does not raise a second BrokenPipeError at exit."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
