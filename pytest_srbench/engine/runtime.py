"""State one process shares across the cells it runs: the plan, store writer, transport,
budget, deadlines and the stop flag."""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_srbench.benchmarks.registry import AdapterRegistry
from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.sse import StreamGuards
from pytest_srbench.core.models import Case, Manifest, Target, variant_of
from pytest_srbench.core.plan.budget import Budget
from pytest_srbench.core.redact import Redactor, target_secret_envs
from pytest_srbench.store.base import Store, StoreUnavailable, now_iso
from pytest_srbench.store.writer import GroupCommitWriter
from pytest_srbench.store.writes import CallProgress, Write
from pytest_srbench.transport.base import Transport


@dataclass
class LiveCall:
    """An in-flight call's progress, updated by its stream loop (one attribute per chunk)."""

    phase: str | None
    bytes_received: int = 0
    published: int = -1


@dataclass
class RunRuntime:
    """Everything a cell needs from its process; lives on the engine's event loop."""

    run_id: str
    manifest: Manifest
    store: Store
    writer: GroupCommitWriter
    transport: Transport
    adapters: AdapterRegistry
    base_urls: Mapping[str, str]  # a mapping that may start a server when first asked
    budget: Budget
    max_failures: int | None = None
    started: float = field(default_factory=time.monotonic)
    stop_reason: str | None = None
    user_cancelled: bool = False
    interrupted: bool = False  # stopped by a fault of the store (the run ends interrupted)
    failures: int = 0
    failure_observed: bool = False
    abort_in_flight: Callable[[], None] | None = None
    target_transports: dict[str, Transport] = field(default_factory=dict)
    asset_roots: dict[str, Path] = field(default_factory=dict)
    _assets: dict[tuple[str, str], bytes] = field(default_factory=dict)
    _verified_paths: dict[tuple[str, str], Path] = field(default_factory=dict)
    live: dict[str, LiveCall] = field(default_factory=dict)
    cache: str = "off"  # the response cache: off | use | only (core/calls/cache.py)
    cache_repeats: bool = False  # a repeat may take another repeat's cached answer
    # with ``cache_repeats``: this process's completed live calls by cache key, with their
    # streams, so a repeat finds an answer the writer has not committed yet
    recent_calls: dict[str, tuple[dict[str, Any], bytes]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        limits = self.manifest.limits
        self.limits = limits
        self.deadline = self.started + limits.max_run_seconds
        self.inventory: dict[str, Target] = self.manifest.target_inventory()
        self.cases: dict[str, Case] = {case.id: case for case in self.manifest.cases}
        self.priced = self.manifest.cost_policy == "require_priced" and self.manifest.mode == "live"
        self.guards = StreamGuards(
            max_output_chars=limits.max_output_chars,
            max_output_tokens=limits.max_output_tokens,
            repetition_window=limits.repetition_window,
            repetition_limit=limits.repetition_limit,
        )
        self.byte_cap = max(limits.max_output_chars * 30, 1_048_576)
        # the key values of every target the run may call: nothing the engine records or
        # reports (call rows, evidence, results, events, stop reasons) may contain them
        self.redactor = Redactor.for_env(target_secret_envs(self.inventory.values()), os.environ)
        self.writer.redactor = self.redactor
        self.writer.on_outage = self._store_outage
        self.writer.on_give_up = self._store_given_up

    def stopping(self) -> bool:
        """True once no new work may start (cancelled, failed closed, budget or wall time)."""
        if self.stop_reason is None and time.monotonic() >= self.deadline:
            self.stop_reason = "wall-time budget exhausted (max_run_seconds)"
        return self.stop_reason is not None

    def stop(self, reason: str, *, user: bool = False) -> None:
        if self.stop_reason is None:
            self.stop_reason = self.redactor.text(reason)
        self.user_cancelled = self.user_cancelled or user

    def interrupt(self, reason: str) -> None:
        """Stop dispatch because the store fails (the run ends ``interrupted`` with ``reason``);
        calls in flight finish and their receipts wait in the writer."""
        if self.stop_reason is None:
            self.interrupted = True
        self.stop(reason)

    def _store_outage(self, outage: StoreUnavailable) -> None:
        """A full disk stops dispatch at once (nothing more can be journaled); a lock or a
        lost connection is waited out (``store/writer.py``)."""
        if outage.kind == "disk full":
            self.interrupt(
                f"disk full: {outage}" if "disk full" not in str(outage) else str(outage)
            )

    def _store_given_up(self, outage: StoreUnavailable) -> None:
        """The store refused writes for the writer's whole window: stop like a cancellation."""
        self.interrupt(
            f"the store could not be written for {self.writer.outage_window_s:g} s: {outage}"
        )
        if self.abort_in_flight is not None:
            self.abort_in_flight()

    def fail_closed(self, reason: str) -> None:
        """Stop dispatch and cancel the cells in flight (they end ``cancelled``)."""
        self.stop(reason)
        if self.abort_in_flight is not None:
            self.abort_in_flight()

    def aux_target(self, benchmark: str, role: str) -> Target:
        bound = (self.manifest.benchmark_options.get(benchmark) or {}).get(role)
        if not bound or bound not in self.inventory:
            raise CallFailure(f"Benchmark {benchmark} has no {role} target bound")
        return self.inventory[bound]

    def base_url(self, target: Target) -> str:
        url = self.base_urls.get(target.id) or target.base_url
        if not url:
            from pytest_srbench.core.calls.failures import CallFailure

            raise CallFailure(
                f"Target {target.id} has no reachable base_url (simulator not started?)"
            )
        return url

    def asset(self, benchmark: str, reference: Mapping[str, str]) -> bytes:
        """A suite asset's bytes, read once and checked against the frozen sha256."""
        key = (benchmark, reference["sha256"])
        data = self._assets.get(key)
        if data is None:
            root = self.asset_roots.get(benchmark)
            if root is None:
                raise CallFailure(f"No suite folder is known for {benchmark}'s assets")
            data = (root / reference["path"]).read_bytes()
            if hashlib.sha256(data).hexdigest() != reference["sha256"]:
                raise CallFailure(
                    f"Suite asset {reference['path']} does not match its frozen sha256"
                )
            self._assets[key] = data
        return data

    def asset_path(self, benchmark: str, reference: Mapping[str, str]) -> Path:
        """A suite asset's local path, its sha256 checked once per run (read in chunks)."""
        root = self.asset_roots.get(benchmark)
        if root is None:
            raise CallFailure(f"No suite folder is known for {benchmark}'s assets")
        path = (root / reference["path"]).resolve()
        key = (benchmark, reference["sha256"])
        if key not in self._verified_paths:
            digest = hashlib.sha256()
            try:
                with path.open("rb") as handle:
                    while chunk := handle.read(1 << 20):
                        digest.update(chunk)
            except OSError as error:
                raise CallFailure(
                    f"Suite asset {reference['path']} cannot be read: {error}"
                ) from None
            if digest.hexdigest() != reference["sha256"]:
                raise CallFailure(
                    f"Suite asset {reference['path']} does not match its frozen sha256"
                )
            self._verified_paths[key] = path
        return self._verified_paths[key]

    def transport_for(self, target: Target) -> Transport:
        """The target's own transport (e.g. without keep-alive), else the shared one."""
        return self.target_transports.get(variant_of(target.id)[0], self.transport)

    async def close_transports(self) -> None:
        await self.transport.aclose()
        for transport in self.target_transports.values():
            await transport.aclose()

    def publish_progress(self) -> None:
        """Queue the progress of in-flight calls whose streams grew since the last look."""
        now = now_iso()
        writes: list[Write] = []
        for call_id, live in self.live.items():
            if live.bytes_received != live.published:
                live.published = live.bytes_received
                writes.append(
                    CallProgress(self.run_id, call_id, live.bytes_received, now, live.phase)
                )
        if writes:
            self.writer.post(writes)
