"""Talking to a simulator's loopback admin routes (register case scripts and models, read
counters) over the standard library's urllib (no HTTP client library is needed for them)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from pytest_srbench.benchmarks.registry import AdapterRegistry
from pytest_srbench.core.models import Case
from pytest_srbench.simulator.play import registration_key
from pytest_srbench.simulator.profiles import SimModel
from pytest_srbench.simulator.router import SimRouter


def admin_url_for(base_url: str) -> str:
    """``http://host:port/v1`` → ``http://host:port/srbench``."""
    root = base_url.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    return root + "/srbench"


def _post(url: str, payload: Mapping[str, Any], timeout: float = 30.0) -> Any:
    try:
        data = orjson.dumps(payload)  # a run's scripts: one per cell
    except TypeError:  # what only the standard library writes (an integer beyond 64 bits)
        data = json.dumps(payload).encode("utf-8")
    request = urllib.request.Request(
        url,
        data=data,
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


def _get(url: str, timeout: float = 30.0) -> Any:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


SCRIPTS_PER_REQUEST = 5000


def iter_scripts(
    cases: Iterable[Case], registry: AdapterRegistry
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The simulator scripts of ``cases`` one at a time, keyed as the simulator recognises them."""
    for case in cases:
        for opening, script in registry.get(case.benchmark).simulator_scripts(case):
            key = registration_key(opening)
            if key is not None:
                yield key, script


def scripts_for(cases: Iterable[Case], registry: AdapterRegistry) -> dict[str, dict[str, Any]]:
    """The simulator scripts of ``cases``, keyed as the simulator recognises them."""
    return dict(iter_scripts(cases, registry))


def register_scripts(admin_url: str, scripts: Mapping[str, Mapping[str, Any]]) -> None:
    """Add ``scripts`` to the simulator's (a key given again replaces its script)."""
    if scripts:
        _post(admin_url + "/scripts", {"scripts": dict(scripts)})


def register_case_scripts(admin_url: str, cases: Iterable[Case], registry: AdapterRegistry) -> None:
    """Register the scripts of ``cases``, ``SCRIPTS_PER_REQUEST`` per request: a
    100,000-case run's scripts (about 400 bytes each, and their JSON) are never held at once."""
    batch: dict[str, dict[str, Any]] = {}
    for key, script in iter_scripts(cases, registry):
        batch[key] = script
        if len(batch) == SCRIPTS_PER_REQUEST:
            register_scripts(admin_url, batch)
            batch = {}
    register_scripts(admin_url, batch)


def register_models(admin_url: str, models: Iterable[SimModel]) -> None:
    payload = [model.model_dump(mode="json") for model in models]
    if payload:
        _post(admin_url + "/models", {"models": payload})


def stats(admin_url: str) -> dict[str, Any]:
    result: dict[str, Any] = _get(admin_url + "/stats")
    return result


def reset(admin_url: str) -> None:
    _post(admin_url + "/reset", {})


def register_routers(admin_url: str, routers: Iterable[SimRouter]) -> dict[str, Any]:
    """Add or replace simulated routers (e.g. a new ``config_version``); their config hashes."""
    result: dict[str, Any] = _post(
        admin_url + "/routers", {"routers": [router.model_dump(mode="json") for router in routers]}
    )
    return result
