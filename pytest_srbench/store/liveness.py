"""Who a process is and whether a process on this host still runs: the identity every run
owner is recorded with (host, pid, kernel start stamp) and the PID check the SQLite store
decides liveness with. The host is ``SRBENCH_HOST_ID`` when set (two processes on one machine
then act as two hosts), otherwise the host name.

Lease settings of the PostgreSQL store live here too: how often a process renews its lease
(``SRBENCH_LEASE_INTERVAL_S``, default 5 s) and how long a lease lasts without renewal
(``SRBENCH_LEASE_EXPIRY_S``, default 30 s).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

from pytest_srbench.store.base import StoreError

HOST_ID_ENV = "SRBENCH_HOST_ID"
LEASE_INTERVAL_ENV = "SRBENCH_LEASE_INTERVAL_S"
LEASE_EXPIRY_ENV = "SRBENCH_LEASE_EXPIRY_S"
DEFAULT_LEASE_INTERVAL_S = 5.0
DEFAULT_LEASE_EXPIRY_S = 30.0


def host_id() -> str:
    """This host's identity in owner records: ``SRBENCH_HOST_ID`` or the host name."""
    return os.environ.get(HOST_ID_ENV, "").strip() or socket.gethostname()


def process_started(pid: int) -> str | None:
    """The kernel's start stamp of a process (Linux), so a reused pid is not mistaken."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else None


def this_process() -> dict[str, Any]:
    """Owner record of the current process."""
    pid = os.getpid()
    return {"host": host_id(), "pid": pid, "process_started": process_started(pid)}


def same_process(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (a["host"], int(a["pid"]), a.get("process_started")) == (
        b["host"],
        int(b["pid"]),
        b.get("process_started"),
    )


def pid_alive(owner: dict[str, Any]) -> bool | None:
    """True / False for an owner on this host; None when it runs elsewhere (unknowable)."""
    if owner["host"] != host_id():
        return None
    pid = int(owner["pid"])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    started = owner.get("process_started")
    return started is None or process_started(pid) in (None, started)


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= 86400:
        raise StoreError(f"{name} must be a number of seconds in (0, 86400]")
    return value


def lease_timing() -> tuple[float, float]:
    """(renewal interval, expiry) in seconds; the expiry must exceed the interval."""
    interval = _seconds(LEASE_INTERVAL_ENV, DEFAULT_LEASE_INTERVAL_S)
    expiry = _seconds(LEASE_EXPIRY_ENV, DEFAULT_LEASE_EXPIRY_S)
    if expiry <= interval:
        raise StoreError(
            f"{LEASE_EXPIRY_ENV} ({expiry:g} s) must be longer than {LEASE_INTERVAL_ENV} "
            f"({interval:g} s): a live process would lose its lease between renewals"
        )
    return interval, expiry
