"""docs/howto-local-model.md as a new user follows it: its commands, parsed from the page and
run exactly as written in a fresh project folder (``.venv`` is this environment), against the
real parts ``srbench real build`` installed, give a complete report of all nine benchmarks.

The set-up block (``python3 -m venv .venv && pip install -e .``) is the one step not run: the
folder's ``.venv`` links to the environment running this test, where the package is installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_srbench.core.plan.srbench import SR_BENCH_BENCHMARKS
from pytest_srbench.store import open_store
from tests.conftest import DEV_ONLY_PLUGINS
from tests.docs.blocks import Block, parse
from tests.real_parts import require_llama_parts

pytestmark = [pytest.mark.realmodel, pytest.mark.slow, pytest.mark.xdist_group("real-servers")]

ROOT = Path(__file__).resolve().parents[2]
PAGE = "docs/howto-local-model.md"
SECTION = "## A real model on this machine, from nothing to a report"
RUN_HERE = "tests/docs/test_howto_local_model.py"  # named by the blocks this test runs
TIMEOUT_S = 3600  # the whole smoke profile on a CPU-only model, on a loaded two-core machine


def section_blocks() -> tuple[Block, list[Block]]:
    """The section's project configuration (its first ``toml`` block) and the shell blocks
    that name this test as where they run."""
    text = (ROOT / PAGE).read_text(encoding="utf-8")
    lines = text.splitlines()
    start = lines.index(SECTION) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("## ")) + 1
    blocks, problems = parse(text, PAGE)
    assert not problems, problems
    inside = [block for block in blocks if start < block.line < end]
    config = next(block for block in inside if block.lang == "toml")
    commands = [b for b in inside if b.kind == "shell" and RUN_HERE in (b.illustrative or "")]
    return config, commands


def commands_of(block: Block) -> list[str]:
    return [line for line in block.text.splitlines() if line.strip() and not line.startswith("#")]


def test_the_howtos_commands_give_a_complete_report(tmp_path):
    require_llama_parts()
    config, blocks = section_blocks()
    commands = [command for block in blocks for command in commands_of(block)]
    assert commands[0].startswith(".venv/bin/srbench real build")
    assert commands[-1].startswith(".venv/bin/pytest --srbench-profile=smoke")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    (project / "pyproject.toml").write_text(config.text, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_", "XDIST_"))}
    env.update(PYTHONPATH=str(ROOT), PYTEST_ADDOPTS=DEV_ONLY_PLUGINS, NO_COLOR="1")
    outputs = []
    for command in commands:
        done = subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)  # fmt: skip
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"`{command}` exited {done.returncode}\n{output[-3000:]}"
        outputs.append(output)
    assert "llama-server already built" in outputs[0]  # reused, never rebuilt
    report = json.loads((project / "reports" / "srbench-report.json").read_text())
    assert report["status"] == "completed"
    (metric,) = report["summary"]["targets"]
    assert metric["id"] == "smollm2" and metric["simulated"] is False
    assert metric["total"] == metric["completed"] == 36 and metric["failed"] == 0
    assert metric["complete"] is True and metric["pending"] == 0
    assert metric["sr_bench_score"] is not None  # all nine benchmarks, every cell graded
    assert {row["benchmark"] for row in report["benchmarks"]} == SR_BENCH_BENCHMARKS
    calls = open_store(project / ".srbench").calls(report["run_id"])
    by_role: dict[str, list[dict]] = {}
    for call in calls:
        by_role.setdefault(call["role"], []).append(call)
    assert {c["model"] for c in by_role["subject"]} == {"smollm2-135m"}
    assert not any(c["simulated"] for c in by_role["subject"])  # the real model answered
    for role, model in (("judge", "sim-judge"), ("simulator", "sim-user")):
        assert by_role[role] and {c["model"] for c in by_role[role]} == {model}
        assert all(c["simulated"] and c["status"] == "completed" for c in by_role[role])
    assert "llama-server for smollm2:" in outputs[-1]  # the chosen size and the measurements
    # the report says how the answers ended, per benchmark
    assert {row["benchmark"] for row in report["outcomes"]} == SR_BENCH_BENCHMARKS
    assert sum(sum(row["counts"].values()) for row in report["outcomes"]) == 36
    assert "answers (share of planned cells)" in outputs[-1]
    assert any("sim-judge" in line and "simulated" in line for line in report["limitations"])
