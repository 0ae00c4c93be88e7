"""A body's answer is graded by every benchmark that grades a final answer — hle and
simpleqa-verified through their bound judge, arc-agi-2 by its grid parser, livecodebench and
scicode by running the code in the sandbox — as the shipped suite grades the same replies; the
benchmarks that need their own loop (terminal-bench, tau3) refuse such a test at collection,
before any call, unless its body runs ``srbench_protocol``."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from tests.plugin.helpers import project, settle_simulator

pytestmark = pytest.mark.slow

ANSWERED = ["hle", "simpleqa-verified", "arc-agi-2", "livecodebench", "scicode"]

TEXT_BODIES = """
import pytest


async def ask(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text


@pytest.mark.srbench("hle")
async def test_hle(srbench_case, srbench_target):
    return await ask(srbench_case, srbench_target)


@pytest.mark.srbench("simpleqa-verified")
def test_simpleqa(srbench_case, srbench_target):
    return srbench_target.ask_sync(srbench_case.messages)  # the reply object: its text


@pytest.mark.srbench("arc-agi-2")
async def test_arc(srbench_case, srbench_target):
    return await ask(srbench_case, srbench_target)


@pytest.mark.srbench("livecodebench")
async def test_lcb(srbench_case, srbench_target):
    return await ask(srbench_case, srbench_target)


@pytest.mark.srbench("scicode")
async def test_scicode(srbench_case, srbench_target):
    assert "reference_steps" not in srbench_case.metadata  # the simulator's, not the body's
    messages = list(srbench_case.messages)
    texts = []
    for number, step in enumerate(srbench_case.metadata["sub_steps"], start=1):
        if number > 1:
            messages.append({"role": "user", "content": "Next: " + step["function_header"]})
        reply = await srbench_target.ask(messages)
        messages.append({"role": "assistant", "content": reply.content})
        texts.append(reply.final_text)
    return texts  # one reply per sub-step, as the protocol's conversation has them
"""


def run(pytester: pytest.Pytester, *args: str, name: str) -> tuple[Any, dict]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", f"--srbench-json={name}", *args
    )
    return result, json.loads((pytester.path / name).read_text())


def outcomes(report: dict) -> list[tuple]:
    return sorted(
        (c["case_id"], c["target_id"], c["status"], c["correct"], c["answer_status"])
        for c in report["cells"]
    )


def journal(pytester: pytest.Pytester, store: str) -> list[dict]:
    db = sqlite3.connect(pytester.path / store / "journal.sqlite3")
    return [json.loads(data) for (data,) in db.execute("SELECT data FROM calls")]


def test_a_body_answer_is_graded_as_the_shipped_suite_grades_the_same_reply(pytester):
    pytester.makepyfile(test_mine=TEXT_BODIES)
    result, mine = run(pytester, "test_mine.py", "--srbench-store=mine", name="mine.json")
    assert result.ret == 0, result.stdout.str()
    chosen = [f"--srbench-benchmark={benchmark}" for benchmark in ANSWERED]
    shipped_result, shipped = run(
        pytester, *chosen, "--ignore=test_mine.py", "--srbench-store=shipped", name="shipped.json"
    )
    assert shipped_result.ret == 0, shipped_result.stdout.str()
    assert outcomes(mine) == outcomes(shipped)
    assert {c["benchmark"] for c in mine["cells"]} == set(ANSWERED)
    assert all(c["status"] == "completed" for c in mine["cells"])
    graded = {c["correct"] for c in mine["cells"] if c["benchmark"] != "scicode"}
    assert graded == {True, False}  # right and wrong answers both graded as the suite does
    # the judged benchmarks' verdicts are the bound judge's calls, journaled as judge calls
    judged = [r for r in journal(pytester, "mine") if r["role"] == "judge"]
    shipped_judged = [r for r in journal(pytester, "shipped") if r["role"] == "judge"]
    assert len(judged) == len(shipped_judged) == 2 * (4 + 5)  # hle 4, simpleqa 5 cases × 2
    assert {r["requested_model"] for r in judged} == {"sim-judge"}
    assert all(r["status"] == "completed" for r in judged)


STRUCTURED_BODIES = """
import json
import re

import pytest

FENCE = re.compile(r"```python\\n(.*?)```", re.DOTALL)
OSCILLATOR = '''
def spring_force(k, x):
    return -k * x

def potential_energy(k, x):
    return 0.5 * k * x ** 2

def total_energy(k, m, x, v):
    return potential_energy(k, x) + 0.5 * m * v ** 2
'''


async def ask(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text


@pytest.mark.srbench("arc-agi-2")
async def test_arc_text(srbench_case, srbench_target):
    return await ask(srbench_case, srbench_target)


@pytest.mark.srbench("arc-agi-2")
async def test_arc_grids(srbench_case, srbench_target):
    return json.loads(await ask(srbench_case, srbench_target))  # a list of grids


@pytest.mark.srbench("livecodebench")
async def test_lcb_text(srbench_case, srbench_target):
    return await ask(srbench_case, srbench_target)


@pytest.mark.srbench("livecodebench")
async def test_lcb_code(srbench_case, srbench_target):
    return FENCE.search(await ask(srbench_case, srbench_target)).group(1)  # plain code


@pytest.mark.srbench("scicode")
def test_scicode_code(srbench_case):
    return OSCILLATOR  # plain code for the whole problem, every sub-step's tests run on it


@pytest.mark.srbench("scicode")
def test_scicode_prose(srbench_case):
    return "I would integrate the equations of motion."  # no code: unparsed
"""


def test_returned_grids_and_plain_code_are_graded_like_reply_text(pytester):
    pytester.makepyfile(test_mine=STRUCTURED_BODIES)
    result, report = run(pytester, "test_mine.py", name="mine.json")
    assert result.ret == 0, result.stdout.str()
    by_variant: dict[str, list[tuple]] = {}
    for case, target, status, correct, answer_status in outcomes(report):
        model, variant = target.split("~")
        by_variant.setdefault(variant, []).append((case, model, status, correct, answer_status))
    assert by_variant["arc_grids"] == by_variant["arc_text"]
    assert by_variant["lcb_code"] == by_variant["lcb_text"]
    assert (
        {c[3] for c in by_variant["arc_text"]}
        == {c[3] for c in by_variant["lcb_text"]}
        == {
            True,
            False,
        }
    )
    assert [c[2:] for c in by_variant["scicode_code"]] == [("completed", True, "answered")] * 2
    assert [c[2:] for c in by_variant["scicode_prose"]] == [("completed", False, "answered")] * 2


REFUSED = """
import pytest

@pytest.mark.srbench("{benchmark}")
async def test_mine(srbench_case, srbench_target):
    reply = await srbench_target.ask(srbench_case.messages)
    return reply.final_text
"""


@pytest.mark.parametrize("benchmark", ["tau3", "terminal-bench-2.1"])
def test_a_loop_benchmark_refuses_a_body_answer_at_collection_before_any_call(
    pytester, sim, benchmark
):
    project(pytester, sim, "sim-large")
    pytester.makepyfile(test_mine=REFUSED.format(benchmark=benchmark))
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "test_mine.py"
    )
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()  # a collection error
    result.stdout.fnmatch_lines(
        [
            f"pytest-srbench: test_mine.py::test_mine: benchmark '{benchmark}' cannot grade an "
            "answer returned by a test body (its protocol is *srbench_protocol fixture*"
            "`return await srbench_protocol()`*"
        ]
    )
    assert settle_simulator(sim)["requests"] == 0


def test_a_loop_benchmark_body_that_runs_the_protocol_is_kept(pytester, sim):
    project(pytester, sim, "sim-large")
    pytester.makepyfile(
        test_mine="""
        import pytest

        @pytest.mark.srbench("tau3")
        async def test_tau(srbench_protocol):
            return await srbench_protocol()
        """
    )
    result, report = run(pytester, "test_mine.py", name="mine.json")
    assert result.ret == 0, result.stdout.str()
    assert {c["status"] for c in report["cells"]} == {"completed"} and len(report["cells"]) == 3
    assert settle_simulator(sim)["requests"] > 0
