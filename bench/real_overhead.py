"""Framework overhead against a real server: a smoke run on the locally built llama-server
(SmolLM2-135M), comparing the run's wall time with the server's own timings per call
(llama.cpp reports prompt and generation milliseconds in a ``timings`` object).

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
[[tool.srbench.targets]]
id = "smollm2"
model = "smollm2-135m"
managed = "llama-server"
[tool.srbench.targets.prices.smollm2-135m]
input = 0.0
cached_input = 0.0
cache_write = 0.0
output = 0.0
"""


def main() -> int:
    from pytest_srbench.managed import llama
    from pytest_srbench.store import open_store

    if llama.server_binary() is None or llama.gguf_path() is None:
        print(
            "llama-server or the model is missing: run `srbench real build` first", file=sys.stderr
        )
        return 2
    print(f"{'concurrency':>11} {'cells':>5} {'run wall s':>10} {'Σ server s':>10} {'Σ client latency s':>18} "
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
            calls = open_store(root / ".srbench").calls(report["run_id"])
            server = sum(
                (c["server_timings"] or {}).get("prompt_ms", 0) + (c["server_timings"] or {}).get("predicted_ms", 0)
                for c in calls
            ) / 1000  # fmt: skip
            client = sum(c["latency_s"] or 0 for c in calls)
            wall = report["summary"]["wall_time_s"]
            overhead = wall - server if concurrency == 1 else wall - server / concurrency
            print(f"{concurrency:>11} {len(calls):>5} {wall:>10.2f} {server:>10.2f} {client:>18.2f} "
                  f"{overhead:>10.2f} {overhead / len(calls) * 1000:>16.1f}")  # fmt: skip
    print("\nconcurrency 1: overhead = run wall − Σ server time (everything the framework and HTTP add);"
          "\nconcurrency 4: overhead = run wall − Σ server time / 4 (a lower bound on the ideal).")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
