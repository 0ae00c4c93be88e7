"""Fixed sr-bench 1.0 constants: benchmark weights, profile sizes and splits."""

from __future__ import annotations

BENCHMARK_WEIGHTS: dict[str, float] = {
    "mmlu-pro": 0.10,
    "simpleqa-verified": 0.10,
    "gpqa-diamond": 0.15,
    "hle": 0.15,
    "arc-agi-2": 0.10,
    "livecodebench": 0.10,
    "scicode": 0.10,
    "terminal-bench-2.1": 0.10,
    "tau3": 0.10,
}
SR_BENCH_BENCHMARKS = frozenset(BENCHMARK_WEIGHTS)

PROFILE_SPLIT = {"smoke": "dev", "quick": "dev", "standard": "holdout"}

PROFILE_COUNTS: dict[str, dict[str, int]] = {
    "mmlu-pro": {"smoke": 14, "quick": 500, "standard": 2000},
    "gpqa-diamond": {"smoke": 4, "quick": 40, "standard": 158},
    "hle": {"smoke": 4, "quick": 40, "standard": 200},
    "livecodebench": {"smoke": 2, "quick": 30, "standard": 150},
    "scicode": {"smoke": 1, "quick": 3, "standard": 20},
    "terminal-bench-2.1": {"smoke": 1, "quick": 3, "standard": 15},
    "simpleqa-verified": {"smoke": 5, "quick": 100, "standard": 500},
    "arc-agi-2": {"smoke": 2, "quick": 12, "standard": 80},
    "tau3": {"smoke": 3, "quick": 12, "standard": 60},
}
