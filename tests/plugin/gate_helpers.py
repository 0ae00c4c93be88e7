"""Shared by test_gate_user_suites and the tests that build on it (a test module never imports another)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.zygote_server import new_session_command

CONFIG = """
[tool.srbench]
default_targets = ["app"]

[[tool.srbench.targets]]
id = "app"
model = "{model}"
simulated = true
[tool.srbench.targets.prices.{model}]
input = 1.0
cached_input = 0.5
cache_write = 1.0
output = 2.0

[tool.srbench.simulator.models.{model}]
accuracy = {accuracy}
latency_s = 0.0
prices = {{ input = 1.0, cached_input = 0.5, cache_write = 1.0, output = 2.0 }}
"""


GOOD = CONFIG.format(model="good", accuracy=0.9)


BROKEN = CONFIG.format(model="broken", accuracy=0.0)


FOUR = ("mmlu-pro", "gpqa-diamond", "arc-agi-2", "tau3")


def run_pytest(cwd: Path, benchmarks: tuple[str, ...], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*new_session_command(), "-p", "no:cacheprovider", "-q",
         "--srbench-profile=smoke", *[f"--srbench-benchmark={b}" for b in benchmarks], *args],
        cwd=cwd, capture_output=True, text=True,
    )  # fmt: skip
