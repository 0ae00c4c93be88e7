"""Makes ``xdist_group`` marks group tests again under ``--dist=loadgroup``.

pytest-xdist's worker tells its scheduler an item's group by appending ``@group`` to the
item's node id, which it sets as ``item._nodeid``. From pytest 9.2 a node keeps its id as a
structured ``item._id`` and ``nodeid`` is derived from it, so that assignment changes
nothing: every grouped test is scheduled on its own, and a module that shares an expensive
fixture (a llama-server, a browser) starts it once per worker. This hook sets the suffix on
the id pytest actually reads; it does nothing where the suffix is already there (an xdist or
pytest release that works) or outside an xdist worker running ``--dist=loadgroup``.
"""

from __future__ import annotations

import pytest

try:  # pytest >= 9.2: a node's id is structured
    from _pytest.nodeid import NodeId
except ImportError:  # older pytest reads the id pytest-xdist sets: nothing to do
    NodeId = None  # type: ignore[assignment,misc]


def _group_of(item: pytest.Item) -> str | None:
    names = {
        str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        for mark in item.iter_markers("xdist_group")
    }
    return "_".join(sorted(names)) if names else None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # a worker's own --dist is "no": xdist keeps the controller's choice as option.loadgroup
    if NodeId is None or not hasattr(config, "workerinput"):
        return
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        group = _group_of(item)
        if group is None or item.nodeid.endswith(f"@{group}"):
            continue
        item._id = NodeId.parse(f"{item.nodeid}@{group}")
