"""Benchmarks written as pytest tests: a marked test function is parametrized by the plan's
cells, its body runs as the cell (async on the engine's loop, sync in a thread), its answer is
graded by the benchmark, and the run gets the same receipts and report as a shipped suite."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import textwrap
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ASYNC_MMLU = """
import pytest
from typing import Any

@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target):
    assert "answer" not in vars(srbench_case)  # the reference stays with the grader
    reply = await srbench_target.ask(srbench_case.messages)
    return reply.final_text
"""


def run(pytester: pytest.Pytester, *args: str, name: str = "report.json") -> tuple[Any, dict]:
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", f"--srbench-json={name}", *args
    )
    return result, json.loads((pytester.path / name).read_text())


def scrubbed_targets(report: dict) -> list[dict]:
    keep = ("id", "total", "completed", "failed", "correct", "accuracy", "accuracy_ci95",
            "tokens", "cost_usd", "complete")  # fmt: skip
    return [{k: t[k] for k in keep} for t in report["summary"]["targets"]]


def test_an_async_test_body_benchmarks_like_the_shipped_suite(pytester):
    pytester.makepyfile(test_mine=ASYNC_MMLU)
    result, mine = run(pytester, "test_mine.py")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*test_mine.py*", "*srbench report*", "* correct, * wrong in *"])
    ids = [line for line in result.stdout.lines if "test_mmlu[" in line]
    assert ids == []  # quiet progress; the ids are checked through --collect-only below
    shipped_result, shipped = run(
        pytester, "--srbench-benchmark=mmlu-pro", "--ignore=test_mine.py", name="shipped.json"
    )
    assert shipped_result.ret == 0
    assert scrubbed_targets(mine) == scrubbed_targets(shipped)
    assert mine["summary"]["targets"][0]["total"] == 14
    listed = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--collect-only", "-q", "test_mine.py"
    )
    listed.stdout.fnmatch_lines(["test_mine.py::test_mmlu[[]mmlu-pro/smoke-*-sim-large[]]"])


def test_calls_from_the_body_are_journaled_receipts(pytester):
    pytester.makepyfile(test_mine=ASYNC_MMLU)
    result, report = run(pytester, "test_mine.py", "--srbench-store=store")
    assert result.ret == 0
    db = sqlite3.connect(pytester.path / "store" / "journal.sqlite3")
    rows = [json.loads(data) for (data,) in db.execute("SELECT data FROM calls")]
    assert len(rows) == 28 and {row["status"] for row in rows} == {"completed"}
    assert all(row["usage"]["output_tokens"] > 0 and row["ttft_s"] is not None for row in rows)
    assert all(row["evidence_bytes"] > 0 for row in rows)


SYNC_GPQA = """
import pytest
from typing import Any

@pytest.mark.srbench("gpqa-diamond")
def test_gpqa(srbench_case, srbench_target):
    if srbench_case.id.endswith("-002"):
        raise ValueError("my pipeline broke\\nwith a second line")
    if srbench_case.id.endswith("-003"):
        return None
    if srbench_case.id.endswith("-004"):
        return "B"  # answered without any journaled call: tokens and cost stay unknown
    return srbench_target.ask_sync(srbench_case.prompt).final_text
"""


def test_a_sync_body_an_exception_and_no_answer_are_failed_cells_counted_wrong(pytester):
    pytester.makepyfile(test_mine=SYNC_GPQA)
    result, report = run(pytester, "test_mine.py", "--srbench-store=store")
    assert result.ret == 1
    # the body's own exception, as pytest shows a test's; a refusal keeps its one-line reason
    result.stdout.fnmatch_lines(["E * ValueError: my pipeline broke", "E * with a second line"])
    result.stdout.fnmatch_lines(["*failed: the test body returned no answer*"])
    for target in report["summary"]["targets"]:
        assert target["total"] == 4 and target["failed"] == 2 and target["completed"] == 2
        assert target["accuracy"] == target["correct"] / 4  # full denominator
        assert target["cost_usd"] is None and target["tokens"] is None  # one cell: no calls
    db = sqlite3.connect(pytester.path / "store" / "journal.sqlite3")
    results = {
        case: json.loads(data)
        for case, data in db.execute(
            "SELECT case_id, data FROM results WHERE target_id = 'sim-small'"
        )
    }
    silent = results["gpqa-diamond/smoke-004"]
    assert silent["status"] == "completed" and silent["call_count"] == 0
    assert silent["usage"] is None and silent["cost_usd"] is None


def test_xdist_gives_the_same_report(pytester):
    pytester.makepyfile(test_mine=ASYNC_MMLU)
    single_result, single = run(pytester, "test_mine.py")
    dist_result, dist = run(pytester, "test_mine.py", "-n", "2", name="dist.json")
    assert single_result.ret == dist_result.ret == 0
    assert scrubbed_targets(single) == scrubbed_targets(dist)
    assert dist["provenance"]["runner"]["processes"] == 2


def test_a_benchmark_that_cannot_grade_a_returned_answer_says_so(pytester):
    pytester.makepyfile(
        test_mine="""
        import pytest

        @pytest.mark.srbench("tau3")
        async def test_agent(srbench_case):
            return "done"
        """
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-offline", "test_mine.py"
    )
    result.stdout.fnmatch_lines(["*cannot grade an answer returned by a test body*"])


def test_fixtures_without_the_marker_are_a_clear_error(pytester):
    pytester.makepyfile(
        test_mine="""
        def test_plain(srbench_case):
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-profile=smoke",
                                           "test_mine.py")  # fmt: skip
    result.stdout.fnmatch_lines(["*uses srbench_case / srbench_target without*"])
    assert result.ret != 0


def test_a_bad_marker_is_a_usage_error(pytester):
    pytester.makepyfile(
        test_mine=textwrap.dedent(
            """
            import pytest

            @pytest.mark.srbench
            async def test_bare(srbench_case):
                return "A"
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-profile=smoke",
                                           "test_mine.py")  # fmt: skip
    result.stdout.fnmatch_lines(['*use @pytest.mark.srbench("<benchmark>")*'])
    assert result.ret == pytest.ExitCode.INTERRUPTED  # a collection error


CONCURRENT = """
import asyncio
import pytest

@pytest.fixture(scope="session")
def meter():
    return {"now": 0, "most": 0, "seen": 0}

@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target, meter):
    meter["now"] += 1
    meter["seen"] += 1
    meter["most"] = max(meter["most"], meter["now"])
    try:
        await asyncio.sleep(0.2)
        return (await srbench_target.ask(srbench_case.messages)).final_text
    finally:
        meter["now"] -= 1

def test_zz_after(meter):  # an ordinary test, run after the benchmark's items
    print(f"METER most={meter['most']} seen={meter['seen']}")
"""


def test_async_bodies_with_session_fixtures_run_at_once(pytester):
    pytester.makepyfile(test_mine=CONCURRENT)
    result, report = run(pytester, "test_mine.py", "-s", "--srbench-concurrency=8")
    assert result.ret == 0
    (found,) = re.findall(r"METER most=(\d+) seen=(\d+)", result.stdout.str())
    most, seen = int(found[0]), int(found[1])
    assert seen == 28 and 2 <= most <= 8  # bounded by --srbench-concurrency
    assert report["summary"]["targets"][0]["total"] == 14


SCOPES = """
import asyncio
import pytest

ACTIVE = []

@pytest.fixture(scope="session")
def session_value():
    return "session"

@pytest.fixture(scope="module")
def module_value():
    return "module"

@pytest.fixture(scope="class")
def class_value():
    return "class"

@pytest.fixture
def function_value(srbench_case):
    ACTIVE.append(srbench_case.id)
    yield srbench_case.id
    ACTIVE.remove(srbench_case.id)

class TestScopes:
    @pytest.mark.srbench("gpqa-diamond")
    async def test_gpqa(self, srbench_case, srbench_target, session_value, module_value,
                        class_value, function_value):
        assert (session_value, module_value, class_value) == ("session", "module", "class")
        assert ACTIVE == [srbench_case.id] == [function_value]  # set up for this item alone
        await asyncio.sleep(0.05)
        assert ACTIVE == [srbench_case.id]
        return (await srbench_target.ask(srbench_case.messages)).final_text
"""


def test_fixtures_of_every_scope_and_a_function_fixture_wraps_only_its_own_body(pytester):
    pytester.makepyfile(test_mine=SCOPES)
    result, report = run(pytester, "test_mine.py")
    assert result.ret == 0, result.stdout.str()
    for target in report["summary"]["targets"]:
        assert target["total"] == 4 and target["completed"] == 4 and target["failed"] == 0


FLAKY_BODY = """
import os
import pytest

@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target):
    if os.environ.get("BREAK") and srbench_case.id.endswith(("-001", "-003")):
        raise RuntimeError("pipeline down")
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""


def test_a_recovery_child_reruns_only_the_unanswered_test_cells(pytester, monkeypatch):
    pytester.makepyfile(test_mine=FLAKY_BODY)
    monkeypatch.setenv("BREAK", "1")
    first, parent = run(pytester, "test_mine.py", "--srbench-store=store")
    assert first.ret == 1 and parent["status"] == "failed"
    assert sum(t["failed"] for t in parent["summary"]["targets"]) == 4
    monkeypatch.delenv("BREAK")
    planned = pytester.run(
        sys.executable, "-m", "pytest_srbench", "--store", "store", "recover-plan",
        parent["run_id"], "--mode", "undispatched", "--output", "plan.json",
    )  # fmt: skip
    assert planned.ret == 0, planned.stderr.str()
    assert json.loads((pytester.path / "plan.json").read_text())["counts"]["eligible"] == 4
    child = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-store=store", "--srbench-recover=plan.json",
        "--srbench-run-key=recover-1", "--srbench-json=child.json", "test_mine.py",
    )  # fmt: skip
    assert child.ret == 0, child.stdout.str()
    child.stdout.fnmatch_lines(["*collected 4 items*"])  # only the plan's cells
    report = json.loads((pytester.path / "child.json").read_text())
    assert report["recovery"]["parent_run_id"] == parent["run_id"]
    assert report["summary"]["planned_cells"] == 4
    db = sqlite3.connect(pytester.path / "store" / "journal.sqlite3")
    (calls,) = db.execute("SELECT COUNT(*) FROM calls WHERE run_id = ?", (report["run_id"],))
    assert calls == (4,)  # one request per re-run cell, none for the cells already completed


def test_srbench_benchmark_picks_among_marked_tests(pytester):
    pytester.makepyfile(
        test_mine=ASYNC_MMLU
        + """
@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""
    )
    result, report = run(pytester, "test_mine.py", "--srbench-benchmark=gpqa-diamond")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*1 skipped*"])  # test_mmlu: no cells in this plan
    assert {b["benchmark"] for b in report["benchmarks"]} == {"gpqa-diamond"}


USER_TARGETS = """
import asyncio
import pytest
import pytest_srbench


class KeywordBot:
    async def __call__(self, messages):
        await asyncio.sleep(0.01)
        return "B"


@pytest_srbench.target("keyword-bot", model="keyword-bot-v1")
@pytest.fixture(scope="session")
def keyword_bot():
    return KeywordBot()


@pytest_srbench.target("echo-app")
@pytest.fixture  # function scope: set up for each cell of this target
def echo_app(srbench_case):
    def answer(messages):  # a plain callable: it runs in a worker thread
        assert messages[-1]["content"] == srbench_case.prompt
        return "A"
    return answer
"""


def test_user_fixtures_are_targets_of_the_plan(pytester):
    pytester.makeconftest(USER_TARGETS)
    pytester.makepyfile(test_mine=ASYNC_MMLU)
    result, report = run(pytester, "test_mine.py", "--srbench-store=store")
    assert result.ret == 0, result.stdout.str()
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    assert set(targets) == {"sim-large", "sim-small", "keyword-bot", "echo-app"}
    for own in ("keyword-bot", "echo-app"):
        row = targets[own]
        assert row["total"] == 14 and row["completed"] == 14 and row["failed"] == 0
        assert row["tokens"] is None and row["cost_usd"] is None  # nothing journaled: unknown
        assert row["simulated"] is False
    assert {t["id"]: t["kind"] for t in report["plan"]["targets"]}["keyword-bot"] == "python"
    assert {t["id"]: t["model"] for t in report["plan"]["targets"]}["keyword-bot"] == (
        "keyword-bot-v1"
    )
    db = sqlite3.connect(pytester.path / "store" / "journal.sqlite3")
    (calls,) = db.execute("SELECT COUNT(*) FROM calls WHERE target_id = 'keyword-bot'")
    assert calls == (0,)


def test_one_user_target_selected_alone_and_called_from_a_sync_body(pytester):
    pytester.makeconftest(USER_TARGETS)
    pytester.makepyfile(
        test_mine="""
        import pytest

        @pytest.mark.srbench("gpqa-diamond")
        def test_gpqa(srbench_case, srbench_target):
            return srbench_target.ask_sync(srbench_case.prompt).final_text
        """
    )
    result, report = run(pytester, "test_mine.py", "--srbench-target=echo-app")
    assert result.ret == 0, result.stdout.str()
    (target,) = report["summary"]["targets"]
    assert target["id"] == "echo-app" and target["total"] == 4 and target["failed"] == 0


def test_a_target_declared_twice_is_an_error(pytester):
    pytester.makeconftest(
        USER_TARGETS
        + """
@pytest_srbench.target("keyword-bot")
@pytest.fixture
def another():
    return None
"""
    )
    pytester.makepyfile(test_mine=ASYNC_MMLU)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-profile=smoke",
                                           "test_mine.py")  # fmt: skip
    assert result.ret != 0
    assert "target 'keyword-bot' is declared twice" in result.stdout.str() + result.stderr.str()


CAPITALS = """
import pytest
import pytest_srbench

CASES = [
    {"id": "fr", "question": "Capital of France? One word.", "answer": "Paris", "group": "eu"},
    {"id": "jp", "question": "Capital of Japan? One word.", "answer": "Tokyo", "group": "asia"},
    {"id": "ke", "question": "Capital of Kenya? One word.", "answer": "Nairobi", "group": "af"},
]

def grade(answer, case):
    if case["id"] == "ke" and answer == "odd":
        return "yes"  # not a bool: the cell cannot be graded
    return answer.strip().lower() == case["answer"].lower()

pytest_srbench.benchmark("capitals", cases=CASES, grade=grade, version="2")

ATLAS = {"France": "Paris", "Japan": "Osaka", "Kenya": "odd"}

@pytest.mark.srbench("capitals")
async def test_capitals(srbench_case):
    assert "answer" not in srbench_case.metadata
    return next(city for country, city in ATLAS.items() if country in srbench_case.prompt)
"""


def test_a_benchmark_defined_in_python_with_its_own_grader(pytester):
    pytester.makepyfile(test_mine=CAPITALS)
    result, report = run(pytester, "test_mine.py", "--srbench-target=sim-small")
    assert result.ret == 1  # the ungradable cell fails
    result.stdout.fnmatch_lines(["*the grader of 'capitals' returned str, not a bool*"])
    (target,) = report["summary"]["targets"]
    assert (target["total"], target["correct"], target["failed"]) == (3, 1, 1)
    (suite,) = report["provenance"]["dataset"]["suites"]
    assert suite["benchmark"] == "capitals" and suite["source"] == "python"
    assert report["plan"]["adapter_versions"] == {"capitals": "python:2"}
    changed = CAPITALS.replace("Capital of Kenya?", "Capital city of Kenya?")
    pytester.makepyfile(test_mine=changed)
    _, again = run(pytester, "test_mine.py", "--srbench-target=sim-small", name="again.json")
    assert again["plan"]["case_sha256"] != report["plan"]["case_sha256"]


@pytest.mark.parametrize(
    ("cases", "message"),
    [
        ('[{"id": "a", "question": "q"}, {"id": "a", "question": "q"}]', "duplicate id 'a'"),
        ('[{"id": "a"}]', "needs exactly one of 'question' or 'messages'"),
        ("[]", "needs at least one case"),
    ],
)
def test_a_malformed_python_benchmark_is_a_clear_error(pytester, cases, message):
    pytester.makepyfile(
        test_mine=f"""
import pytest_srbench
pytest_srbench.benchmark("broken", cases={cases}, grade=lambda a, c: True)
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-profile=smoke",
                                           "test_mine.py")  # fmt: skip
    assert result.ret != 0
    assert message in result.stdout.str()


LEAN = """
import pytest

@pytest.fixture(scope="session")
def resource():
    yield "ready"
    with open("torn-down.txt", "w") as done:  # in the project folder (the run's cwd)
        done.write("yes")

@pytest.mark.srbench("mmlu-pro")
async def test_mmlu(srbench_case, srbench_target, resource):
    assert resource == "ready"
    return (await srbench_target.ask(srbench_case.messages)).final_text

@pytest.mark.skip(reason="not today")
@pytest.mark.srbench("gpqa-diamond")
async def test_skipped(srbench_case, srbench_target, resource):
    raise AssertionError("a skipped test's body never runs")
"""


def test_started_ahead_items_keep_pytests_reports_marks_and_teardown(pytester):
    pytester.makepyfile(test_mine=LEAN)
    result, report = run(pytester, "test_mine.py", "--junitxml=junit.xml")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*8 skipped*"])
    assert (pytester.path / "torn-down.txt").read_text() == "yes"  # the session fixture's
    junit = (pytester.path / "junit.xml").read_text()
    assert junit.count("<testcase ") == 28 + 8
    assert {t["id"]: t["total"] for t in report["summary"]["targets"]} == {
        "sim-large": 14, "sim-small": 14,
    }  # fmt: skip


def test_pytest_skip_inside_a_body_is_a_failed_cell_not_a_lost_one(pytester):
    pytester.makepyfile(
        test_mine="""
        import pytest

        @pytest.mark.srbench("gpqa-diamond")
        async def test_gpqa(srbench_case, srbench_target):
            if srbench_case.id.endswith("-001"):
                pytest.skip("no answer today")
            return (await srbench_target.ask(srbench_case.messages)).final_text
        """
    )
    result, report = run(pytester, "test_mine.py", "--srbench-target=sim-small")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*the test body raised pytest's Skipped: a cell needs an answer*"])
    (target,) = report["summary"]["targets"]
    assert target["total"] == 4 and target["failed"] == 1 and target["pending"] == 0


RAG_SEARCH = """
import json
from pathlib import Path

import pytest
import pytest_srbench

SUITE = Path(pytest_srbench.__file__).parent / "suites" / "rag-smoke.json"


class PerfectSearch:
    '''Ranks each query's expected notes (and blocks) first, read from the suite file itself
    (the body never sees them), so that every metric is known.'''

    def __init__(self):
        self.expected = {case["query"]: case for case in json.loads(SUITE.read_text())["cases"]}

    def search(self, query):
        case = self.expected[query]
        blocks = case["expected_block_ids"]
        return [{"note_id": note, "block_id": blocks[i] if i < len(blocks) else note + "-b1"}
                for i, note in enumerate(case["expected_note_ids"])]


@pytest_srbench.target("my-search")
@pytest.fixture(scope="session")
def my_search():
    return PerfectSearch()
"""

RAG_BODY = """
import pytest

@pytest.mark.srbench("rag-smoke")
def test_search(srbench_case, srbench_target):
    meta = srbench_case.metadata
    assert "expected_note_ids" not in meta and "expected_block_ids" not in meta
    if srbench_target.kind == "python" and meta["case_id"] == "r03-cert-validity":
        return ["n03"]  # note ids alone are not ranked results
    if srbench_target.kind == "python" and meta["case_id"] == "r04-sev1-ack":
        return [{"note_id": "n04"}]
    if srbench_target.kind == "python":
        return srbench_target.app.search(meta["query"])
    return srbench_target.search_sync(meta["query"])  # one journaled search of the service
"""

LATENCY = ("p50_latency_ms", "p90_latency_ms", "p95_latency_ms")


def test_a_rag_body_returns_ranked_results_scored_like_the_retrieval_services(pytester):
    pytester.makeconftest(RAG_SEARCH)
    pytester.makepyfile(test_mine=RAG_BODY)
    result, report = run(pytester, "test_mine.py")
    assert result.ret == 1  # the two malformed answers are failed cells
    shape = (
        "grades ranked results (a list of {'note_id': str, 'block_id': str} mappings, best first)"
    )
    result.stdout.fnmatch_lines([
        f"*failed: benchmark 'rag-smoke' {shape}; result 1 of the test body's answer is a str",
        f"*failed: benchmark 'rag-smoke' {shape}; result 1 of the test body's answer has no "
        "'block_id' string",
    ])  # fmt: skip
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    assert set(targets) == {"sim-rag-fts", "sim-rag-vector", "sim-rag-hybrid", "my-search"}
    mine = targets["my-search"]
    assert (mine["total"], mine["correct"], mine["failed"]) == (28, 26, 2)
    rows = {row["target_id"]: row for row in report["rag"]["rows"]}
    # 26 perfect rankings, 2 failed samples counted as 0 in every denominator
    assert {k: v for k, v in rows["my-search"].items() if k not in LATENCY} == {
        "benchmark": "rag-smoke", "target_id": "my-search", "mode": "my-search", "top_k": 5,
        "total_cases": 28, "successful_cases": 26, "failed_cases": 2, "failure_rate": 2 / 28,
        "hit_at_1": 26 / 28, "hit_at_5": 26 / 28, "recall_at_k": 26 / 28, "mrr": 26 / 28,
        "citation_hit_rate": 17 / 19, "citation_cases": 19,
    }  # fmt: skip
    assert rows["my-search"]["p50_latency_ms"] is None  # a pipeline's own search is not timed
    assert report["rag"]["config_snapshot"]["python_targets"] == ["my-search"]
    # the services' rows (srbench_target.search) equal the shipped suite's, latency measured
    shipped_result, shipped = run(
        pytester, "--srbench-benchmark=rag-smoke", "--ignore=test_mine.py", name="shipped.json"
    )
    assert shipped_result.ret == 0
    services = {row["target_id"]: row for row in shipped["rag"]["rows"]}
    assert set(services) == {"sim-rag-fts", "sim-rag-vector", "sim-rag-hybrid"}
    for target_id, service in services.items():
        ours = rows[target_id]
        assert {k: v for k, v in ours.items() if k not in LATENCY} == {
            k: v for k, v in service.items() if k not in LATENCY
        }
    assert rows["sim-rag-fts"]["hit_at_1"] < 1.0 and rows["sim-rag-fts"]["p50_latency_ms"] > 0


MIXED_KINDS = (
    RAG_BODY
    + """

@pytest.mark.srbench("gpqa-diamond")
async def test_chat(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""
)


def test_selected_targets_go_to_the_marked_tests_that_can_use_them(pytester):
    pytester.makeconftest(RAG_SEARCH)
    pytester.makepyfile(test_mixed=MIXED_KINDS)
    result, report = run(pytester, "test_mixed.py", "--srbench-target=my-search",
                         "--srbench-target=sim-large", "--srbench-target=sim-rag-fts")  # fmt: skip
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    assert set(targets) == {"my-search", "sim-large", "sim-rag-fts"}
    benchmarks = {(c["benchmark"], c["target_id"]) for c in report["cells"]}
    assert ("gpqa-diamond", "sim-large") in benchmarks
    assert ("rag-smoke", "sim-rag-fts") in benchmarks
    assert ("rag-smoke", "sim-large") not in benchmarks
    assert ("gpqa-diamond", "sim-rag-fts") not in benchmarks  # a service cannot chat
    alone, fts = run(pytester, "test_mixed.py", "--srbench-target=sim-rag-fts", name="fts.json")
    assert alone.ret == 0
    assert [(t["id"], t["total"]) for t in fts["summary"]["targets"]] == [("sim-rag-fts", 28)]
    alone.stdout.fnmatch_lines(["*1 skipped*"])  # the chat test has no target it can use
    nobody = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "test_mixed.py",
        "--srbench-target=sim-rag-fts", "--srbench-target=sim-judge-x",
    )  # fmt: skip
    assert nobody.ret != 0
    nobody.stderr.fnmatch_lines(["*unknown target(s) sim-judge-x*"])
