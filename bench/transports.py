"""Which HTTP transport to run under the engine: the same streamed workload through each
transport pytest-srbench offers (``--srbench-transport``), measured side by side.

    python bench/transports.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _workload import Workload, make_project, run_pytest

from pytest_srbench.transport.factory import TRANSPORTS

WORKLOADS = [
    Workload(cells=2000, latency_s=0.2, chunks=200, concurrency=64),
    Workload(cells=2000, latency_s=0.0, chunks=200, concurrency=64),
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(
        f"{'transport':15} {'workload':42} {'wall s':>7} {'wall/ideal':>10} {'ms/cell':>8} {'× aiohttp':>9}"
    )
    with tempfile.TemporaryDirectory(prefix="srbench-transports-") as scratch:
        for index, base in enumerate(WORKLOADS):
            project = make_project(Path(scratch) / f"w{index}", base)
            walls: dict[str, float] = {}
            for name in TRANSPORTS:
                workload = replace(base, transport=name)
                walls[name] = statistics.median(
                    run_pytest(project, workload).wall_s for _ in range(args.repeat)
                )
            for name, wall in walls.items():
                ratio = f"{wall / base.ideal_s:.2f}" if base.ideal_s else "—"
                print(
                    f"{name:15} {base.label():42} {wall:7.2f} {ratio:>10} {wall / base.cells * 1000:8.3f}"
                    f" {wall / walls['aiohttp']:9.2f}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
