"""What a store transaction costs the engine's thread while pytest's thread is busy.

``sqlite3`` lets go of the interpreter lock around each SQLite step; a thread that lets go of
it while another thread runs Python gets it back only when that thread blocks or at the end of
its switch interval (5 ms by default). The engine commits on its own thread while pytest's
main thread reports items, so its ``BEGIN``, each row of an ``executemany`` and its ``COMMIT``
can each wait that long. This replays one group commit (``BEGIN IMMEDIATE``, ``--rows`` rows of
about 300 bytes, ``COMMIT``; WAL, synchronous=FULL, as the store keeps them) ``--repeat`` times
with a second thread idle, then busy running Python, and prints the mean of each step.

    python bench/gil_convoy.py [--rows 30] [--repeat 200]
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import threading
import time
from pathlib import Path


def spin(stop: threading.Event) -> None:
    total = 0
    while not stop.is_set():
        for number in range(1000):
            total += number


def replay(folder: Path, rows: int, repeat: int, busy: bool) -> tuple[float, float, float]:
    """Mean seconds of BEGIN, the rows and COMMIT, with the other thread idle or busy."""
    db = sqlite3.connect(folder / f"{'busy' if busy else 'idle'}.sqlite3", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE calls(n INTEGER, data TEXT)")
    stop = threading.Event()
    other = threading.Thread(target=spin, args=(stop,), daemon=True)
    if busy:
        other.start()
    begin = write = commit = 0.0
    try:
        for _ in range(repeat):
            started = time.perf_counter()
            db.execute("BEGIN IMMEDIATE")
            begun = time.perf_counter()
            db.executemany("INSERT INTO calls VALUES (?, ?)", [(n, "x" * 300) for n in range(rows)])
            written = time.perf_counter()
            db.execute("COMMIT")
            done = time.perf_counter()
            begin, write, commit = (
                begin + begun - started,
                write + written - begun,
                commit + done - written,
            )
    finally:
        stop.set()
        db.close()
    return begin / repeat, write / repeat, commit / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="srbench-gil-") as scratch:
        print(f"{'other thread':<14}{'BEGIN ms':>10}{f'{args.rows} rows ms':>12}{'COMMIT ms':>11}")
        for busy in (False, True):
            begin, write, commit = replay(Path(scratch), args.rows, args.repeat, busy)
            label = "busy" if busy else "idle"
            print(f"{label:<14}{begin * 1e3:>10.3f}{write * 1e3:>12.3f}{commit * 1e3:>11.3f}")


if __name__ == "__main__":
    main()
