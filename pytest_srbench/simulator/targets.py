"""Frozen targets for what the built-in simulator serves: simulated models and routers."""

from __future__ import annotations

from collections.abc import Mapping

from pytest_srbench.core.models import Target
from pytest_srbench.simulator.profiles import BUILTIN_MODELS, SimModel
from pytest_srbench.simulator.router import DEFAULT_ROUTER, SimRouter, config_hash

BUILTIN_ROUTERS: dict[str, SimRouter] = {DEFAULT_ROUTER.name: DEFAULT_ROUTER}


def simulated_router_target(
    router: SimRouter, models: Mapping[str, SimModel] = BUILTIN_MODELS
) -> Target:
    """A frozen ``mom`` target for a simulated router: priced per physical model it may call,
    its config hash frozen, session-aware, and its recipe captured."""
    prices = {}
    for name in router.models():
        model = models[name]
        prices[model.response_model or model.name] = model.prices
    return Target(
        id=router.name,
        kind="mom",
        model=router.name,
        prices=prices,
        simulated=True,
        config_hash=config_hash(router),
        max_inference_calls=2 if router.fusion_model else 1,
        session_mode="session_aware",
        capture_recipe=True,
    )


RETRIEVAL_INDEX_ID = "srbench-notes-v1"


def simulated_retrieval_targets() -> list[Target]:
    """One built-in retrieval target per search mode, all over the simulator's notes index."""
    return [
        Target(
            id=f"sim-rag-{mode}",
            kind="retrieval",
            model=RETRIEVAL_INDEX_ID,
            simulated=True,
            retrieval={"mode": mode, "top_k": 5},
        )
        for mode in ("fts", "vector", "hybrid")
    ]
