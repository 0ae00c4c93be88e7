"""How long the srbench command takes to start, typed as a user types it: `srbench --help`
and an argument error, beside a bare `python -c pass` (the interpreter's own start-up),
interleaved in one run so that their ratio is what to read on a noisy machine.

Like an installed package, the source tree runs from cached bytecode: the commands run with
PYTHONDONTWRITEBYTECODE unset and once before timing (a tree that compiles every module on
every start measures the compiler: `srbench --help` takes about twice as long).

    python -m bench.cli_start [--repeat 9]   (from the repository root)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "srbench --help": [sys.executable, "-m", "pytest_srbench", "--help"],
    "srbench datasets --help": [sys.executable, "-m", "pytest_srbench", "datasets", "--help"],
    "srbench recover-plan (no run)": [sys.executable, "-m", "pytest_srbench", "recover-plan"],
}


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, capture_output=True, check=False, env=ENV)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for command in COMMANDS.values():  # write the bytecode caches, as an install does
        timed(command)
    for _ in range(args.repeat):
        for name, command in COMMANDS.items():
            seconds[name].append(timed(command))
    bare = statistics.median(seconds["python -c pass"])
    print(f"{'command':<32} {'median s':>9} {'min s':>7} {'× python':>9}")
    for name, values in seconds.items():
        median = statistics.median(values)
        print(f"{name:<32} {median:>9.3f} {min(values):>7.3f} {median / bare:>9.1f}")


if __name__ == "__main__":
    main()
