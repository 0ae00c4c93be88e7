"""Shared pieces of the benchmarks: a throwaway project with an N-case suite served by one
simulated model, and a hand-written asyncio loop that drives the same simulator."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

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
TEST_MODULES = {"target": "test_bench.py", "client": "test_bench_client.py"}

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


def make_project(root: Path, workload: Workload) -> Path:
    """A project folder whose only suite holds ``workload.cells`` cases."""
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
    # the test-function paths (collected only when named on the command line)
    (root / TEST_MODULES["target"]).write_text(TEST_MODULE)
    (root / TEST_MODULES["client"]).write_text(CLIENT_TEST_MODULE)
    model = model_spec(workload)
    lines = [
        'default_targets = ["bench"]',
        "[limits]",
        "max_cost_usd = 100000.0",
        "max_run_seconds = 3600",
        "[[targets]]",
        'id = "bench"',
        'model = "bench"',
        "simulated = true",
        "[targets.prices.bench]",
        PRICES,
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


@dataclass
class PytestRun:
    wall_s: float
    process_s: float
    peak_rss_mb: float | None
    calls: int
    cells: int
    status: str


def run_pytest(project: Path, workload: Workload, *, as_test: str | None = None) -> PytestRun:
    """Run the plugin on the project; wall time is the run's own (created → finished).

    ``as_test``: the cases parametrize a test function (a benchmark written as a pytest test)
    calling the simulator through ``srbench_target`` ("target") or ``srbench_client``
    ("client"), instead of being the shipped-suite items."""
    selection = ["--srbench-profile", "smoke", TEST_MODULES[as_test]] if as_test else [
        "--srbench-benchmark", "bench-mcq"]  # fmt: skip
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *selection,
        "--srbench-concurrency", str(workload.concurrency), "--srbench-json", "report.json",
        "--srbench-store", ".srbench", "--srbench-transport", workload.transport,
    ]  # fmt: skip
    command += ["-n", str(workload.workers)] if workload.workers > 1 else ["-p", "no:xdist"]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=project, capture_output=True, text=True, check=False)
    process_s = time.perf_counter() - started
    report_path = project / "report.json"
    if not report_path.exists():
        raise RuntimeError(
            f"pytest produced no report:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    report = json.loads(report_path.read_text())
    report_path.unlink()
    if "database is locked" in done.stdout + done.stderr:
        raise RuntimeError("a worker hit 'database is locked'")
    from pytest_srbench.store import open_store

    store = open_store(project / ".srbench")
    calls = store.calls(report["run_id"])
    runner = report["provenance"]["runner"] or {}
    return PytestRun(
        wall_s=report["summary"]["wall_time_s"],
        process_s=process_s,
        peak_rss_mb=runner.get("peak_rss_mb"),
        calls=len({c["id"] for c in calls}),
        cells=len({(c["case_id"], c["target_id"]) for c in calls}),
        status=report["status"],
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


def run_hand_loop(workload: Workload) -> float:
    """The practical limit: semaphore + aiohttp + orjson over the same simulator."""
    from pytest_srbench.simulator.process import start_simulator
    from pytest_srbench.simulator.profiles import SimModel

    sim = start_simulator([SimModel.model_validate(model_spec(workload))])
    try:
        return asyncio.run(_hand_loop(sim.base_url, workload))
    finally:
        sim.stop()
