"""The built-in simulator's own cost: the CPU it spends until it listens (every session with a
simulated target starts one) and per answer, driven by a bare aiohttp loop — beside an
earlier source tree, interleaved rep by rep.

Each rep starts the simulator as the plugin does (``python -m pytest_srbench.simulator.server
--port 0 --ready-file F``), reads its CPU from ``/proc/PID/stat`` when the ready file appears
and again after the requests, stops it, and reads its whole life's CPU when it exits
(``wait4``): that less the answers' is what a session pays for starting and stopping one. The requests ask ``sim-large`` (its seeded
latency and token rate: the answers are timed like a model's, so the wall time is the
profile's, the CPU is what to read), streamed (SSE with usage) and not.

    python bench/simulator.py                                  # this tree, 3 reps
    python bench/simulator.py --baseline-tree DIR --repeat 5   # beside another tree
                                       # (e.g. `git archive main pytest_srbench | tar -x -C DIR`)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
MODES = ("stream", "json")


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def drive(url: str, requests: int, concurrency: int, stream: bool) -> None:
    body: dict[str, object] = {
        "model": "sim-large",
        "messages": [{"role": "user", "content": "What is 2 + 2? Answer with the number."}],
        "stream": stream,
        "max_tokens": 16,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    gate = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one() -> None:
            async with gate, session.post(url, json=body) as response:
                await response.read()
                if response.status != 200:
                    raise RuntimeError(f"the simulator answered {response.status}")

        await asyncio.gather(*(one() for _ in range(requests)))


def measure(
    tree: str | None, mode: str, requests: int, concurrency: int
) -> tuple[float, float, float]:
    """(CPU until it listens, CPU per answer in µs, CPU of its whole life) of one simulator of
    ``tree``: the whole life's CPU (from ``wait4``) includes the interpreter's exit."""
    env = dict(os.environ)
    if tree:
        env["PYTHONPATH"] = tree
    with tempfile.TemporaryDirectory() as scratch:
        ready = Path(scratch) / "ready.json"
        command = [sys.executable, "-m", "pytest_srbench.simulator.server", "--port", "0",
                   "--ready-file", str(ready)]  # fmt: skip
        # not from this folder: `-m` puts the working folder first on the path
        process = subprocess.Popen(command, env=env, cwd=scratch)
        try:
            while not ready.exists():
                if process.poll() is not None:
                    raise RuntimeError(f"the simulator exited with {process.returncode}")
                time.sleep(0.005)
            started = process_cpu_s(process.pid)
            port = json.loads(ready.read_text())["port"]
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            asyncio.run(drive(url, requests, concurrency, mode == "stream"))
            served = process_cpu_s(process.pid) - started
        finally:
            process.terminate()
            _, _, usage = os.wait4(process.pid, 0)
            process.returncode = 0  # reaped above
    return started, served / requests * 1e6, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--baseline-tree", metavar="DIR", help="also measure this source tree")
    args = parser.parse_args()
    trees: dict[str, str | None] = {"this tree": str(ROOT)}
    if args.baseline_tree:
        trees["baseline tree"] = str(Path(args.baseline_tree).resolve())
    start: dict[str, list[float]] = {name: [] for name in trees}
    life: dict[str, list[float]] = {name: [] for name in trees}
    per: dict[tuple[str, str], list[float]] = {(n, m): [] for n in trees for m in MODES}
    load = [os.getloadavg()[0]]
    for _ in range(args.repeat):
        for name, tree in trees.items():
            for mode in MODES:
                cpu_at_ready, micros, whole = measure(tree, mode, args.requests, args.concurrency)
                start[name].append(cpu_at_ready)
                life[name].append(whole - micros * args.requests / 1e6)
                per[(name, mode)].append(micros)
    load.append(os.getloadavg()[0])
    print(f"{args.requests} requests a rep, C={args.concurrency}, medians of {args.repeat} reps"
          f" ({2 * args.repeat} starts); load {load[0]:.1f} → {load[1]:.1f}")  # fmt: skip
    print(f"{'tree':<15} {'CPU to listen s':>16} {'start + exit s':>15} "
          f"{'µs/answer stream':>17} {'µs/answer json':>15}")  # fmt: skip
    for name in trees:
        print(f"{name:<15} {statistics.median(start[name]):>16.3f} "
              f"{statistics.median(life[name]):>15.3f} "
              f"{statistics.median(per[(name, 'stream')]):>17.0f} "
              f"{statistics.median(per[(name, 'json')]):>15.0f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
