"""Which part of a (possibly distributed) session this process plays."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest


@dataclass(frozen=True)
class Role:
    """``single`` (no xdist), ``controller`` (xdist controller) or ``worker``."""

    kind: str
    slot: int = 0
    workers: int = 1
    replacement: bool = False


def owns(position: int, workers: int, slot: int) -> bool:
    """The one ownership rule of a distributed run: the item at ``position`` of the collected
    list belongs to worker ``slot`` of ``workers``. The scheduler sends each worker its items
    by it and each worker dispatches its cells by it, so the two can never disagree."""
    return position % workers == slot


def role_of(config: pytest.Config) -> Role:
    workerinput: dict[str, Any] | None = getattr(config, "workerinput", None)
    if workerinput is not None:
        return Role(
            kind="worker",
            slot=int(workerinput.get("srbench_slot", 0)),
            workers=int(workerinput.get("workercount", 1)),
            replacement=bool(workerinput.get("srbench_replacement", False)),
        )
    if getattr(config.option, "dist", "no") != "no" and not config.getoption("collectonly"):
        return Role(kind="controller")
    return Role(kind="single")
