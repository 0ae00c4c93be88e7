"""Framework overhead against a real server: the smoke profile (all nine benchmarks, 36 cells)
on the locally built llama-server (SmolLM2-135M), comparing the run's wall time with the time
the servers spent: llama.cpp's own ``timings`` per call (prompt and generation milliseconds),
plus the latency of the calls the built-in simulator answered as judge and user (the
configuration of docs/howto-local-model.md binds it for hle, simpleqa-verified and tau3).

    python bench/real_overhead.py          # needs `srbench real build` once
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CONFIG = """
[tool.srbench]
default_targets = ["smollm2"]
[tool.srbench.sampling]
max_tokens = 48
[tool.srbench.limits]
preset = "slow_server"
[[tool.srbench.targets]]
id = "smollm2"
model = "smollm2-135m"
managed = "llama-server"
[tool.srbench.targets.prices.smollm2-135m]
input = 0.0
cached_input = 0.0
cache_write = 0.0
output = 0.0
[tool.srbench.benchmarks.hle]
judge = "sim-judge"
[tool.srbench.benchmarks.simpleqa-verified]
judge = "sim-judge"
[tool.srbench.benchmarks.tau3]
simulator = "sim-user"
"""


def main() -> int:
    from pytest_srbench.managed import llama
    from pytest_srbench.store import open_store

    if llama.server_binary() is None or llama.gguf_path() is None:
        print(
            "llama-server or the model is missing: run `srbench real build` first", file=sys.stderr
        )
        return 2
    print(f"{'concurrency':>11} {'cells':>5} {'calls':>5} {'run wall s':>10} {'Σ llama s':>9} {'Σ sim s':>7} "
          f"{'overhead s':>10} {'overhead ms/cell':>16}")  # fmt: skip
    for concurrency in (1, 4):
        with tempfile.TemporaryDirectory(prefix="srbench-real-") as scratch:
            root = Path(scratch)
            (root / "pyproject.toml").write_text(CONFIG)
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--srbench-profile=smoke",
                 f"--srbench-concurrency={concurrency}", "--srbench-json=report.json", "-p", "no:xdist"],
                cwd=root, capture_output=True, text=True, check=False,
            )  # fmt: skip
            if not (root / "report.json").exists():
                print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
                return 1
            report = json.loads((root / "report.json").read_text())
            (metric,) = report["summary"]["targets"]
            if metric["completed"] != metric["total"]:
                print(f"only {metric['completed']} of {metric['total']} cells completed:\n"
                      f"{done.stdout[-3000:]}", file=sys.stderr)  # fmt: skip
                return 1
            calls = open_store(root / ".srbench").calls(report["run_id"])
            llama_s = sum(
                (c["server_timings"] or {}).get("prompt_ms", 0) + (c["server_timings"] or {}).get("predicted_ms", 0)
                for c in calls if not c["simulated"]
            ) / 1000  # fmt: skip
            sim_s = sum(c["latency_s"] or 0 for c in calls if c["simulated"])
            server = llama_s + sim_s
            wall = report["summary"]["wall_time_s"]
            overhead = wall - server if concurrency == 1 else wall - server / concurrency
            cells = metric["total"]
            print(f"{concurrency:>11} {cells:>5} {len(calls):>5} {wall:>10.2f} {llama_s:>9.2f} {sim_s:>7.2f} "
                  f"{overhead:>10.2f} {overhead / cells * 1000:>16.1f}")  # fmt: skip
    print("\nconcurrency 1: overhead = run wall − Σ server time (llama.cpp's timings + the simulator's"
          "\n  answers): everything the framework, HTTP, the store and grading (sandboxed code) add;"
          "\nconcurrency 4: overhead = run wall − Σ server time / 4 (a lower bound on the ideal).")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
