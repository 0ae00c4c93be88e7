"""Run a smoke, a quick and a router run, a run of benchmarks written as marked tests (a shipped
benchmark and one defined in Python, with a fixture target) and a run sharded across two
invocations, in a fresh folder, and print their JSON reports with everything that legitimately
differs between two runs removed (ids, clocks, timings, paths).

A behaviour-preserving change (a refactor) must leave this output byte-identical:

    python scripts/report_fingerprint.py > before.txt
    # … the change …
    python scripts/report_fingerprint.py > after.txt && diff before.txt after.txt

The simulated targets are deterministic per case; the runs use a fixed seed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

RUNS = {
    "smoke": ["--srbench-profile=smoke"],
    "quick": ["--srbench-profile=quick"],
    "router": [
        "--srbench-profile=smoke",
        "--srbench-target=sim-large",
        "--srbench-target=sim-small",
        "--srbench-target=sim-router",
        "--srbench-limits",
        "max_cost_usd=200",
    ],
}

# a project's own benchmark tests: a shipped benchmark answered by a test body, a benchmark
# defined in Python, and a python target (a rule) beside the simulated models
MARKED_TESTS = {
    "conftest.py": """
import pytest

import pytest_srbench


def first_letter(messages):
    return "A"


@pytest_srbench.target("rule-a", model="rule-a")
@pytest.fixture(scope="session")
def rule_a():
    return first_letter
""",
    "test_marked.py": """
import pytest

import pytest_srbench

pytest_srbench.benchmark(
    "capitals",
    cases=[{"id": "fr", "question": "Capital of France?", "answer": "Paris"},
           {"id": "jp", "question": "Capital of Japan?", "answer": "Tokyo"}],
    grade=lambda answer, case: case["answer"].lower() in answer.lower(),
    version="1",
)


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text


@pytest.mark.srbench("capitals")
def test_capitals(srbench_case, srbench_target):
    return srbench_target.ask_sync(srbench_case.prompt).final_text
""",
}
MARKED = ["--srbench-profile=smoke", "--srbench-target=sim-large", "--srbench-target=sim-small",
          "--srbench-target=rule-a", "."]  # fmt: skip
SHARDED = ["--srbench-profile=smoke", "--srbench-run-key=fingerprint-shards"]

# keys whose values are clocks, durations, ids, paths or host facts: they differ run to run
VOLATILE = re.compile(
    r"(_at|_s|_ms|_mb|_id|_ids|_path|_dir|_seconds)$|rss|^pid$|^host|^python|^platform|"
    r"^versions?$|^started|^finished|^created|^updated|^wall|^elapsed|^duration|^timestamp|"
    r"^store$|^cwd$|^argv$|^command$|^id$|_p50|_p95|_p99|per_s|throughput",
    re.IGNORECASE,
)
KEPT = {"case_id", "target_id", "benchmark_id", "candidate_target_id", "baseline_target_id"}


def scrub(value: Any) -> Any:
    """The value with volatile keys dropped, recursively."""
    if isinstance(value, dict):
        return {
            k: scrub(v) for k, v in sorted(value.items()) if k in KEPT or not VOLATILE.search(k)
        }
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="srbench-fingerprint-") as folder:
        # each project in a folder of its own: pytest collects a session's folder as it is
        root = Path(folder) / "suites"
        root.mkdir()
        synth = [sys.executable, "-m", "pytest_srbench", "datasets", "synth", "--profile", "quick"]
        subprocess.run(synth, cwd=root, check=True, capture_output=True)
        marked = Path(folder) / "marked"
        marked.mkdir()
        for file, text in MARKED_TESTS.items():
            (marked / file).write_text(text.lstrip())
        runs = [(name, root, [args]) for name, args in RUNS.items()]
        runs.append(("marked", marked, [MARKED]))
        runs.append(("sharded", root, [[*SHARDED, f"--srbench-shard={k}/2"] for k in (1, 2)]))
        for name, cwd, invocations in runs:
            for args in invocations:
                command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--srbench-seed=11", f"--srbench-json={name}.json", *args]  # fmt: skip
                done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
                if done.returncode not in (0, 1):
                    print(done.stdout[-3000:], done.stderr[-3000:], file=sys.stderr)
                    return done.returncode
            report = json.loads((cwd / f"{name}.json").read_text())
            report["cells"] = sorted(
                report.get("cells") or [], key=lambda c: (c.get("case_id"), c.get("target_id"))
            )
            print(f"== {name}")
            print(json.dumps(scrub(report), indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
