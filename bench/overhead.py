"""Framework overhead: pytest-srbench against the built-in simulator at fixed latency, beside a
hand-written asyncio loop on the same transport and, with --peers, lm-eval and inspect-ai; the
same cases also run as a benchmark written as a pytest test ("as test functions", × ours = its
wall over the shipped-suite path)

    python bench/overhead.py                 # our settings + the hand-written loop
    python bench/overhead.py --peers         # also lm-eval and inspect-ai (installed once
                                             # into .cache/bench-peers, a throwaway venv)
    python bench/overhead.py --repeat 3      # medians of three runs

Prints one table; every ratio compares tools measured side by side in this run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _peers import PEERS, run_peer
from _workload import Workload, make_project, run_hand_loop, run_pytest

SETTINGS = [
    Workload(cells=2000, latency_s=0.2, chunks=200, concurrency=64),
    Workload(cells=2000, latency_s=0.0, chunks=200, concurrency=64),
    Workload(cells=2000, latency_s=0.0, chunks=1, concurrency=64),
    Workload(cells=4000, latency_s=0.2, chunks=200, concurrency=32, workers=2),
    Workload(cells=20000, latency_s=0.0, chunks=1, concurrency=64),
]
QUICK = [
    Workload(cells=500, latency_s=0.2, chunks=200, concurrency=64),
    Workload(cells=500, latency_s=0.0, chunks=1, concurrency=64),
]


def fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def row(
    tool: str,
    workload: Workload,
    wall: float,
    rss: float | None,
    ours: float | None,
    note: str = "",
) -> list[str]:
    ideal = workload.ideal_s
    return [
        tool, workload.label(), fmt(wall), fmt(ideal), fmt(wall / ideal) if ideal else "—",
        fmt((wall - ideal) / workload.cells * 1000, 3), fmt(workload.cells / wall, 0), fmt(rss, 0),
        fmt(wall / ours) if ours else "—", note,
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--peers", action="store_true", help="also run lm-eval and inspect-ai")
    parser.add_argument(
        "--quick", action="store_true", help="small settings (a smoke test of the bench)"
    )
    args = parser.parse_args()
    rows: list[list[str]] = []
    settings = QUICK if args.quick else SETTINGS
    with tempfile.TemporaryDirectory(prefix="srbench-bench-") as scratch:
        for index, workload in enumerate(settings):
            project = make_project(Path(scratch) / f"w{index}", workload)
            runs = [run_pytest(project, workload) for _ in range(args.repeat)]
            wall = statistics.median(run.wall_s for run in runs)
            rss = max((run.peak_rss_mb or 0) for run in runs) or None
            duplicates = [
                run for run in runs if run.calls != workload.cells or run.cells != workload.cells
            ]
            note = "rows == cells" if not duplicates else "ROW COUNT MISMATCH"
            note += "" if all(run.status == "completed" for run in runs) else " (not completed!)"
            rows.append(row("pytest-srbench", workload, wall, rss, None, note))
            if workload.cells <= 4000:
                for path, label in (
                    ("target", "as test functions"),
                    ("client", "as tests, srbench_client"),
                ):
                    tests = [
                        run_pytest(project, workload, as_test=path) for _ in range(args.repeat)
                    ]
                    test_wall = statistics.median(run.wall_s for run in tests)
                    test_rss = max((run.peak_rss_mb or 0) for run in tests) or None
                    counted = all(r.calls == r.cells == workload.cells for r in tests)
                    rows.append(
                        row(f"  {label}", workload, test_wall, test_rss, wall,
                            "rows == cells" if counted else "ROW COUNT MISMATCH")
                    )  # fmt: skip
            if workload.workers == 1 and workload.cells <= 4000:
                loop = statistics.median(run_hand_loop(workload) for _ in range(args.repeat))
                rows.append(
                    row(
                        "hand-written loop",
                        workload,
                        loop,
                        None,
                        wall,
                        "aiohttp + orjson, no journal",
                    )
                )
            if (
                args.peers
                and workload.workers == 1
                and workload.cells <= 2000
                and workload.chunks == 200
            ):
                for peer in PEERS:
                    try:
                        peer_wall = statistics.median(
                            run_peer(peer, workload) for _ in range(args.repeat)
                        )
                    except RuntimeError as error:
                        rows.append(
                            [
                                peer,
                                workload.label(),
                                "—",
                                "—",
                                "—",
                                "—",
                                "—",
                                "—",
                                "—",
                                f"failed: {error}"[:80],
                            ]
                        )
                        continue
                    rows.append(
                        row(peer, workload, peer_wall, None, wall, "non-streaming (its default)")
                    )
    header = ["tool", "workload", "wall s", "ideal s", "wall/ideal", "overhead ms/cell", "cells/s",
              "peak RSS MB", "× ours", "note"]  # fmt: skip
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for line in [header, ["-" * w for w in widths], *rows]:
        print(
            "  ".join(
                str(cell).ljust(width) for cell, width in zip(line, widths, strict=True)
            ).rstrip()
        )
    print("\nwall = the run's own wall time (created → finished) for pytest-srbench, the request phase for the"
          " loop and the peers; ideal = cells × latency / total concurrency; overhead = (wall − ideal) / cells.")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
