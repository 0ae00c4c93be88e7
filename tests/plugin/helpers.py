"""Helpers of the plugin tests: a pytester project whose targets are the simulator's models,
and the simulator's counters once nothing is in flight."""

from __future__ import annotations

import time

from pytest_srbench.simulator import client as sim_client
from pytest_srbench.simulator.router import SimRoute, SimRouter

PRICES = "input = 1.0\ncached_input = 0.5\ncache_write = 2.0\noutput = 2.0\n"


def failing_target(target_id: str) -> str:
    """A built-in simulated target ``target_id`` on the simulator model ``err500``, which
    answers every request with HTTP 500."""
    return f"""
[[tool.srbench.targets]]
id = "{target_id}"
model = "err500"
simulated = true
[tool.srbench.targets.prices.err500]
{PRICES}
[tool.srbench.simulator.models.err500]
fault = "http_500"
fault_rate = 1.0
ttft_s = 0.0
[tool.srbench.simulator.models.err500.prices]
{PRICES}"""


def external_target(model: str, base_url: str, target_id: str | None = None) -> str:
    target_id = target_id or model
    return f"""
[[tool.srbench.targets]]
id = "{target_id}"
model = "{model}"
base_url = "{base_url}"
simulated = true
[tool.srbench.targets.prices.{model}]
{PRICES}"""


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


# the simulated router of the replay tests: the smoke chemistry/physics/biology items go to
# sim-large, every other case to sim-small
REPLAY_ROUTER = SimRouter(
    name="replay-router",
    routes=[SimRoute(decision="reasoning", model="sim-large",
                     keywords=["moles", "derivative", "resistor", "falls", "organelle"])],
    default=SimRoute(decision="general", model="sim-small"),
    sticky_sessions=False,
)  # fmt: skip


def replay_pyproject(admin_url: str, base_url: str, *, router_prices: bool = False) -> str:
    """A pyproject's ``[tool.srbench]`` with the single models sim-large and sim-small (priced)
    and ``replay-router`` over them, registered with the simulator at ``admin_url`` (with
    ``router_prices``, the router priced for both models too)."""
    sim_client.register_routers(admin_url, [REPLAY_ROUTER])
    body = "[tool.srbench]\n" + "".join(
        external_target(m, base_url) for m in ("sim-large", "sim-small")
    )
    return body + f"""
[[tool.srbench.targets]]
id = "replay-router"
kind = "mom"
model = "replay-router"
base_url = "{base_url}"
simulated = true
""" + "".join(
        f"[tool.srbench.targets.prices.{model}]\n{PRICES}" for model in ("sim-large", "sim-small")
        if router_prices
    )  # fmt: skip
