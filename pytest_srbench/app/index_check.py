"""Before any query: read each retrieval target's index description and refuse the run with
``BENCHMARK_INDEX_INCOMPATIBLE`` when the index cannot serve the target (rules in
``core/calls/retrieval.py``). The descriptions are kept with the run (its config snapshot), with
any echoed API key redacted. A target whose key variable is unset is a ``ConfigError``
(``app/credentials.py``, also checked for every target before the run is created)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pytest_srbench.app.credentials import credentials
from pytest_srbench.core.benchmark_errors import BenchmarkError
from pytest_srbench.core.calls.retrieval import INDEX_PATH, check_index
from pytest_srbench.core.models import Manifest
from pytest_srbench.core.redact import Redactor, target_secret_envs
from pytest_srbench.transport.sync_read import ReadFailure, json_reader


def check_indexes(
    manifest: Manifest, base_urls: Mapping[str, str], timeout_s: float = 120.0
) -> dict[str, dict[str, Any]]:
    """target id -> index description, for every retrieval target of the plan (each checked)."""
    wanted = [t for t in manifest.targets if t.kind == "retrieval"]
    if not wanted:
        return {}
    headers = {target.id: credentials(target) for target in wanted}  # before any request
    redactor = Redactor.for_env(target_secret_envs(manifest.targets), os.environ)
    described: dict[str, dict[str, Any]] = {}
    with json_reader(timeout_s, trust_env=False) as reader:
        for target in wanted:
            base = base_urls.get(target.id) or target.base_url
            try:
                info = redactor.value(reader.get(f"{base}{INDEX_PATH}", headers[target.id]).body)
            except ReadFailure as error:
                detail = redactor.text(str(error)[:200])
                raise BenchmarkError(
                    "BENCHMARK_INDEX_INCOMPATIBLE",
                    f"target {target.id}: the index description could not be read ({detail})",
                ) from None
            check_index(info, target)
            described[target.id] = info
    return described
