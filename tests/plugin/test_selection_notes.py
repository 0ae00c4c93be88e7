"""A srbench run that selects nothing says why (never a bare "no tests ran"), and the
documented commands that used to select nothing run: a RAG benchmark in a project whose
``default_targets`` are chat models, and ``--srbench-mode preview`` on its own."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from pytest_srbench.app.config import parse_config

pytestmark = pytest.mark.slow

CHAT_DEFAULTS = """
[tool.srbench]
default_targets = ["remote"]

[[tool.srbench.targets]]
id = "remote"
base_url = "http://127.0.0.1:9/v1"
model = "remote-model"
[tool.srbench.targets.prices.remote-model]
input = 1.0
cached_input = 0.5
cache_write = 0.0
output = 2.0
"""

RETRIEVAL_DEFAULTS = """
[tool.srbench]
default_targets = ["notes"]

[[tool.srbench.targets]]
id = "notes"
kind = "retrieval"
base_url = "http://127.0.0.1:9/v1"
model = "notes-index"
retrieval = { mode = "fts" }
"""

CONFTEST = """
from pytest_srbench.benchmarks.mcq import MmluProAdapter

class MyQuiz(MmluProAdapter):
    benchmark = "my-quiz"

def pytest_srbench_adapters(registry, config):
    registry.register(MyQuiz())
"""

ROW = {"question_id": "q1", "question": "2 + 2?", "options": ["3", "4"], "answer": "B"}


@pytest.fixture(autouse=True)
def fast_embedder(monkeypatch):
    monkeypatch.setenv("SRBENCH_SIM_EMBEDDER", "hashing")


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)


def runs_in_store(pytester: pytest.Pytester) -> int:
    journal = pytester.path / ".srbench" / "journal.sqlite3"
    if not journal.exists():
        return 0
    with sqlite3.connect(journal) as db:
        return int(db.execute("SELECT count(*) FROM runs").fetchone()[0])


# -- target selection (no subprocess) -------------------------------------------------------
def test_rag_benchmark_uses_builtin_retrieval_targets_when_defaults_are_chat_models():
    config = parse_config({"default_targets": ["sim-large"]}, "pyproject.toml")  # a chat model only
    both = config.select_targets(None, kinds={"single", "mom", "retrieval"})
    assert [t.id for t in both] == ["sim-large", "sim-rag-fts", "sim-rag-vector", "sim-rag-hybrid"]
    assert [t.id for t in config.select_targets(None, kinds={"retrieval"})] == [
        "sim-rag-fts",
        "sim-rag-vector",
        "sim-rag-hybrid",
    ]
    assert [t.id for t in config.select_targets(None, kinds={"single", "mom"})] == ["sim-large"]


def test_a_retrieval_target_in_default_targets_replaces_the_builtin_ones():
    config = parse_config({"default_targets": ["sim-large", "sim-rag-fts"]}, "pyproject.toml")
    chosen = config.select_targets(None, kinds={"retrieval"})
    assert [t.id for t in chosen] == ["sim-rag-fts"]


# -- the documented commands run ------------------------------------------------------------
def test_rag_smoke_runs_in_a_project_whose_default_targets_are_chat_models(pytester):
    pytester.makepyprojecttoml(CHAT_DEFAULTS)
    result = run(pytester, "--srbench-benchmark", "rag-smoke", "--srbench-json=report.json")
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    targets = [t["id"] for t in report["summary"]["targets"]]
    assert targets == ["sim-rag-fts", "sim-rag-vector", "sim-rag-hybrid"]
    assert all(t["total"] == 28 for t in report["summary"]["targets"])
    assert "nothing to run" not in result.stdout.str()


def test_a_chat_run_against_a_real_default_target_starts_no_simulator(pytester):
    pytester.makepyprojecttoml(CHAT_DEFAULTS)
    result = run(pytester, "--srbench-benchmark", "mmlu-pro", "--srbench-limit", "1")
    assert result.ret == 1  # the endpoint refuses the connection: the cell fails
    result.stdout.fnmatch_lines(["*mmlu-pro/*[[]remote[]]*"])
    assert not (pytester.path / ".srbench" / "simulator").exists()


def test_preview_mode_alone_activates_srbench(pytester):
    result = run(
        pytester, "--srbench-mode", "preview", "--srbench-target", "sim-router", "--srbench-limit=1"
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*srbench report*", "* routed in *"])
    assert "no tests ran" not in result.stdout.str()


# -- a plan without cells is a usage error that says why ------------------------------------
@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["single", "xdist"])
def test_a_benchmark_without_a_target_of_its_kind_is_a_usage_error(pytester, xdist):
    pytester.makepyprojecttoml(RETRIEVAL_DEFAULTS)
    result = run(pytester, "--srbench-benchmark", "mmlu-pro", *xdist)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-3000:]
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert (
        "ERROR: pytest-srbench: nothing to run — benchmark mmlu-pro needs a model or router "
        "target, but default_targets lists only notes (retrieval); pass --srbench-target "
        "sim-large (or another model or router target: sim-router, sim-small)"
    ) in output
    assert output.count("nothing to run") == 1
    assert runs_in_store(pytester) == 0


def test_a_planning_error_under_xdist_is_one_line_and_exit_4(pytester):
    """Workers plan the run; their usage errors reach the terminal through the controller."""
    result = run(pytester, "--srbench-benchmark", "no-such-bench", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-3000:]
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert output.count("ERROR: pytest-srbench: no adapter for benchmark 'no-such-bench'") == 1
    assert "Traceback" not in output and "INTERNALERROR" not in output


def test_an_extension_suite_without_profiles_is_a_usage_error_naming_the_field(pytester):
    pytester.makeconftest(CONFTEST)
    folder = pytester.path / "suites" / "my-quiz"
    folder.mkdir(parents=True)
    rows = (json.dumps({**ROW, "category": "math"}) + "\n").encode()
    (folder / "cases.jsonl").write_bytes(rows)
    meta = {"benchmark": "my-quiz", "version": "1", "source": "original items", "revision": "1"}
    meta["sha256"] = hashlib.sha256(rows).hexdigest()
    (folder / "suite.json").write_text(json.dumps(meta))
    result = run(pytester, "--srbench-benchmark", "my-quiz")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert "nothing to run — benchmark my-quiz selects no case for profile 'smoke'" in output
    assert '"profiles": {"smoke": 1}' in output
    meta["profiles"] = {"smoke": 1}
    (folder / "suite.json").write_text(json.dumps(meta))
    fixed = run(pytester, "--srbench-benchmark", "my-quiz")
    assert fixed.ret == 0, fixed.stdout.str()[-3000:]
    fixed.stdout.fnmatch_lines(["*srbench report*", "my-quiz *sim-large*"])


def test_a_benchmark_left_without_a_target_is_named_when_others_run(pytester):
    result = run(
        pytester,
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=rag-smoke",
        "--srbench-target=sim-large",
        "--srbench-limit=1",
    )
    assert result.ret == 0, result.stdout.str()[-3000:]
    line = (
        "pytest-srbench: not run — benchmark rag-smoke needs a retrieval target, but "
        "--srbench-target selects only sim-large (model); pass --srbench-target sim-rag-fts "
        "(or another retrieval target: sim-rag-hybrid, sim-rag-vector)"
    )
    assert result.stdout.str().count(line) == 1
    result.stdout.fnmatch_lines(["*srbench report*", "*1 correct*"])


# -- deselecting every cell is pytest's exit 5, with the reason -----------------------------
def test_deselecting_every_cell_says_so_and_creates_no_run(pytester):
    result = run(pytester, "--srbench-benchmark", "gpqa-diamond", "-k", "no-such-cell")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    line = (
        "pytest-srbench: nothing to run — -k 'no-such-cell' deselected all 8 planned cells "
        "(cell ids look like gpqa-diamond/"
    )
    assert result.stdout.str().count(line) == 1, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*[[]sim-large[]]); no run was created and no request was sent"])
    assert runs_in_store(pytester) == 0


def test_a_mixed_session_whose_cells_are_all_deselected_notes_it_and_runs_the_rest(pytester):
    pytester.makepyfile(test_own="def test_own():\n    assert True\n")
    result = run(pytester, "--srbench-benchmark", "gpqa-diamond", "-k", "test_own", ".")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*nothing to run — -k 'test_own' deselected all 8*", "*1 passed*"])
    assert runs_in_store(pytester) == 0
