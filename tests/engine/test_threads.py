"""Blocking work on the engine loop runs on daemon threads that nobody waits for: a body
blocked past its cell's deadline never keeps the interpreter alive."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading

import pytest

from pytest_srbench.engine.threads import DaemonThreads


def test_each_call_runs_on_a_daemon_thread_and_hands_back_its_result_or_error():
    executor = DaemonThreads()
    seen: list[tuple[str, bool]] = []

    def work(value: int) -> int:
        thread = threading.current_thread()
        seen.append((thread.name, thread.daemon))
        if value < 0:
            raise ValueError("negative")
        return value * 2

    assert executor.submit(work, 21).result(timeout=30) == 42
    with pytest.raises(ValueError, match="negative"):
        executor.submit(work, -1).result(timeout=30)
    assert [daemon for _, daemon in seen] == [True, True]
    assert seen[0][0] != seen[1][0]  # a fresh thread per call
    executor.shutdown()
    with pytest.raises(RuntimeError, match="after shutdown"):
        executor.submit(work, 1)


def test_asyncio_to_thread_uses_it_as_the_loops_default_executor():
    loop = asyncio.new_event_loop()
    try:
        loop.set_default_executor(DaemonThreads())
        daemon = loop.run_until_complete(
            asyncio.to_thread(lambda: threading.current_thread().daemon)
        )
    finally:
        loop.close()
    assert daemon is True


BLOCKED_FOREVER = """
import asyncio, threading, time
from pytest_srbench.engine.threads import DaemonThreads

loop = asyncio.new_event_loop()
loop.set_default_executor(DaemonThreads())
started = threading.Event()

def block():
    started.set()
    time.sleep(3600)

async def main():
    work = asyncio.ensure_future(asyncio.to_thread(block))
    await asyncio.to_thread(started.wait)
    work.cancel()  # the deadline: the waiter gives up, the thread stays blocked

loop.run_until_complete(main())
loop.close()
print("done")
"""


def test_an_interpreter_with_a_blocked_thread_still_exits():
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_FOREVER], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done"
