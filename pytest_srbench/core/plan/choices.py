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
TRANSPORTS = ("aiohttp", "httpx-aiohttp", "httpx")
