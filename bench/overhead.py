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

Prints one table; every ratio compares tools measured side by side in this run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
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
          "cmd ms/cell", "run ms/cell", "cpu s", "peak RSS MB", "× ours", "note"]  # fmt: skip


def fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def median(runs: Sequence[Any], field: str) -> float:
    return float(statistics.median(getattr(run, field) for run in runs))


def row(
    tool: str,
    workload: Workload,
    command: float | None,
    run: float,
    cpu: float | None,
    rss: float | None,
    ours: float | None,
    note: str = "",
) -> list[str]:
    """One line of the table; per-cell figures are (time − ideal) / cells."""
    ideal = workload.ideal_s

    def ratio(value: float | None) -> str:
        return fmt(value / ideal) if value is not None and ideal else "—"

    def per_cell(value: float | None) -> str:
        return "—" if value is None else fmt((value - ideal) / workload.cells * 1000, 3)

    return [
        tool, workload.label(), fmt(command), ratio(command), fmt(run), ratio(run), fmt(ideal),
        per_cell(command), per_cell(run), fmt(cpu), fmt(rss, 0),
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
    """Every tool's rows for one setting (against ``endpoint`` when one runs)."""
    base_url = endpoint.base_url if endpoint is not None else None
    project = make_project(folder, workload, base_url)
    by_tree: dict[str, list[Any]] = {label: [] for label in trees}
    as_tests = as_test_rows(args) if workload.cells <= 4000 else []
    # each tree's test-function rows too (a baseline tree's against its own configured target)
    by_test: dict[tuple[str, str], list[Any]] = {
        (path, label): [] for path in as_tests for label in trees
    }
    for _ in range(args.repeat):  # interleaved, so that noise falls on every tree and row alike
        for label, tree in trees.items():
            by_tree[label].append(
                run_pytest(project, workload, pythonpath=tree, phases=args.phases)
            )
        for (path, label), tests in by_test.items():
            tests.append(run_pytest(project, workload, as_test=path, pythonpath=trees[label]))
    ours = median(by_tree["pytest-srbench"], "process_s")
    for label, runs in by_tree.items():
        rss = max(run.peak_rss_mb or 0 for run in runs) or None
        reported = max(run.report_rss_mb or 0 for run in runs) or None
        note = f"{checked(runs, workload.cells)}; report says {fmt(reported, 0)} MB"
        rows.append(
            row(label, workload, median(runs, "process_s"), median(runs, "wall_s"),
                median(runs, "cpu_s"), rss, ours, note)
        )  # fmt: skip
        if args.phases:
            spent = {
                phase: statistics.median((r.phases or {}).get(phase, 0.0) for r in runs)
                for phase, _, _ in PHASES
            }
            phase_rows.append([label.strip(), workload.label(), *(fmt(v) for v in spent.values())])
    if args.cached:  # the live runs above filled the store's cache: every cell now hits it
        cached = [
            run_pytest(project, workload, extra_args=["--srbench-cache"])
            for _ in range(args.repeat)
        ]
        live_cpu = median(by_tree["pytest-srbench"], "cpu_s")
        cached_cpu = median(cached, "cpu_s")
        share = f"cpu {cached_cpu / live_cpu:.2f}x live" if live_cpu else "cpu —"
        rows.append(
            row("  cached (--srbench-cache)", workload, median(cached, "process_s"),
                median(cached, "wall_s"), cached_cpu,
                max(r.peak_rss_mb or 0 for r in cached), ours,
                f"{checked(cached, workload.cells)}; {share}")
        )  # fmt: skip
    for (path, label), tests in by_test.items():
        cpu = median(tests, "cpu_s")
        configured_cpu = median(by_tree[label], "cpu_s")
        share = f"cpu {cpu / configured_cpu:.2f}x configured" if configured_cpu else "cpu —"
        tree = "" if label == "pytest-srbench" else f" ({label.strip()})"
        rows.append(
            row(f"  {AS_TESTS[path]}{tree}", workload, median(tests, "process_s"),
                median(tests, "wall_s"), cpu, max(r.peak_rss_mb or 0 for r in tests),
                ours, f"{checked(tests, workload.cells)}; {share}")
        )  # fmt: skip
    if workload.workers == 1 and not args.no_loop:
        loops = [run_hand_loop_command(workload, base_url=base_url) for _ in range(args.repeat)]
        rows.append(
            row("hand-written loop", workload, median(loops, "process_s"),
                median(loops, "wall_s"), median(loops, "cpu_s"),
                max(r.peak_rss_mb for r in loops), ours,
                "aiohttp + orjson, no journal")
        )  # fmt: skip
    if args.peers and workload.workers == 1 and workload.cells <= 2000 and workload.chunks == 200:  # fmt: skip
        for peer in PEERS:
            try:
                peers = [run_peer(peer, workload, base_url) for _ in range(args.repeat)]
            except RuntimeError as error:
                last = str(error).strip().splitlines()[-1]
                rows.append([peer, workload.label(), *["—"] * 10, f"failed: {last}"[:80]])
                continue
            rows.append(
                row(peer, workload, median(peers, "process_s"), median(peers, "wall_s"),
                    median(peers, "cpu_s"), max(r.peak_rss_mb for r in peers), ours,
                    "non-streaming (its default); simulator not in its cpu s")
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
        "(with a simulator it started); × ours = command / ours. Endpoint: "
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
