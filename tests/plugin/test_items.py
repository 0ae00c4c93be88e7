"""Cells as items: what every cell shares is worked out once per collection, and an item is
indistinguishable from one that worked it out itself."""

from __future__ import annotations

import json

CHECKER = """
import json
from pathlib import Path

import pytest

from pytest_srbench.plugin.items import SrbenchCell


def pytest_collection_finish(session):
    cells = [item for item in session.items if isinstance(item, SrbenchCell)]
    Path("items.json").write_text(json.dumps({
        "cells": len(cells),
        # pytest's own computation of the location, against the one seeded at creation
        "locations_differ": sum(item.location != pytest.Item.location.func(item) for item in cells),
        "marked": sum(item.get_closest_marker("srbench") is not None for item in cells),
        "keywords": sum("srbench" in item.keywords and item.target_id in item.listextrakeywords()
                        for item in cells),
    }))
"""


def test_cell_items_share_their_mark_and_location_without_changing_them(pytester):
    pytester.makeconftest(CHECKER)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--collect-only", "-q", "--srbench-profile=smoke",
        "--srbench-benchmark=mmlu-pro", "--srbench-target=sim-large",
        "--srbench-target=sim-small",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    seen = json.loads((pytester.path / "items.json").read_text())
    assert seen["cells"] > 2
    assert seen == {
        "cells": seen["cells"],
        "locations_differ": 0,
        "marked": seen["cells"],
        "keywords": seen["cells"],
    }
