"""The asyncio engine: dispatches the cells one process owns with bounded concurrency,
journals every call in the store, enforces limits and budgets."""

from pytest_srbench.engine.engine import CellOutcome, Engine, EngineOptions

__all__ = ["CellOutcome", "Engine", "EngineOptions"]
