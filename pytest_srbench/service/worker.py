"""Runs the service creates: review a request as a frozen plan (zero model requests), create
the run ``queued`` under an idempotency key, and execute it with the very same engine — a
``pytest`` worker process that adopts the queued run by its key — while a bounded in-memory
registry tracks the runs this service started.

When the registry is full, the oldest terminal run is evicted from memory (never from the
store); when every slot holds an active run, creation is refused with
``BENCHMARK_CAPACITY_EXCEEDED``.

A reaper thread collects every worker that ends (so a killed worker is never a zombie that
looks alive) and settles its run: one the worker never took ends ``failed`` with the
worker's own one-line reason (``BENCHMARK_RUN_FAILED``), one it left running is swept
``interrupted``, and whatever the worker started (its simulator) is stopped with it.

A run's worker is recorded next to its log (``worker.json``: host, pid, kernel start stamp).
When the service and a worker that had not yet taken its run die together, the restarted
service (or any service over the store) settles that ownerless ``queued`` run ``failed`` with a
reason as soon as it sees the recorded worker gone (when it opens and every
``LIMBO_CHECK_S`` after): a run never waits in limbo. Cancelling a queued run the worker has
not taken stops that worker at once, freeing its slot.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pytest_srbench.app.config import ConfigError, load_config
from pytest_srbench.app.lifecycle import open_swept_store, request_cancel
from pytest_srbench.app.planning import build_draft
from pytest_srbench.app.run_options import RunOptions
from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.core.benchmark_errors import BenchmarkError, safe_message, without_paths
from pytest_srbench.core.calls.retrieval import search_params
from pytest_srbench.core.errors import SrbenchError
from pytest_srbench.core.models import Manifest, Run
from pytest_srbench.core.plan.build import request_params_for
from pytest_srbench.core.redact import Redactor, target_secret_envs
from pytest_srbench.datasets.suites import SuiteError
from pytest_srbench.store.base import Store
from pytest_srbench.store.liveness import host_id, pid_alive, process_started
from pytest_srbench.store.opening import DEFAULT_LOCAL_DIR, is_database_url

Profile = Literal["smoke", "quick", "standard"]
REAP_INTERVAL_S = 0.5
INDEX_CHECK_TIMEOUT_S = 10.0
LOG_TAIL_BYTES = 16_384
WORKER_LOG = "worker.log"
WORKER_RECORD = "worker.json"
LIMBO_CHECK_S = 2.0
UNRECORDED_GRACE_S = 60.0  # a queued service run with no worker record (older services)
RETRY_AFTER_S = 5
STOP_WAIT_S = 2.0
LIMBO_REASON = (
    "BENCHMARK_RUN_FAILED: the run's worker ended before it started the run "
    "(the service or its host stopped); start the run again"
)
logger = logging.getLogger("pytest_srbench.service")


class ServiceError(SrbenchError):
    """A refusal with a public error code, an HTTP status and a safe message."""

    def __init__(
        self, code: str, status: int, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        self.headers = headers or {}


class RunRequest(RunOptions):
    """What a client asks to run: the run options, as the pytest flags take them."""

    def worker_args(self, store: Path | str, key: str) -> list[str]:
        """The pytest command line that freezes the very same plan and adopts the run."""
        return ["-p", "no:cacheprovider", "-q", f"--srbench-store={store}",
                f"--srbench-run-key={key}", *self.pytest_args()]  # fmt: skip


@dataclass
class Handle:
    """A run this service started: its worker process and log."""

    run_id: str
    process: subprocess.Popen[bytes] | None
    log: Path
    settled: bool = False  # the reaper has settled its run after the worker ended

    def active(self) -> bool:
        """Its worker is still running (a run whose worker died is swept ``interrupted``)."""
        return self.process is not None and self.process.poll() is None


def review(manifest: Manifest) -> dict[str, Any]:
    """The frozen plan as a person reviews it before starting (no model request)."""
    counts: dict[str, int] = {}
    for case in manifest.cases:
        counts[case.benchmark] = counts.get(case.benchmark, 0) + 1
    return {
        "plan_sha256": manifest.plan_sha256,
        "case_sha256": manifest.case_sha256,
        "profile": manifest.profile,
        "mode": manifest.mode,
        "seed": manifest.seed,
        "cells": manifest.planned_count(),
        "targets": [
            {
                "id": t.id,
                "kind": t.kind,
                "model": t.model,
                "simulated": t.simulated,
                # what every request of the target carries: sampling, or the search settings
                "request_params": (
                    search_params(t) if t.kind == "retrieval" else request_params_for(manifest, t)
                ),
            }
            for t in manifest.targets
        ],
        "benchmarks": [{"benchmark": b, "cases": n} for b, n in sorted(counts.items())],
        "limits": manifest.limits.model_dump(mode="json"),
        "sampling": manifest.sampling,
        "max_cost_usd": manifest.limits.max_cost_usd,
        "custom_subset": manifest.dataset.custom_subset,
    }


class RunService:
    """Plans, starts, tracks and cancels the runs created through the service."""

    def __init__(self, project_root: Path, store: Path | str, max_runs: int = 100) -> None:
        self.project_root = project_root.resolve()
        if is_database_url(str(store)):  # the runs in a database; logs in a local folder
            self.store_location = str(store)
            self.store_path = self.project_root / DEFAULT_LOCAL_DIR
        else:
            self.store_path = Path(store).resolve()
            self.store_location = str(self.store_path)
        self.max_runs = max_runs
        self._lock = threading.Lock()
        self._registry: OrderedDict[str, Handle] = OrderedDict()
        opened, _ = open_swept_store(self.store_location, self.store_path)
        try:
            self.settle_limbo(opened)
        finally:
            opened.close()
        self._closing = threading.Event()
        self._reaper = threading.Thread(target=self._reap_loop, name="srbench-reaper", daemon=True)
        self._reaper.start()

    def close(self, timeout: float = 10.0) -> None:
        """Stop the reaper and wait for its round in progress (the workers go on: a run
        outlives the service)."""
        self._closing.set()
        if self._reaper is not threading.current_thread():
            self._reaper.join(timeout)

    def _reap_loop(self) -> None:
        checked = 0.0
        said = ""  # the failure last logged: a lasting one is logged once, not every round
        while not self._closing.wait(REAP_INTERVAL_S):
            try:
                self.reap()
                if time.monotonic() - checked >= LIMBO_CHECK_S:
                    checked = time.monotonic()
                    store = self.store()
                    try:
                        self.settle_limbo(store)
                    finally:
                        store.close()
                said = ""
            except Exception as error:  # the reaper never dies; the next round tries again
                if repr(error) != said:
                    said = repr(error)
                    logger.exception("settling ended workers failed (logged once while it lasts)")

    def settle_limbo(self, store: Store) -> list[str]:
        """End ``failed`` every queued run the service created that no process took and whose
        recorded worker is gone (on this host; one on another host is left to its service);
        the ids of the runs settled."""
        with self._lock:  # held: a run being submitted is registered before it is listed
            return self._settle_limbo(store)

    def _settle_limbo(self, store: Store) -> list[str]:
        mine = {rid for rid, handle in self._registry.items() if handle.active()}
        settled = []
        for run in store.active_runs():
            if run.status != "queued" or run.id in mine or store.owner(run.id) is not None:
                continue
            if (store.get_runner(run.id) or {}).get("source") != "service":
                continue  # a queued run of ``srbench recover`` waits for its command
            record = read_worker_record(store.run_dir(run.id))
            if record is None and age_s(run.created_at) < UNRECORDED_GRACE_S:
                continue  # another service may be starting its worker right now
            if record is not None and pid_alive(record) is not False:
                continue  # still starting, or on another host
            with store.transaction():
                current = store.get_run(run.id)
                if current is None or current.status != "queued" or store.owner(run.id):
                    continue
                store.set_run_status(run.id, "failed", LIMBO_REASON)
            logger.warning("run %s: its worker is gone; the queued run ended failed", run.id)
            settled.append(run.id)
        return settled

    def reap(self) -> list[str]:
        """Collect the workers that ended and settle their runs (see the module's notes);
        the ids of the runs settled."""
        with self._lock:
            ended = [h for h in self._registry.values()
                     if not h.settled and h.process is not None and h.process.poll() is not None]  # fmt: skip
            for handle in ended:
                handle.settled = True
        if not ended:
            return []
        store = self.store()  # opening it sweeps: a run whose worker died is interrupted
        try:
            for handle in ended:
                assert handle.process is not None
                stop_group(handle.process.pid)
                run = store.get_run(handle.run_id)
                if run is not None and run.status == "queued" and store.owner(run.id) is None:
                    reason = worker_failure(handle.log, handle.process.returncode)
                    store.set_run_status(run.id, "failed", f"BENCHMARK_RUN_FAILED: {reason}")
        finally:
            store.close()  # the reaper's own connection, opened per round with work to do
        return [handle.run_id for handle in ended]

    def store(self) -> Store:
        """This thread's connection to the store (swept of dead owners when first opened)."""
        store, _ = open_swept_store(self.store_location, self.store_path)
        return store

    def freeze(self, request: RunRequest) -> Manifest:
        """The plan a request freezes to, exactly as pytest will freeze it."""
        try:
            config = load_config(self.project_root)
            registry = default_registry()
            draft = build_draft(config, request, registry, self.project_root)
            return draft.freeze(None)
        except BenchmarkError as error:
            raise ServiceError(error.code, _status(error.code), error.message) from None
        except (ConfigError, SuiteError, ValueError) as error:
            text = str(error).split("\n")[0][:400]
            for code in ("BENCHMARK_DATASET_NOT_FOUND", "BENCHMARK_DATASET_INVALID"):
                if code in text:
                    raise ServiceError(code, _status(code), text) from None
            raise ServiceError("BENCHMARK_PLAN_INVALID", 422, text) from None

    def review(self, request: RunRequest) -> dict[str, Any]:
        manifest = self.freeze(request)
        self.check_indexes(manifest)
        return review(manifest)

    def check_indexes(self, manifest: Manifest) -> None:
        """Before a run exists: a retrieval service whose index cannot serve its target is
        ``409 BENCHMARK_INDEX_INCOMPATIBLE`` now, not a run that fails (or scores 0) later. The
        built-in retrieval targets are served by the worker's own simulator, checked there."""
        served = [t for t in manifest.targets if t.kind == "retrieval" and t.base_url]
        if not served:
            return
        from pytest_srbench.app.index_check import check_indexes  # httpx: only for RAG plans

        only_served = manifest.model_copy(update={"targets": served})
        try:
            check_indexes(only_served, {}, timeout_s=INDEX_CHECK_TIMEOUT_S)
        except BenchmarkError as error:
            raise ServiceError(error.code, _status(error.code), error.message) from None
        except ConfigError as error:
            raise ServiceError("BENCHMARK_PLAN_INVALID", 422, str(error)) from None

    def secrets(self) -> list[str]:
        """The key values the project's targets read (never shown from a worker's log)."""
        try:
            targets = load_config(self.project_root).targets
        except ConfigError:
            targets = []
        return [os.environ[name] for name in target_secret_envs(targets) if os.environ.get(name)]

    def active_runs(self) -> list[str]:
        with self._lock:
            return [run_id for run_id, handle in self._registry.items() if handle.active()]

    def _make_room(self) -> None:
        while len(self._registry) >= self.max_runs:
            idle = next((rid for rid, h in self._registry.items() if not h.active()), None)
            if idle is None:
                raise ServiceError(
                    "BENCHMARK_CAPACITY_EXCEEDED",
                    429,
                    f"all {self.max_runs} run slots hold active runs; try again when one ends",
                    {"Retry-After": str(RETRY_AFTER_S)},
                )
            del self._registry[idle]

    def submit(
        self, request: RunRequest, idempotency_key: str | None = None, kind: str | None = None
    ) -> tuple[Run, bool]:
        """Create the run ``queued`` and start its worker; the same key and plan return the
        existing run (created = False) without starting anything. ``kind`` (``rag`` /
        ``agent``) refuses a plan holding a benchmark of another kind."""
        manifest = self.freeze(request)
        if kind is not None:
            check_kind(manifest, kind)
        self.check_indexes(manifest)
        key = idempotency_key or "service-" + uuid.uuid4().hex
        store = self.store()
        with self._lock:
            existing = store.find_run_by_key(key)
            if existing is not None:
                if existing.plan_sha256 != manifest.plan_sha256:
                    raise ServiceError(
                        "BENCHMARK_PLAN_INVALID", 409,
                        "this idempotency key is already bound to a different plan",
                    )  # fmt: skip
                return existing, False
            self._make_room()
            run_id = "run-" + uuid.uuid4().hex[:20]
            run, _ = store.create_run(run_id, manifest, request_key=key, status="queued",
                                      runner={"source": "service"})  # fmt: skip
            log = worker_log(store, run.id)
            try:
                process = self._start(request.worker_args(self.store_location, key), log)
            except OSError as error:  # never a queued run that nothing will take
                why = error.strerror or type(error).__name__
                store.set_run_status(
                    run.id,
                    "failed",
                    f"BENCHMARK_RUN_FAILED: the run's worker could not start ({why})",
                )
                raise ServiceError(
                    "BENCHMARK_RUN_FAILED", 503, f"run {run.id}: its worker could not start ({why})"
                ) from None
            write_worker_record(log.parent, process.pid)
            self._registry[run.id] = Handle(run.id, process, log)
            return run, True

    def track(self, run_id: str, process: subprocess.Popen[bytes] | None, log: Path) -> None:
        """Register a run started elsewhere by this service (a recovery child)."""
        with self._lock:
            self._make_room()
            if process is not None:
                write_worker_record(log.parent, process.pid)
            self._registry[run_id] = Handle(run_id, process, log)

    def _start(self, args: list[str], log: Path) -> subprocess.Popen[bytes]:
        with log.open("ab") as sink:
            return subprocess.Popen(
                [sys.executable, "-m", "pytest", *args],
                cwd=self.project_root,
                stdout=sink,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=worker_env(),
                start_new_session=True,  # closing the service or a page never stops a run
            )

    def start_recovery(
        self, plan_path: Path, key: str, acknowledge: bool, log: Path
    ) -> subprocess.Popen[bytes]:
        args = ["-p", "no:cacheprovider", "-q", f"--srbench-store={self.store_location}",
                f"--srbench-recover={plan_path}", f"--srbench-run-key={key}"]  # fmt: skip
        if acknowledge:
            args.append("--srbench-acknowledge-new-attempt")
        return self._start(args, log)

    def cancel(self, run_id: str) -> Run:
        """Ask the run to stop; a queued run no worker took ends ``cancelled`` at once and its
        worker (if this service started it) is stopped now, freeing its slot."""
        store = self.store()
        try:
            if store.get_run(run_id) is None:
                raise ServiceError("BENCHMARK_RUN_NOT_FOUND", 404, f"no run {run_id!r}")
            run = request_cancel(store, run_id)
        finally:
            store.close()
        if run.status == "cancelled":
            self._stop_worker(run_id)
        return run

    def _stop_worker(self, run_id: str) -> None:
        """Stop the worker of a run that ended before it took the run (its slot is free)."""
        with self._lock:
            handle = self._registry.get(run_id)
        if handle is None or handle.process is None or not handle.active():
            return
        stop_group(handle.process.pid)
        try:
            handle.process.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(handle.process.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                handle.process.wait(STOP_WAIT_S)

    def wait(self, run_id: str, timeout: float | None = None) -> int | None:
        """Wait for a started worker (tests and shutdown); its exit code."""
        handle = self._registry.get(run_id)
        if handle is None or handle.process is None:
            return None
        return handle.process.wait(timeout)


def check_kind(manifest: Manifest, kind: str) -> None:
    """Refuse (422) a plan that holds a benchmark whose dataset is not of ``kind``."""
    others = sorted({str(suite["benchmark"]) for suite in manifest.dataset.suites
                     if suite.get("kind") != kind and suite.get("selected") != 0})  # fmt: skip
    if others:
        raise ServiceError(
            "BENCHMARK_PLAN_INVALID", 422,
            f"this route runs {kind} datasets only, and {', '.join(others)} "
            f"{'is not one' if len(others) == 1 else 'are not'} (POST /api/runs runs any "
            "benchmark)",
        )  # fmt: skip


def worker_env() -> dict[str, str]:
    """A worker's environment: the service's, without the service token (a worker never needs
    it, and so never logs it)."""
    from pytest_srbench.service.token_env import TOKEN_ENV

    env = {name: value for name, value in os.environ.items() if name != TOKEN_ENV}
    return {**env, "PYTHONUNBUFFERED": "1"}


def age_s(stamp: str) -> float:
    """Seconds since an ISO time stamp (0 when it cannot be read)."""
    try:
        then = datetime.fromisoformat(stamp)
    except ValueError:
        return 0.0
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    return (datetime.now(UTC) - then).total_seconds()


def write_worker_record(folder: Path, pid: int) -> None:
    """Record who the run's worker is (``settle_limbo`` reads it after a restart)."""
    record = {"host": host_id(), "pid": pid, "process_started": process_started(pid)}
    with contextlib.suppress(OSError):
        (folder / WORKER_RECORD).write_text(json.dumps(record))


def read_worker_record(folder: Path) -> dict[str, Any] | None:
    try:
        record = json.loads((folder / WORKER_RECORD).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or "host" not in record or "pid" not in record:
        return None
    return record


def worker_log(store: Store, run_id: str) -> Path:
    """Where the worker of a run the service starts writes its output (folder created)."""
    log = store.run_dir(run_id) / WORKER_LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    return log


def read_log(
    log: Path, offset: int | None, limit: int, private: Sequence[str] = ()
) -> dict[str, Any]:
    """A page of a worker's log, ``{text, offset, next_offset, size}``: up to ``limit`` bytes
    from byte ``offset``, or its last ``limit`` bytes when ``offset`` is None. Pages hold whole
    lines, so a server path is never cut in two: a page starts at a line's start (a tail drops
    its partial first line; an ``offset`` inside a line moves back to the line's start, so the
    answer's ``offset`` may be lower than the one asked for: a line still being written comes
    again, whole) and a page cut by ``limit`` ends after its last complete line (a line longer
    than ``limit`` comes cut). Paths are cut to their last part and ``private`` values
    redacted. A missing log (a run made by pytest or the CLI) reads as empty."""
    try:
        with log.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            if offset is None:
                start = max(0, size - limit)
                handle.seek(start)
                chunk = handle.read(limit)
                if start > 0 and b"\n" in chunk:  # the tail began inside a line: drop it
                    cut = chunk.index(b"\n") + 1
                    start, chunk = start + cut, chunk[cut:]
            else:
                start = min(offset, size)
                back = max(0, start - limit)
                handle.seek(back)
                head = handle.read(start - back)
                if b"\n" in head:
                    start = back + head.rindex(b"\n") + 1
                elif back == 0:
                    start = 0
                handle.seek(start)
                chunk = handle.read(limit)
    except OSError:
        return {"text": "", "offset": 0, "next_offset": 0, "size": 0}
    if start + len(chunk) < size and b"\n" in chunk:  # cut by ``limit``: end on a whole line
        chunk = chunk[: chunk.rindex(b"\n") + 1]
    text = without_paths(Redactor(private).text(chunk.decode("utf-8", "replace")))
    return {"text": text, "offset": start, "next_offset": start + len(chunk), "size": size}


def stop_group(leader: int) -> None:
    """Stop what is left of an ended worker's process group (it leads its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGTERM)


def worker_failure(log: Path, code: int | None) -> str:
    """Why a worker ended without taking its run: its last error line (the plugin's
    ``pytest-srbench: …``, argparse's ``…: error: …``, else pytest's ``ERROR …``), with no
    server path in it."""
    try:
        with log.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - LOG_TAIL_BYTES))
            lines = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        lines = []
    told = [line for line in lines if "pytest-srbench:" in line or ": error:" in line]
    errors = told or [line for line in lines if line.startswith("ERROR")]
    ended = f"the run's worker ended (exit code {code}) before it started the run"
    if not errors:
        return ended
    return safe_message(f"{ended}: {without_paths(errors[-1].strip())}", 400)


def _status(code: str) -> int:
    return {
        "BENCHMARK_DATASET_NOT_FOUND": 404,
        "BENCHMARK_DATASET_INVALID": 422,
        "BENCHMARK_INDEX_INCOMPATIBLE": 409,
        "BENCHMARK_CAPACITY_EXCEEDED": 429,
        "BENCHMARK_RUN_NOT_FOUND": 404,
        "BENCHMARK_RUN_FAILED": 409,
        "BENCHMARK_CASE_EVALUATION_FAILED": 422,
    }.get(code, 422)
