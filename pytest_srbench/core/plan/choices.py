"""The names a user chooses among on the command line: profiles, gate modes and intervals,
transports, recovery modes, the default seed. Kept free of imports so that registering pytest options loads nothing else."""

from __future__ import annotations

PROFILES = ("smoke", "quick", "standard")
DEFAULT_SEED = 20260918
RECOVERY_MODES = ("undispatched", "failed")
GATE_MODES = ("regression", "noninferiority")
GATE_INTERVALS = ("wald", "newcombe", "hoeffding")
GATE_SCOPES = ("macro", "benchmark")
DEFAULT_MARGIN = 0.05
# the exit status of a failed gate: pytest's "tests failed" (pytest.ExitCode.TESTS_FAILED),
# which the plugin sets and ``srbench compare --fail-on`` returns
GATE_FAILED = 1
TRANSPORTS = ("aiohttp", "httpx-aiohttp", "httpx")
# the nine sr-bench benchmarks (core.plan.srbench holds their weights and counts), the
# extension benchmarks `srbench datasets prepare` converts, the ones a registry package holds
# and the profiles synthetic suites are written for; tests/core/plan/test_choices.py keeps
# them equal to the registries they stand for
SR_BENCH_NAMES = (
    "mmlu-pro",
    "gpqa-diamond",
    "simpleqa-verified",
    "hle",
    "arc-agi-2",
    "livecodebench",
    "scicode",
    "terminal-bench-2.1",
    "tau3",
)
EXTENSION_NAMES = ("humaneval", "mmlu")
PACKAGE_NAMES = ("arc-agi-2", "humaneval", "mmlu", "tau3")
SYNTH_PROFILES = ("quick", "standard")
