"""The code sandbox's own cost: the one-time isolation probe of a process, then the wall time of
a trivial run (``print(1)``) under the chosen mechanisms — the fixed price every graded code
answer pays on top of its own work.

    python bench/sandbox.py [--repeat 20]   (from the repository root)
"""

from __future__ import annotations

import argparse
import statistics
import time

from pytest_srbench.sandbox import run_python_sync
from pytest_srbench.sandbox.runner import get_plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    start = time.perf_counter()
    first = run_python_sync("pass")  # the probe runs once per process
    probe = time.perf_counter() - start
    if first.status != "ok":
        raise SystemExit(f"the sandbox does not run here: {first.reason} {first.stderr[-300:]}")
    mechanisms = ", ".join(get_plan().mechanisms) or "none"
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = run_python_sync("print(1)")
        times.append(time.perf_counter() - start)
        if (result.status, result.stdout) != ("ok", "1\n"):
            raise SystemExit(f"trivial run: {result.status} {result.reason} {result.stderr[-300:]}")
    print(f"mechanisms: {mechanisms}")
    print(f"{'first run (probe + run)':<32}{probe * 1000:>9.0f} ms")
    label = f"trivial run, median of {args.repeat}"
    print(f"{label:<32}{statistics.median(times) * 1000:>9.0f} ms")
    print(f"{'trivial run, slowest':<32}{max(times) * 1000:>9.0f} ms")


if __name__ == "__main__":
    main()
