"""Reading the process table (Linux ``/proc``) for tests about orphaned processes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

DEADLINE_S = 60.0


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or None."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[-1].split()


def started(pid: int) -> str | None:
    """The kernel's start stamp of the process (tells a reused pid apart)."""
    fields = _stat(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def alive(pid: int, since: str | None = None) -> bool:
    """The process exists, is not a zombie (an exited child nobody reaped yet) and, when
    ``since`` is given, is the process that started then."""
    fields = _stat(pid)
    if fields is None or fields[0] in ("Z", "X"):
        return False
    return since is None or (len(fields) > 19 and fields[19] == since)


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def descendants(pid: int) -> dict[int, str]:
    """Every living process below ``pid``, with its command line (see ``identities``)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and fields[0] not in ("Z", "X"):
                parents[int(entry.name)] = int(fields[1])
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        for child, parent in parents.items():
            if parent == current and child not in found:
                found[child] = cmdline(child)
                frontier.append(child)
    return found


def wait_until(condition: Callable[[], bool], what: str, timeout: float = DEADLINE_S) -> None:
    """Poll ``condition`` until it holds; fail with ``what`` after a generous deadline."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def identities(pids: dict[int, str]) -> dict[int, str | None]:
    """Each pid with its start stamp, taken while the processes run."""
    return {pid: started(pid) for pid in pids}


def wait_all_gone(pids: dict[int, str | None]) -> None:
    """Wait until none of the processes (pid → start stamp) is alive any more."""
    wait_until(
        lambda: not any(alive(pid, since) for pid, since in pids.items()),
        f"processes {sorted(p for p, s in pids.items() if alive(p, s))} to exit",
    )
