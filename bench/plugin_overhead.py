"""What installing pytest-srbench costs a project that does not use it.

Runs ``pytest`` on a one-test project with the plugin loaded (as installed) and with
``-p no:srbench``, alternating the two so that machine noise falls on both equally, and
prints the median wall time, CPU time and peak RSS of each and their ratio.

    python bench/plugin_overhead.py              # 15 alternating pairs
    python bench/plugin_overhead.py --repeat 31

The goal (issue 15): wall time with the plugin within 10 % of without (ratio ≤ 1.10).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEST = "def test_one():\n    assert 1 + 1 == 2\n"


def timed_pytest(project: Path, extra: list[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds of one ``pytest -q`` in ``project``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or "1 passed" not in done.stdout:
        raise SystemExit(f"pytest failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def peak_rss_mb(project: Path, extra: list[str]) -> float:
    """Peak RSS of one pytest run, measured in a fresh parent so no earlier child counts."""
    code = (
        "import resource, subprocess, sys\n"
        f"subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', *{extra!r}],"
        " capture_output=True, check=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=project, capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip()) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15, help="alternating pairs (default 15)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srbench-unused-") as folder:
        project = Path(folder)
        (project / "test_one.py").write_text(TEST)
        (project / "pytest.ini").write_text("[pytest]\n")
        variants = {"with srbench": [], "-p no:srbench": ["-p", "no:srbench"]}
        walls: dict[str, list[float]] = {name: [] for name in variants}
        cpus: dict[str, list[float]] = {name: [] for name in variants}
        for extra in variants.values():  # warm the file cache once each
            timed_pytest(project, extra)
        for _ in range(args.repeat):
            for name, extra in variants.items():
                wall, cpu = timed_pytest(project, extra)
                walls[name].append(wall)
                cpus[name].append(cpu)
        rss = {name: peak_rss_mb(project, extra) for name, extra in variants.items()}
    base = "-p no:srbench"
    print(f"pytest on a one-test project, medians of {args.repeat} alternating runs")
    print(f"{'variant':<16} {'wall s':>8} {'cpu s':>8} {'peak RSS MB':>12}")
    for name in variants:
        print(
            f"{name:<16} {statistics.median(walls[name]):>8.3f} "
            f"{statistics.median(cpus[name]):>8.3f} {rss[name]:>12.1f}"
        )
    wall_ratio = statistics.median(walls["with srbench"]) / statistics.median(walls[base])
    cpu_ratio = statistics.median(cpus["with srbench"]) / statistics.median(cpus[base])
    print(
        f"ratio with/without: wall {wall_ratio:.3f}, cpu {cpu_ratio:.3f}, "
        f"RSS {rss['with srbench'] - rss[base]:+.1f} MB (goal: wall ≤ 1.10)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
