"""Framework overhead: pytest-srbench against the simulator at fixed latency, beside a
hand-written asyncio loop on the same transport and, with --peers, lm-eval and inspect-ai; the
same cases also run as a benchmark written as a pytest test ("as test functions").

Every tool is timed twice: the whole command as a user types it (from spawn to exit: start-up,
imports, collection, the run, the report, the exit; with --endpoint built-in the simulator's
start too), and the run alone (for
pytest-srbench the run's own wall time, created → finished; the request phase for the loop
and the peers). Peak RSS is the operating system's figure for the whole command, read when it
exits (``wait4``), not a sample taken by the process.

    python bench/overhead.py                       # the default settings
    python bench/overhead.py --settings large      # N=20,000, L=1 s, C=512 in one process
    python bench/overhead.py --settings large-2048 # the same at C=2048 (cells/s: goal >= 1,000)
    python bench/overhead.py --settings large-2048-n2  # C=2048 as -n 2 x C=1024 (two processes)
    python bench/overhead.py --settings 100000-0ms --no-loop --no-test-functions
                                                   # 100,000 cells in one process (memory)
    python bench/overhead.py --settings all --repeat 3
    python bench/overhead.py --settings 2000-0ms --repeat 3 --no-loop --no-test-functions --cached
                                                   # also the same run fully answered from the
                                                   # response cache (--srbench-cache): its CPU
                                                   # against the live run's (target <= 0.5x)
    python bench/overhead.py --settings 2000-0ms --repeat 3 --no-loop --as-tests sdk,sdk-stream
                                                   # the openai SDK on srbench_client, its CPU
                                                   # against the configured target's (<= 1.3x)
    python bench/overhead.py --peers               # also lm-eval and inspect-ai (installed once
                                                   # into .cache/bench-peers, a throwaway venv)
    python bench/overhead.py --phases              # where each command's time went
    python bench/overhead.py --baseline-tree DIR   # also an earlier source tree, side by side
                                                   # (e.g. `git archive main | tar -x -C DIR`),
                                                   # its test-function rows too
    python bench/overhead.py --endpoint built-in   # the plugin's own simulated target (started
                                                   # inside the command) instead of one
                                                   # simulator per setting started outside

Beside them, the floor of any framework whose cells are pytest items: pytest alone running N
no-op parametrized tests (plugin not loaded; ``--no-floor`` skips it). Each rep runs every
tool once, in the table's order (interleaved rep by rep, not tool by tool); the "cpu × loop"
column is each command's CPU over the hand-written loop's.

Prints one table; every ratio compares tools measured side by side in this run.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

if TYPE_CHECKING:
    from pytest_srbench.simulator.process import SimulatorProcess

from _peers import PEERS, run_peer
from _user_venv import user_python
from _workload import (
    PHASES,
    Workload,
    make_project,
    run_hand_loop_command,
    run_pytest,
    run_pytest_floor,
    start_endpoint,
    use_python,
)

SETTINGS = {
    "2000-200ms": Workload(cells=2000, latency_s=0.2, chunks=200, concurrency=64),
    "2000-200ms-short": Workload(cells=2000, latency_s=0.2, chunks=1, concurrency=64),
    "2000-0ms-stream": Workload(cells=2000, latency_s=0.0, chunks=200, concurrency=64),
    "2000-0ms": Workload(cells=2000, latency_s=0.0, chunks=1, concurrency=64),
    "4000-200ms-n2": Workload(cells=4000, latency_s=0.2, chunks=200, concurrency=32, workers=2),
    "4000-200ms-n2-short": Workload(cells=4000, latency_s=0.2, chunks=1, concurrency=32, workers=2),
    "20000-0ms": Workload(cells=20000, latency_s=0.0, chunks=1, concurrency=64),
    "large": Workload(cells=20000, latency_s=1.0, chunks=1, concurrency=512),
    "large-2048": Workload(cells=20000, latency_s=1.0, chunks=1, concurrency=2048),
    "large-2048-n2": Workload(cells=20000, latency_s=1.0, chunks=1, concurrency=1024, workers=2),
    "100000-0ms": Workload(cells=100000, latency_s=0.0, chunks=1, concurrency=64),
    "quick-200ms": Workload(cells=500, latency_s=0.2, chunks=200, concurrency=64),
    "quick-0ms": Workload(cells=500, latency_s=0.0, chunks=1, concurrency=64),
}
DEFAULT_SETTINGS = [
    "2000-200ms-short",
    "2000-200ms",
    "2000-0ms-stream",
    "2000-0ms",
    "4000-200ms-n2-short",
    "4000-200ms-n2",
    "20000-0ms",
]
GROUPS = {
    "default": DEFAULT_SETTINGS,
    "all": [*DEFAULT_SETTINGS, "large"],
    "quick": ["quick-200ms", "quick-0ms"],
}
HEADER = ["tool", "workload", "command s", "cmd/ideal", "run s", "run/ideal", "ideal s",
          "cmd ms/cell", "run ms/cell", "cpu s", "cpu × loop", "peak RSS MB", "× ours",
          "note"]  # fmt: skip
LOOP = "hand-written loop"
FLOOR = "pytest floor"
CACHED = "  cached (--srbench-cache)"
NOTES = {
    LOOP: "aiohttp + orjson, no journal",
    FLOOR: "pytest alone: N no-op tests, plugin not loaded",
}


def fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def median(runs: Sequence[Any], field: str) -> float:
    return float(statistics.median(getattr(run, field) for run in runs))


def row(
    tool: str,
    workload: Workload,
    command: float | None,
    run: float | None,
    cpu: float | None,
    rss: float | None,
    ours: float | None,
    note: str = "",
    *,
    loop_cpu: float | None = None,
) -> list[str]:
    """One line of the table; per-cell figures are (time − ideal) / cells."""
    ideal = workload.ideal_s

    def ratio(value: float | None) -> str:
        return fmt(value / ideal) if value is not None and ideal else "—"

    def per_cell(value: float | None) -> str:
        return "—" if value is None else fmt((value - ideal) / workload.cells * 1000, 3)

    return [
        tool, workload.label(), fmt(command), ratio(command), fmt(run), ratio(run), fmt(ideal),
        per_cell(command), per_cell(run), fmt(cpu),
        fmt(cpu / loop_cpu) if cpu is not None and loop_cpu else "—", fmt(rss, 0),
        fmt(command / ours) if ours and command else "—", note,
    ]  # fmt: skip


def checked(runs: Sequence[Any], cells: int) -> str:
    """Every run completed with exactly one call row per cell (no lost or duplicate row)."""
    note = "rows == cells" if all(r.calls == r.cells == cells for r in runs) else "ROW MISMATCH"
    return note + ("" if all(r.status == "completed" for r in runs) else " (not completed!)")


def print_table(rows: list[list[str]], header: list[str]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for line in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())


# the rows of the cases written as a test function: what the test calls
AS_TESTS = {
    "target": "as test functions",  # srbench_target.ask
    "client": "as tests, srbench_client",  # srbench_client.chat
    "sdk": "as tests, openai SDK",  # srbench_client.async_openai(), non-streaming
    "sdk-stream": "as tests, openai SDK, stream",  # the same, stream=True
}
DEFAULT_AS_TESTS = "target,client,sdk"


def as_test_rows(args: argparse.Namespace) -> list[str]:
    """The test-function rows this run measures (``--as-tests``; none with
    ``--no-test-functions``)."""
    if args.no_test_functions:
        return []
    return [name for name in args.as_tests.split(",") if name]


def measure(
    args: argparse.Namespace,
    workload: Workload,
    folder: Path,
    endpoint: SimulatorProcess | None,
    trees: dict[str, str | None],
    rows: list[list[str]],
    phase_rows: list[list[str]],
) -> None:
    """Every tool's rows for one setting (against ``endpoint`` when one runs), the tools
    interleaved rep by rep (each rep runs every tool once, in the same order), so that the
    machine's noise falls on every tool alike."""
    base_url = endpoint.base_url if endpoint is not None else None
    project = make_project(folder, workload, base_url)
    # (label, command, rows check?) in the order each rep runs them; the cached row follows the
    # live runs, which fill the store's cache (every cell of it then hits)
    tools: list[tuple[str, Callable[[], Any], bool]] = [
        (label, functools.partial(run_pytest, project, workload, pythonpath=tree,
                                  phases=args.phases), True)
        for label, tree in trees.items()
    ]  # fmt: skip
    if args.cached:
        cached = functools.partial(run_pytest, project, workload, extra_args=["--srbench-cache"])
        tools.append((CACHED, cached, True))
    # each tree's test-function rows too (a baseline tree's against its own configured target)
    configured_of: dict[str, str] = {}
    for path in as_test_rows(args) if workload.cells <= 4000 else []:
        for tree_label, tree in trees.items():
            suffix = "" if tree_label == "pytest-srbench" else f" ({tree_label.strip()})"
            label = f"  {AS_TESTS[path]}{suffix}"
            configured_of[label] = tree_label
            tools.append((label, functools.partial(run_pytest, project, workload, as_test=path,
                                                   pythonpath=tree), True))  # fmt: skip
    if workload.workers == 1 and not args.no_loop:
        loop = functools.partial(run_hand_loop_command, workload, base_url=base_url)
        tools.append((LOOP, loop, False))
    if workload.workers == 1 and not args.no_floor:
        floor = functools.partial(
            run_pytest_floor, folder.parent / f"{folder.name}-floor", workload
        )
        tools.append((FLOOR, floor, False))
    runs: dict[str, list[Any]] = {label: [] for label, _, _ in tools}
    for _ in range(args.repeat):
        for label, command, _ in tools:
            runs[label].append(command())
    ours = median(runs["pytest-srbench"], "process_s")
    loop_cpu = median(runs[LOOP], "cpu_s") if LOOP in runs else None
    live_cpu = median(runs["pytest-srbench"], "cpu_s")
    for label, _, counted in tools:
        done = runs[label]
        cpu = median(done, "cpu_s")
        notes = [checked(done, workload.cells)] if counted else []
        if label in trees:
            reported = max(run.report_rss_mb or 0 for run in done) or None
            notes.append(f"report says {fmt(reported, 0)} MB")
        if label == CACHED:
            notes.append(f"cpu {cpu / live_cpu:.2f}x live")
        if label in configured_of:
            configured_cpu = median(runs[configured_of[label]], "cpu_s")
            notes.append(f"cpu {cpu / configured_cpu:.2f}x configured")
        notes += [NOTES[label]] if label in NOTES else []
        walls = [run.wall_s for run in done if run.wall_s is not None]
        rows.append(
            row(label, workload, median(done, "process_s"),
                statistics.median(walls) if walls else None, cpu,
                max(run.peak_rss_mb or 0 for run in done) or None, ours, "; ".join(notes),
                loop_cpu=loop_cpu)
        )  # fmt: skip
        if args.phases and label in trees:
            spent = {
                phase: statistics.median((r.phases or {}).get(phase, 0.0) for r in done)
                for phase, _, _ in PHASES
            }
            phase_rows.append([label.strip(), workload.label(), *(fmt(v) for v in spent.values())])
    if args.peers and workload.workers == 1 and workload.cells <= 2000 and workload.chunks == 200:  # fmt: skip
        for peer in PEERS:
            try:
                peers = [run_peer(peer, workload, base_url) for _ in range(args.repeat)]
            except RuntimeError as error:
                last = str(error).strip().splitlines()[-1]
                rows.append([peer, workload.label(), *["—"] * 11, f"failed: {last}"[:80]])
                continue
            rows.append(
                row(peer, workload, median(peers, "process_s"), median(peers, "wall_s"),
                    median(peers, "cpu_s"), max(r.peak_rss_mb for r in peers), ours,
                    "non-streaming (its default); simulator not in its cpu s", loop_cpu=loop_cpu)
            )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=1, help="medians of this many runs")
    parser.add_argument(
        "--settings",
        default="default",
        help=f"a group ({', '.join(GROUPS)}) or setting names, comma-separated "
        f"({', '.join(SETTINGS)})",
    )
    parser.add_argument("--peers", action="store_true", help="also run lm-eval and inspect-ai")
    parser.add_argument("--phases", action="store_true", help="where each command's time went")
    parser.add_argument("--baseline-tree", metavar="DIR", help="also measure this source tree")
    parser.add_argument(
        "--no-test-functions", action="store_true", help="skip the 'as test functions' rows"
    )
    parser.add_argument(
        "--as-tests",
        default=DEFAULT_AS_TESTS,
        metavar="ROWS",
        help="which test-function rows to measure, comma-separated "
        f"({', '.join(AS_TESTS)}; default {DEFAULT_AS_TESTS}); each notes its CPU against the "
        "configured target's",
    )
    parser.add_argument("--no-loop", action="store_true", help="skip the hand-written loop")
    parser.add_argument(
        "--no-floor", action="store_true", help="skip pytest's own floor (N no-op tests)"
    )
    parser.add_argument(
        "--cached",
        action="store_true",
        help="also the same run answered from the response cache (--srbench-cache) after the "
        "live runs filled it: its CPU against the live run's",
    )
    parser.add_argument(
        "--endpoint",
        choices=["external", "built-in"],
        default="external",
        help="external (default): every tool drives one simulator this benchmark starts per "
        "setting, outside the timed commands, as the peers are measured; built-in: "
        "pytest-srbench's simulated target (the plugin starts it inside the command, beside "
        "collection) and a simulator the loop's command starts before its requests",
    )
    parser.add_argument("--quick", action="store_true", help="the same as --settings quick")
    parser.add_argument(
        "--dev-env",
        action="store_true",
        help="time commands under this interpreter (with the dev extra's pytest plugins) "
        "instead of a user's installation (.cache/bench-user)",
    )
    args = parser.parse_args()
    unknown_rows = [name for name in as_test_rows(args) if name not in AS_TESTS]
    if unknown_rows:
        parser.error(f"unknown --as-tests row(s) {', '.join(unknown_rows)}; known: "
                     f"{', '.join(AS_TESTS)}")  # fmt: skip
    if not args.dev_env:  # the SDK rows need the SDK, installed as a user installs it
        sdk = any(name.startswith("sdk") for name in as_test_rows(args))
        use_python(user_python(*(["openai"] if sdk else [])))
    names = GROUPS.get("quick" if args.quick else args.settings) or args.settings.split(",")
    unknown = [name for name in names if name not in SETTINGS]
    if unknown:
        parser.error(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(SETTINGS)}")
    rows: list[list[str]] = []
    phase_rows: list[list[str]] = []
    trees: dict[str, str | None] = {"pytest-srbench": None}
    if args.baseline_tree:
        trees["  baseline tree"] = str(Path(args.baseline_tree).resolve())
    with tempfile.TemporaryDirectory(prefix="srbench-bench-") as scratch:
        warm = make_project(Path(scratch) / "warm", SETTINGS["quick-0ms"])
        for tree in trees.values():  # byte-compile each tree once, as an installed package is
            run_pytest(warm, SETTINGS["quick-0ms"], pythonpath=tree)
        for index, name in enumerate(names):
            workload = SETTINGS[name]
            endpoint = start_endpoint(workload) if args.endpoint == "external" else None
            try:
                measure(args, workload, Path(scratch) / f"w{index}", endpoint, trees, rows,
                        phase_rows)  # fmt: skip
            finally:
                if endpoint is not None:
                    endpoint.stop()
    print_table(rows, HEADER)
    print(
        "\ncommand = the whole command, spawn to exit; run = the run's own wall time (created → "
        "finished) for pytest-srbench, the request phase for the loop and the peers; ideal = "
        "cells × latency / total concurrency; ms/cell = (time − ideal) / cells; peak RSS = the "
        "OS's ru_maxrss of the command at exit (its largest process); cpu s = the command's CPU time "
        "(with a simulator it started); cpu × loop = cpu s / the hand-written loop's; × ours = "
        "command / ours; pytest floor = pytest alone running N no-op tests (one item per cell, "
        "nothing else). Every rep runs every tool once, in the table's order. Endpoint: "
        + (
            "one simulator per setting, started before and outside the timed commands."
            if args.endpoint == "external"
            else "the plugin's simulated target; the loop starts its own simulator."
        )
    )
    if phase_rows:
        print()
        print_table(phase_rows, ["tool", "workload", *(name for name, _, _ in PHASES)])
        print("\nseconds per phase of the whole command (medians); 'exit' runs from the terminal "
              "summary to the process's end (pytest's unconfigure, interpreter teardown).")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
