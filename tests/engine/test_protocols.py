"""Benchmark protocols through the engine against the real simulator and the real sandbox:
contained model code, judges (strict verdicts, spend apart), agents."""

from __future__ import annotations

import pytest

from pytest_srbench.core.report.build import build_report
from tests.core.helpers import run
from tests.engine.helpers import REGISTRY, drive


def lcb_case(native: str, solution: str, expected: str = "ok\n"):
    row = {
        "question_id": native, "question_title": native, "question_content": "Print ok.", "starter_code": "",
        "difficulty": "easy", "tests": [{"input": "", "output": expected, "testtype": "stdin"}],
        "reference_solution": solution,
    }  # fmt: skip
    return REGISTRY.get("livecodebench").render(row, 1)


HOSTILE = {
    "reads-secret": "import os\nprint(os.environ['SRBENCH_TEST_SECRET'])",
    "writes-outside": "open('{outside}', 'w').write('pwned')\nprint('ok')",
    "fork-bomb": "import os\nwhile True:\n    os.fork()",
    "runs-forever": "while True:\n    pass",
}


def test_hostile_model_code_is_contained_and_graded_incorrect(tmp_path, sim, monkeypatch):
    monkeypatch.setenv("SRBENCH_TEST_SECRET", "ok")
    outside = tmp_path / "outside.txt"
    cases = [lcb_case(name, code.format(outside=outside)) for name, code in HOSTILE.items()]
    cases.append(lcb_case("honest", "print('ok')"))
    store, _ = drive(tmp_path, sim, cases)
    rows = {row["case_id"].split("/")[1]: row for row in store.results("run-p")}
    assert rows["honest"]["correct"] is True
    for name in HOSTILE:
        row = rows[name]
        assert row["status"] == "completed" and row["correct"] is False, name
        (test,) = row["details"]["tests"]
        assert test["passed"] is False and test["status"] in ("failed", "limit", "timeout"), (
            name,
            test,
        )
    assert rows["fork-bomb"]["details"]["tests"][0]["status"] in ("limit", "failed", "timeout")
    assert rows["runs-forever"]["details"]["tests"][0]["status"] in ("timeout", "limit")
    assert rows["runs-forever"]["details"]["tests"][0]["reason"]
    assert not outside.exists()  # the write outside the task directory never happened


def qa_case():
    row = {
        "id": "q1",
        "problem": "What is the capital city of Australia?",
        "answer": "Canberra",
        "topic": "geo",
    }
    return REGISTRY.get("simpleqa-verified").render(row, 1)


def test_a_prose_judge_fails_the_cell_and_judge_spend_is_apart(tmp_path, sim):
    options = {"simpleqa-verified": {"judge": "prose-judge"}}
    store, plan = drive(tmp_path, sim, [qa_case()], judge="prose-judge", options=options)
    (row,) = store.results("run-p")
    assert row["status"] == "failed"
    assert "Judge verdict is not a JSON object" in row["error"]
    roles = sorted(call["role"] for call in store.calls("run-p"))
    assert roles == ["judge", "subject"]
    metric = build_report(plan, run("failed"), store.results("run-p"), store.calls("run-p"))[
        "summary"
    ]["targets"][0]
    assert metric["failed"] == 1 and metric["accuracy"] == 0
    assert (
        metric["cost_usd"] > 0
        and metric["evaluation_cost_usd"] > 0
        and metric["evaluation_call_count"] == 1
    )
    assert metric["total_spend_usd"] == pytest.approx(
        metric["cost_usd"] + metric["evaluation_cost_usd"]
    )


def test_a_json_judge_grades_and_the_verdict_is_recorded(tmp_path, sim):
    options = {"simpleqa-verified": {"judge": "json-judge"}}
    store, _ = drive(tmp_path, sim, [qa_case()], judge="json-judge", options=options)
    (row,) = store.results("run-p")
    assert row["correct"] is True and row["details"]["verdict"] == "correct"
    judge_call = next(call for call in store.calls("run-p") if call["role"] == "judge")
    assert judge_call["target_id"] == "always-right"  # journaled under the subject cell
    assert judge_call["model"] == "json-judge"
