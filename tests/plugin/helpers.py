"""Helpers of the plugin tests: a pytester project whose targets are the simulator's models,
and the simulator's counters once nothing is in flight."""

from __future__ import annotations

import time

from pytest_srbench.simulator import client as sim_client


def external_target(model: str, base_url: str, target_id: str | None = None) -> str:
    target_id = target_id or model
    return f"""
[[tool.srbench.targets]]
id = "{target_id}"
model = "{model}"
base_url = "{base_url}"
simulated = true
[tool.srbench.targets.prices.{model}]
input = 1.0
cached_input = 0.5
cache_write = 2.0
output = 2.0
"""


def project(pytester, sim, *models: str) -> None:
    ids = ", ".join(f'"{m}"' for m in models)
    body = f"[tool.srbench]\ndefault_targets = [{ids}]\n" + "".join(
        external_target(m, sim.base_url) for m in models
    )
    pytester.makefile(".toml", pyproject=body)


def settle_simulator(sim) -> dict:
    """Simulator counters once nothing is in flight any more."""
    for _ in range(100):
        stats = sim_client.stats(sim.admin_url)
        if stats["in_flight"] == 0:
            return stats
        time.sleep(0.1)
    return sim_client.stats(sim.admin_url)
