"""Shared pieces of the benchmarks: a throwaway project with an N-case suite served by one
simulated model, and a hand-written asyncio loop that drives the same simulator."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_srbench.simulator.process import SimulatorProcess

CONFTEST = """
from pytest_srbench.benchmarks.mcq import MmluProAdapter


class BenchQuiz(MmluProAdapter):
    benchmark = "bench-mcq"


def pytest_srbench_adapters(registry, config):
    registry.register(BenchQuiz())
"""

TEST_MODULE = """
import pytest


@pytest.mark.srbench("bench-mcq")
async def test_bench(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""

CLIENT_TEST_MODULE = """
import pytest


@pytest.mark.srbench("bench-mcq")
async def test_bench(srbench_case, srbench_client):
    return (await srbench_client.chat(srbench_case.messages)).final_text
"""

# the openai SDK as a user calls it through srbench_client (docs/your-own-code.md)
SDK_TEST_MODULE = """
import pytest


@pytest.mark.srbench("bench-mcq")
async def test_bench(srbench_case, srbench_target, srbench_client):
    client = srbench_client.async_openai()
    completion = await client.chat.completions.create(
        model=srbench_target.id, messages=srbench_case.messages
    )
    return completion.choices[0].message.content
"""

SDK_STREAM_TEST_MODULE = """
import pytest


@pytest.mark.srbench("bench-mcq")
async def test_bench(srbench_case, srbench_target, srbench_client):
    client = srbench_client.async_openai()
    stream = await client.chat.completions.create(
        model=srbench_target.id, messages=srbench_case.messages, stream=True
    )
    return "".join([chunk.choices[0].delta.content or "" async for chunk in stream
                    if chunk.choices])
"""
TEST_MODULES = {"target": "test_bench.py", "client": "test_bench_client.py",
                "sdk": "test_bench_sdk.py", "sdk-stream": "test_bench_sdk_stream.py"}  # fmt: skip
TEST_SOURCES = {"target": TEST_MODULE, "client": CLIENT_TEST_MODULE, "sdk": SDK_TEST_MODULE,
                "sdk-stream": SDK_STREAM_TEST_MODULE}  # fmt: skip

PRICES = "input = 1.0\ncached_input = 0.5\ncache_write = 0.0\noutput = 2.0\n"


@dataclass(frozen=True)
class Workload:
    cells: int
    latency_s: float
    chunks: int
    concurrency: int
    workers: int = 1
    transport: str = "aiohttp"

    @property
    def ideal_s(self) -> float:
        return self.cells * self.latency_s / (self.concurrency * self.workers)

    def label(self) -> str:
        return (
            f"{self.cells} cells, C={self.concurrency}x{self.workers}, {self.chunks} chunks, "
            f"L={self.latency_s * 1000:.0f} ms"
        )


def model_spec(workload: Workload, name: str = "bench") -> dict[str, object]:
    return {
        "name": name,
        "accuracy": 1.0,
        "latency_s": workload.latency_s,
        "chunks": workload.chunks,
        "prices": {"input": 1.0, "cached_input": 0.5, "cache_write": 0.0, "output": 2.0},
        "styles": {"declaration": 1.0},
    }


def make_project(root: Path, workload: Workload, base_url: str | None = None) -> Path:
    """A project folder whose only suite holds ``workload.cells`` cases; its target is the
    built-in simulator (started by the plugin, inside the command) or, with ``base_url``, an
    OpenAI-compatible endpoint already running (as the peers are measured)."""
    root.mkdir(parents=True, exist_ok=True)
    suite = root / "suites" / "bench-mcq"
    suite.mkdir(parents=True, exist_ok=True)
    rows = [
        {"question_id": f"q{i}", "question": f"Benchmark question number {i}: which option is right?",
         "options": ["alpha", "beta", "gamma", "delta"], "answer": "B", "category": f"c{i % 8}"}
        for i in range(workload.cells)
    ]  # fmt: skip
    body = "".join(json.dumps(row) + "\n" for row in rows).encode()
    (suite / "cases.jsonl").write_bytes(body)
    meta = {"benchmark": "bench-mcq", "version": "1", "source": "benchmark workload", "revision": "1",
            "sha256": hashlib.sha256(body).hexdigest(), "count": workload.cells,
            "profiles": {"smoke": workload.cells}}  # fmt: skip
    (suite / "suite.json").write_text(json.dumps(meta))
    (root / "conftest.py").write_text(CONFTEST)
    # the test-function paths (named on the command line by their rows, ignored by the others)
    for key, module in TEST_MODULES.items():
        (root / module).write_text(TEST_SOURCES[key])
    model = model_spec(workload)
    lines = [
        'default_targets = ["bench"]',
        "[limits]",
        "max_cost_usd = 100000.0",
        "max_run_seconds = 3600",
        "[[targets]]",
        'id = "bench"',
        'model = "bench"',
        f"base_url = {json.dumps(base_url)}" if base_url else "simulated = true",
        "[targets.prices.bench]",
        PRICES,
    ]
    if base_url is None:
        lines += [
            "[simulator.models.bench]",
            "accuracy = 1.0",
            f"latency_s = {workload.latency_s}",
            f"chunks = {workload.chunks}",
            "styles = { declaration = 1.0 }",
            "[simulator.models.bench.prices]",
            PRICES,
        ]
    assert model["name"] == "bench"
    (root / "srbench.toml").write_text("\n".join(lines))
    return root


BENCH_DIR = Path(__file__).resolve().parent
PYTHON = [sys.executable]  # the interpreter timed commands run under (``use_python``)


def use_python(python: str) -> None:
    """Run the timed commands under ``python`` (e.g. the user environment's)."""
    PYTHON[0] = python


def child_env(pythonpath: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of a timed command: this one, as on a developer's machine (bytecode is
    cached, output buffered), with ``pythonpath`` (a source tree to measure) first on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")}  # fmt: skip
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (pythonpath, env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


@dataclass
class Command:
    """One command timed from spawn to exit, as a user waits for it."""

    seconds: float
    cpu_s: float  # user + system CPU of the command and the children it waited for
    peak_rss_mb: float  # the OS's figure at exit (largest process of the command's tree)
    returncode: int
    output: str


# Spawns the command from a small process and reports the command's own rusage. Linux keeps
# the largest RSS a process had before ``exec`` (the parent's, for a child forked from it), so
# a command spawned straight from this benchmark reports at least the benchmark's own peak.
# It times the command itself, so its own start is not counted.
_LAUNCHER = """
import os, sys, time
started = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
seconds = time.perf_counter() - started
with open(sys.argv[1], "w") as out:
    out.write(f"{usage.ru_maxrss} {usage.ru_utime + usage.ru_stime} {seconds}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_command(command: list[str], *, cwd: Path, env: dict[str, str]) -> Command:
    """Spawn ``command`` and wait for it; the peak RSS is the command's own ``ru_maxrss`` from
    ``wait4`` (its largest process, including the children it waited for), not a sample,
    taken by a small launcher process (``_LAUNCHER``)."""
    with tempfile.TemporaryFile() as output, tempfile.TemporaryDirectory() as scratch:
        usage_file = Path(scratch) / "rusage"
        launcher = [sys.executable, "-c", _LAUNCHER, str(usage_file), *command]
        process = subprocess.Popen(launcher, cwd=cwd, env=env, stdout=output, stderr=output)
        process.wait()
        output.seek(0)
        text = output.read().decode("utf-8", "replace")
        maxrss, cpu_text, seconds_text = usage_file.read_text().split()
    kib = int(maxrss) / (1024 if sys.platform == "darwin" else 1)
    cpu, seconds = float(cpu_text), float(seconds_text)
    return Command(seconds, cpu, round(kib / 1024, 1), process.returncode, text)


PHASES = (
    ("start-up, imports", "spawn", "configured"),
    ("session start", "configured", "collection"),
    ("collection, plan", "collection", "collected"),
    ("run", "run", "ran"),
    ("report", "ran", "reported"),
    ("summary", "reported", "summarised"),
    ("exit", "summarised", "exit"),
)


@dataclass
class PytestRun:
    wall_s: float  # the run's own wall time (created → finished), from its report
    process_s: float  # the whole command, spawn → exit
    cpu_s: float  # its CPU time (user + system, with the children it waited for)
    peak_rss_mb: float | None  # the OS's figure for the whole command, at exit
    report_rss_mb: float | None  # what the report's provenance says
    calls: int
    cells: int
    status: str
    phases: dict[str, float] | None = None  # seconds per phase (with ``phases=True``)


def store_folder(pythonpath: str | None) -> str:
    """The store of the runs of a source tree (the default tree's: ``.srbench``), so that trees
    of different store schemas can be measured side by side in one project."""
    if pythonpath is None:
        return ".srbench"
    return ".srbench-" + hashlib.sha256(pythonpath.encode()).hexdigest()[:12]


def run_pytest(
    project: Path,
    workload: Workload,
    *,
    as_test: str | None = None,
    pythonpath: str | None = None,
    phases: bool = False,
    extra_args: Sequence[str] = (),
) -> PytestRun:
    """Run the plugin on the project as a user types it, timed from spawn to exit, beside
    the run's own wall time (created → finished) from its report.

    ``as_test``: the cases parametrize a test function (a benchmark written as a pytest test)
    calling the simulator through ``srbench_target`` ("target"), ``srbench_client`` ("client")
    or the ``openai`` SDK on ``srbench_client`` ("sdk", "sdk-stream"), instead of being the shipped-suite items. ``pythonpath``: the source tree to
    measure (default: the one this interpreter imports). ``phases``: also load the
    ``_phase_marks`` plugin and return where the command's time went."""
    # the shipped-suite row leaves the test-function modules out (pytest collects the folder)
    selection = ["--srbench-profile", "smoke", TEST_MODULES[as_test]] if as_test else [
        "--srbench-benchmark", "bench-mcq", *(f"--ignore={m}" for m in TEST_MODULES.values())]  # fmt: skip
    # each source tree its own store: trees of different store schemas may be compared
    store = store_folder(pythonpath)
    command = [
        PYTHON[0], "-m", "pytest", "-q", "-p", "no:cacheprovider", *selection,
        "--srbench-concurrency", str(workload.concurrency), "--srbench-json", "report.json",
        "--srbench-store", store, "--srbench-transport", workload.transport,
    ]  # fmt: skip
    command += ["-n", str(workload.workers)] if workload.workers > 1 else ["-p", "no:xdist"]
    command += list(extra_args)  # e.g. --srbench-cache (the cached-run row)
    marks_path = project / "phase-marks.json"
    extra: dict[str, str] = {}
    path: str | None
    if phases:
        command += ["-p", "_phase_marks"]
        extra["SRBENCH_BENCH_MARKS"] = str(marks_path)
        path = os.pathsep.join(p for p in (pythonpath, str(BENCH_DIR)) if p)
    else:
        path = pythonpath
    spawned = time.time()
    done = run_command(command, cwd=project, env=child_env(path, **extra))
    exited = spawned + done.seconds
    report_path = project / "report.json"
    if not report_path.exists():
        raise RuntimeError(f"pytest produced no report:\n{done.output[-6000:]}")
    report = json.loads(report_path.read_text())
    report_path.unlink()
    if "database is locked" in done.output:
        raise RuntimeError("a worker hit 'database is locked'")
    spent = None
    if phases and marks_path.exists():
        marks = {"spawn": spawned, **json.loads(marks_path.read_text()), "exit": exited}
        marks_path.unlink()
        spent = {name: marks[end] - marks[begin] for name, begin, end in PHASES
                 if begin in marks and end in marks}  # fmt: skip
    # read with sqlite3 itself: the tree measured may write an older store schema, which this
    # tree's store would upgrade (and the older tree then refuse)
    with closing(sqlite3.connect(project / store / "journal.sqlite3")) as db:
        calls = [
            {"id": row[0], "case_id": row[1], "target_id": row[2]}
            for row in db.execute(
                "SELECT id, case_id, target_id FROM calls WHERE run_id = ?", (report["run_id"],)
            )
        ]
    runner = report["provenance"]["runner"] or {}
    return PytestRun(
        wall_s=report["summary"]["wall_time_s"],
        process_s=done.seconds,
        cpu_s=done.cpu_s,
        peak_rss_mb=done.peak_rss_mb,
        report_rss_mb=runner.get("peak_rss_mb"),
        calls=len({c["id"] for c in calls}),
        cells=len({(c["case_id"], c["target_id"]) for c in calls}),
        status=report["status"],
        phases=spent,
    )


async def _hand_loop(base_url: str, workload: Workload) -> float:
    import aiohttp
    import orjson

    semaphore = asyncio.Semaphore(workload.concurrency)
    connector = aiohttp.TCPConnector(limit=workload.concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(index: int) -> int:
            body = orjson.dumps(
                {"model": "bench", "messages": [{"role": "user", "content": f"question {index}"}],
                 "stream": True, "stream_options": {"include_usage": True}}
            )  # fmt: skip
            async with (
                semaphore,
                session.post(
                    base_url + "/chat/completions",
                    data=body,
                    headers={"Content-Type": "application/json"},
                ) as response,
            ):
                buffer, parsed = b"", 0
                async for chunk in response.content.iter_any():
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.startswith(b"data: ") and line[6:] != b"[DONE]":
                            orjson.loads(line[6:])
                            parsed += 1
                return parsed

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(workload.cells)))
        return time.perf_counter() - started


def start_endpoint(workload: Workload) -> SimulatorProcess:
    """The simulator serving ``workload``'s model, as an endpoint of its own (``.base_url``,
    ``.stop()``)."""
    from pytest_srbench.simulator.process import start_simulator
    from pytest_srbench.simulator.profiles import SimModel

    return start_simulator([SimModel.model_validate(model_spec(workload))])


def run_hand_loop(workload: Workload, base_url: str | None = None) -> float:
    """The practical limit: semaphore + aiohttp + orjson over the same simulator (started here
    unless ``base_url`` names one already running)."""
    sim = start_endpoint(workload) if base_url is None else None
    try:
        return asyncio.run(_hand_loop(sim.base_url if sim is not None else str(base_url), workload))
    finally:
        if sim is not None:
            sim.stop()


@dataclass
class LoopRun:
    wall_s: float  # the request phase
    process_s: float  # the whole command (interpreter, imports, simulator start, exit)
    cpu_s: float
    peak_rss_mb: float


def run_hand_loop_command(
    workload: Workload, pythonpath: str | None = None, base_url: str | None = None
) -> LoopRun:
    """The hand-written loop as a command of its own, timed from spawn to exit like ours
    (against ``base_url``, or a simulator it starts itself)."""
    spec = json.dumps(
        [workload.cells, workload.latency_s, workload.chunks, workload.concurrency, base_url]
    )
    done = run_command(
        [PYTHON[0], str(Path(__file__).resolve()), "hand-loop", spec],
        cwd=BENCH_DIR,
        env=child_env(pythonpath),
    )
    wall = reported_wall(done, "the hand-written loop")
    return LoopRun(wall, done.seconds, done.cpu_s, done.peak_rss_mb)


FLOOR_MODULE = """
import pytest


@pytest.mark.parametrize("case", range({cells}))
def test_floor(case):
    pass
"""


@dataclass
class FloorRun:
    wall_s: float | None  # no run of its own: the command is all there is
    process_s: float
    cpu_s: float
    peak_rss_mb: float


def run_pytest_floor(folder: Path, workload: Workload) -> FloorRun:
    """pytest itself with ``workload.cells`` no-op tests (one parametrized function; the
    plugin not loaded): what one pytest item per cell costs before any work of ours — the
    floor of a framework whose cells are pytest items."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "test_floor.py").write_text(FLOOR_MODULE.format(cells=workload.cells))
    command = [PYTHON[0], "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:srbench",
               "-p", "no:xdist", "test_floor.py"]  # fmt: skip
    done = run_command(command, cwd=folder, env=child_env())
    if done.returncode != 0 or f"{workload.cells} passed" not in done.output:
        raise RuntimeError(
            f"the pytest floor failed (exit {done.returncode}):\n{done.output[-3000:]}"
        )
    return FloorRun(None, done.seconds, done.cpu_s, done.peak_rss_mb)


def reported_wall(done: Command, what: str) -> float:
    """The ``{"wall_s": …}`` line a timed script printed last (its own timing of its work);
    RuntimeError with the end of its output when it failed or printed none."""
    lines = [line for line in done.output.splitlines() if line.startswith('{"wall_s"')]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{what} failed (exit {done.returncode}):\n{done.output[-3000:]}")
    return float(json.loads(lines[-1])["wall_s"])


if __name__ == "__main__" and sys.argv[1:2] == ["hand-loop"]:
    cells, latency, chunks, concurrency, endpoint = json.loads(sys.argv[2])
    wall = run_hand_loop(Workload(cells, latency, chunks, concurrency), endpoint)
    print(json.dumps({"wall_s": wall}))
