"""Before any query: read each retrieval target's index description and refuse the run with
``BENCHMARK_INDEX_INCOMPATIBLE`` when the index cannot serve the target (rules in
``core/retrieval.py``). The descriptions are kept with the run (its config snapshot)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from pytest_srbench.core.benchmark_errors import BenchmarkError
from pytest_srbench.core.models import Manifest
from pytest_srbench.core.retrieval import INDEX_PATH, check_index
from pytest_srbench.engine.call import auth_header


def check_indexes(
    manifest: Manifest, base_urls: Mapping[str, str], timeout_s: float = 120.0
) -> dict[str, dict[str, Any]]:
    """target id -> index description, for every retrieval target of the plan (each checked)."""
    wanted = [t for t in manifest.targets if t.kind == "retrieval"]
    if not wanted:
        return {}
    described: dict[str, dict[str, Any]] = {}
    with httpx.Client(timeout=timeout_s, follow_redirects=False, trust_env=False) as client:
        for target in wanted:
            base = base_urls.get(target.id) or target.base_url
            try:
                response = client.get(
                    f"{base}{INDEX_PATH}", headers=auth_header(target.api_key_env)
                )
                response.raise_for_status()
                info = response.json()
            except (httpx.HTTPError, ValueError) as error:
                detail = str(error).split("\n")[0][:200]
                raise BenchmarkError(
                    "BENCHMARK_INDEX_INCOMPATIBLE",
                    f"target {target.id}: the index description could not be read ({detail})",
                ) from None
            check_index(info, target)
            described[target.id] = info
    return described
