"""Managed children never outlive their parent: real parent processes killed with SIGKILL,
a long-running child (``sleep 600``), both launcher modes (the kernel death signal from the
main thread, the supervising launcher from any other thread)."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pytest_srbench.managed.childwatch import spawn_watched
from tests.process_helpers import alive, descendants, identities, wait_all_gone, wait_until

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads the Linux process table"
)

# A parent that starts a watched child (from its main thread or from a short-lived thread,
# which may first wait until a file exists), prints the child's pid, then waits to be killed.
PARENT = """
import os, sys, threading, time
from pytest_srbench.managed.childwatch import spawn_watched
where, hold, command = sys.argv[1], sys.argv[2], sys.argv[3:]
box = {}
def start():
    box["child"] = spawn_watched(command)
    while hold and not os.path.exists(hold):
        time.sleep(0.01)
if where == "thread":
    thread = threading.Thread(target=start)
    thread.start()
    thread.join()  # the thread that forked the child is gone from here on
else:
    start()
print(box["child"].pid, flush=True)
time.sleep(600)
"""

HEARTBEAT = """
import sys, time
path, beat = sys.argv[1], 0
while True:
    beat += 1
    with open(path + ".tmp", "w") as handle:
        handle.write(str(beat))
    __import__("os").replace(path + ".tmp", path)
    time.sleep(0.05)
"""


def start_parent(where: str, *command: str, hold: str = "") -> tuple[subprocess.Popen[str], int]:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, where, hold, *command], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    return parent, int(parent.stdout.readline())


def beats(path: Path) -> int:
    try:
        return int(path.read_text() or 0)
    except (OSError, ValueError):
        return 0


@pytest.mark.parametrize("where", ["main", "thread"])
def test_sigkill_of_the_parent_stops_a_long_running_child(where):
    parent, child = start_parent(where, "sleep", "600")
    try:
        wait_until(
            lambda: any("sleep 600" in c for c in descendants(parent.pid).values()),
            "the sleep to start",
        )
        below = descendants(parent.pid)
        assert child in below
        watched = identities(below)
        assert all(alive(pid, since) for pid, since in watched.items())
        parent.kill()  # SIGKILL: nothing of the parent runs any more
        parent.wait(timeout=60)
        wait_all_gone(watched)  # the sleep and, in thread mode, its supervising launcher
    finally:
        parent.kill()
        parent.wait(timeout=60)


def test_a_child_started_from_a_thread_survives_the_threads_exit(tmp_path):
    """The kernel death signal follows the forking *thread*; a child started from a thread
    that finished after the child was up must keep running while its process lives."""
    heartbeat = tmp_path / "beats"
    parent, _ = start_parent(
        "thread", sys.executable, "-c", HEARTBEAT, str(heartbeat), hold=str(heartbeat)
    )
    try:
        after_join = beats(heartbeat)  # the parent printed only after the thread was joined
        assert after_join > 0
        wait_until(lambda: beats(heartbeat) >= after_join + 5, "heartbeats after the thread exited")
        watched = identities(descendants(parent.pid))
        parent.kill()
        parent.wait(timeout=60)
        wait_all_gone(watched)
    finally:
        parent.kill()
        parent.wait(timeout=60)


@pytest.mark.parametrize("where", ["main", "thread"])
def test_the_caller_sees_the_commands_own_status(where):
    """Exit codes and deaths by signal pass through the launcher unchanged."""
    box: dict[str, int | None] = {}

    def run() -> None:
        coded = spawn_watched([sys.executable, "-c", "raise SystemExit(3)"])
        box["code"] = coded.wait(timeout=60)
        sleeper = spawn_watched(["sleep", "600"])
        below = identities(descendants(sleeper.pid) | {sleeper.pid: ""})
        sleeper.send_signal(signal.SIGTERM)  # what SimulatorProcess.stop / LlamaServer.stop do
        box["terminated"] = sleeper.wait(timeout=60)
        wait_all_gone(below)

    if where == "thread":
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    else:
        run()
    assert box == {"code": 3, "terminated": -signal.SIGTERM}


def test_a_missing_executable_fails_in_the_caller():
    with pytest.raises(FileNotFoundError):
        spawn_watched(["srbench-no-such-program-anywhere"])
