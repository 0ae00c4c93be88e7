"""The quick profile end to end on synthetic suites: ``srbench datasets synth --profile quick``
(740 cases in nine benchmarks), then one pytest run of both simulated targets at latency 0 and
concurrency 64 — what tests/datasets/test_synth.py checks for correctness, timed here.

    python bench/synth_quick.py [--repeat 3]   (from the repository root)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_srbench.cli.datasets import main as datasets_main

PRICES = "input = 1.0\ncached_input = 0.5\ncache_write = 1.0\noutput = 2.0\n"
CONFIG = f"""
default_targets = ["synth-oracle", "synth-contrarian"]

[[targets]]
id = "synth-oracle"
model = "synth-oracle"
simulated = true
[targets.prices.synth-oracle]
{PRICES}
[[targets]]
id = "synth-contrarian"
model = "synth-contrarian"
simulated = true
[targets.prices.synth-contrarian]
{PRICES}
[simulator.models.synth-oracle]
accuracy = 1.0
latency_s = 0
[simulator.models.synth-oracle.prices]
{PRICES}
[simulator.models.synth-contrarian]
accuracy = 0.0
latency_s = 0
[simulator.models.synth-contrarian.prices]
{PRICES}"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srbench-synth-quick-") as scratch:
        project = Path(scratch)
        (project / "srbench.toml").write_text(CONFIG)
        synth = ["datasets", "synth", "--profile", "quick", "--out", str(project / "suites")]
        start = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            if datasets_main(synth):
                raise SystemExit("srbench datasets synth failed")
        synth_s = time.perf_counter() - start
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "--srbench-profile=quick", "--srbench-concurrency", "64",
                   "--srbench-json=report.json", "--srbench-store=.srbench"]  # fmt: skip
        process, wall = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
            process.append(time.perf_counter() - start)
            report = json.loads((project / "report.json").read_text())
            if done.returncode != 0 or report["status"] != "completed":
                raise SystemExit(f"the quick run failed:\n{done.stdout[-3000:]}")
            wall.append(report["summary"]["wall_time_s"])
            cells = report["summary"]["planned_cells"]
    print(f"{'synthesize the quick suites':<40}{synth_s:>8.2f} s")
    print(f"{'quick run, pytest process (median)':<40}{statistics.median(process):>8.2f} s")
    print(f"{'quick run, the run itself (median)':<40}{statistics.median(wall):>8.2f} s"
          f"  ({cells} cells, {args.repeat} runs)")  # fmt: skip


if __name__ == "__main__":
    main()
