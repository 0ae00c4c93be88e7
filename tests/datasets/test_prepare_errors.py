"""Corrupt or mismatched sources: each gives a DatasetError naming the file, the record and the fault."""

from __future__ import annotations

import base64
import json
import os
import pickle
import re
import zlib
from pathlib import Path
from typing import Any

import pytest

from pytest_srbench.datasets.formats import (
    read_arc,
    read_gpqa,
    read_hle,
    read_humaneval,
    read_livecodebench,
    read_mmlu,
    read_mmlu_pro,
    read_scicode,
    read_simpleqa,
    read_tau,
    read_terminal_bench,
)
from pytest_srbench.datasets.prepare import DatasetError, prepare
from tests.datasets.source_builders import (
    GPQA_HEADER,
    arc_task,
    gpqa_csv,
    lcb_row,
    mmlu_pro_rows,
    scicode_row,
    tau_domain,
    tb_task,
    write_csv,
    write_jsonl,
)


def raises(message: str) -> Any:
    return pytest.raises(DatasetError, match=message)


def mmlu_pro_file(tmp_path: Path, **change: Any) -> Path:
    row = mmlu_pro_rows(1)[0]
    row.update(change)
    return write_jsonl(tmp_path / "mp.jsonl", [mmlu_pro_rows(2)[1], row])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answer": "K", "answer_index": None}, r"line 2: answer 'K' is outside the 10 options \(A-J\)"),
        ({"options": ["a", "b"], "answer": "C", "answer_index": 2}, r"line 2: answer 'C' is outside the 2 options \(A-B\)"),
        ({"answer_index": 5}, r"line 2: answer 'D' and answer_index 5 disagree"),
        ({"options": "abcd"}, r"line 2: field 'options' must be a list, got a string"),
        ({"options": ["a", 2, "c"]}, r"line 2: options\[1\] must be a string, got a number"),
        ({"options": ["only"]}, r"line 2: options must hold 2-10 strings, got 1"),
        ({"question": None}, r"line 2: missing field 'question'"),
        ({"question_id": 1001}, r"line 2: duplicate question_id '1001' \(first seen at .*mp.jsonl line 1\)"),
        ({"category": 3}, r"line 2: field 'category' must be a string, got a number"),
    ],
)  # fmt: skip
def test_mmlu_pro_record_errors(tmp_path, change, message):
    with raises(message):
        read_mmlu_pro(mmlu_pro_file(tmp_path, **change))


def test_bad_json_line_names_line_and_column(tmp_path):
    path = tmp_path / "mp.jsonl"
    path.write_text(json.dumps(mmlu_pro_rows(1)[0]) + '\n\n{"question_id": 5,\n')
    with raises(re.escape(f"{path} line 3: invalid JSON (Expecting property name enclosed")):
        read_mmlu_pro(path)


def test_non_utf8_names_the_line(tmp_path):
    path = tmp_path / "mp.jsonl"
    path.write_bytes(json.dumps(mmlu_pro_rows(1)[0]).encode() + b'\n{"question": "caf\xe9"}\n')
    with raises(r"mp.jsonl line 2: not valid UTF-8 \(byte 0xe9\)"):
        read_mmlu_pro(path)


def test_nan_and_duplicate_keys_are_rejected(tmp_path):
    path = tmp_path / "mp.jsonl"
    path.write_text('{"question_id": NaN}\n')
    with raises(r"line 1: invalid JSON \(NaN is not a JSON number\)"):
        read_mmlu_pro(path)
    path.write_text('{"question_id": 1, "question_id": 2}\n')
    with raises(r"line 1: invalid JSON \(duplicate key 'question_id'\)"):
        read_mmlu_pro(path)


def test_json_document_of_the_wrong_shape(tmp_path):
    path = tmp_path / "mp.json"
    path.write_text("[1, 2]")
    with raises(r"mp.json record 1: expected a JSON object, got a number"):
        read_mmlu_pro(path)


def test_gpqa_missing_column(tmp_path):
    path = write_csv(
        tmp_path / "g.csv", [h for h in GPQA_HEADER if h != "Correct Answer"], [["x"] * 7]
    )
    with raises(r"g.csv line 1: missing column\(s\) 'Correct Answer' \(found: 'Question'"):
        read_gpqa(path)


def test_gpqa_ragged_row_empty_cell_and_duplicate(tmp_path):
    path = gpqa_csv(tmp_path / "g.csv", 3)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("only,three,fields\n")
    with raises(r"g.csv line 5: has 3 fields, the header has 8"):
        read_gpqa(path)
    rows = [["Q?", "  ", "b", "c", "d", "r1", "Physics", ""]]
    with raises(r"g.csv line 2: column 'Correct Answer' is empty"):
        read_gpqa(write_csv(tmp_path / "g.csv", GPQA_HEADER, rows))
    rows = [
        ["Q?", "a", "b", "c", "d", "r1", "Physics", ""],
        ["Q2?", "a", "b", "c", "d", " r1 ", "Physics", ""],
    ]
    with raises(r"g.csv line 3: duplicate Record ID 'r1' \(first seen at .*g.csv line 2\)"):
        read_gpqa(write_csv(tmp_path / "g.csv", GPQA_HEADER, rows))


def test_gpqa_multiline_cells_keep_the_record_start_line(tmp_path):
    rows = [
        ["Line one\nline two?", "a", "b", "c", "d", "r1", "Physics", ""],
        ["Q?", "a", "b", "c", "d", "r1", "Physics", ""],
    ]
    with raises(r"g.csv line 4: duplicate Record ID 'r1' \(first seen at .*g.csv line 2\)"):
        read_gpqa(write_csv(tmp_path / "g.csv", GPQA_HEADER, rows))


def test_simpleqa_errors(tmp_path):
    path = write_csv(
        tmp_path / "s.csv", ["metadata", "problem", "answer"], [["{'topic': 'Art'", "p?", "a"]]
    )
    with raises(r"s.csv line 2: column 'metadata' is not a Python dict literal"):
        read_simpleqa(path)
    path = write_csv(
        tmp_path / "s.csv", ["metadata", "problem", "answer"], [["__import__('os')", "p?", "a"]]
    )
    with raises(r"line 2: column 'metadata' is not a Python dict literal"):
        read_simpleqa(path)
    with raises(r"s.csv line 1: missing column\(s\) 'answer'"):
        read_simpleqa(write_csv(tmp_path / "s.csv", ["original_index", "problem"], [["1", "p?"]]))
    rows = [["7", "p?", "a", "Art"], ["7", "q?", "b", "Art"]]
    with raises(r"line 3: duplicate id '7'"):
        read_simpleqa(
            write_csv(tmp_path / "s.csv", ["original_index", "problem", "answer", "topic"], rows)
        )


def test_hle_errors(tmp_path):
    row = {
        "id": "h1",
        "question": "q",
        "image": "",
        "answer": "a",
        "answer_type": "freeForm",
        "category": "Math",
    }
    with raises(
        r"hle.jsonl line 1: answer_type 'freeForm' is not one of exactMatch, multipleChoice"
    ):
        read_hle(write_jsonl(tmp_path / "hle.jsonl", [row]))
    with raises(r"line 1: field 'image' must be a string, got a list"):
        read_hle(write_jsonl(tmp_path / "hle.jsonl", [dict(row, image=["x"])]))


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ({"train": [{"input": [[1, 2], [3]], "output": [[1]]}], "test": []}, r" train\[0\].input: row 1 has 1 cells, row 0 has 2"),
        ({"train": [{"input": [[1, 12]], "output": [[1]]}], "test": []}, r" train\[0\].input: row 0 holds 12; cells must be integers 0-9"),
        ({"train": [{"input": [[1]], "output": [[1]]}], "test": [{"input": [[1]]}]}, r" test\[0\]: has no 'output' grid"),
        ({"train": [], "test": [{"input": [[1]], "output": [[1]]}]}, r": 'train' must be a non-empty list of pairs"),
        ({"train": [{"input": [], "output": [[1]]}], "test": []}, r" train\[0\].input: must be a non-empty list of rows"),
    ],
)  # fmt: skip
def test_arc_grid_errors(tmp_path, task, message):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "abcd1234.json").write_text(json.dumps(task))
    with raises(r"abcd1234.json" + message):
        read_arc(tmp_path / "t")


def test_arc_mapping_errors(tmp_path):
    path = tmp_path / "tasks.json"
    task = json.dumps(arc_task(1))
    path.write_text(f'{{"aaaa": {task}, "aaaa": {task}}}')
    with raises(r"tasks.json: invalid JSON \(duplicate key 'aaaa'\)"):
        read_arc(path)
    path.write_text(json.dumps({"aaaa": arc_task(1), "bbbb": {"train": "no"}}))
    with raises(r"tasks.json task bbbb: is not an ARC task"):
        read_arc(path)
    path.write_text(
        json.dumps({"training": {"aaaa": arc_task(1)}, "evaluation": {"bbbb": arc_task(2)}})
    )
    assert [r["id"] for r in read_arc(path)] == ["bbbb"]
    with raises(r"tasks are grouped by split \(evaluation, training\); choose one \(split='dev'"):
        read_arc(path, split="dev")


class Sneaky:
    def __reduce__(self) -> tuple[Any, tuple[()]]:
        return (os.getcwd, ())


@pytest.mark.parametrize(
    ("private", "message"),
    [
        (base64.b64encode(zlib.compress(pickle.dumps(Sneaky()))).decode(), r": the compressed pickle cannot be read safely \(refusing to load (posix|os)\.getcwd\)"),
        (base64.b64encode(zlib.compress(pickle.dumps([1, 2]))).decode(), r": the compressed pickle holds a list, expected a JSON string"),
        ("not base64 at all!", r": neither JSON nor base64 of zlib data"),
        (base64.b64encode(b"plain bytes").decode(), r": neither JSON nor base64 of zlib data"),
        (json.dumps([{"input": "1", "output": "2", "testtype": "interactive"}]), r"\[0\]: testtype 'interactive' is not one of stdin, functional"),
        (json.dumps([{"input": 1, "output": "2"}]), r"\[0\]: field 'input' must be a string, got a number"),
        (json.dumps({"input": "1"}), r": must be a list of tests, got an object"),
    ],
)  # fmt: skip
def test_livecodebench_private_test_errors(tmp_path, private, message):
    with raises(r"lcb.jsonl line 1 private_test_cases" + message):
        read_livecodebench(write_jsonl(tmp_path / "lcb.jsonl", [lcb_row("q1", private=private)]))


def test_livecodebench_functional_without_func_name(tmp_path):
    row = lcb_row("q2", functional=True)
    row["metadata"] = "{}"
    with raises(r"lcb.jsonl line 1: has functional tests but metadata names no func_name"):
        read_livecodebench(write_jsonl(tmp_path / "lcb.jsonl", [row]))
    row["metadata"] = "{not json"
    with raises(r"line 1 metadata: invalid JSON"):
        read_livecodebench(write_jsonl(tmp_path / "lcb.jsonl", [row]))


def test_scicode_errors(tmp_path):
    row = scicode_row("9")
    row["sub_steps"][1]["test_cases"] = ["ok", 3]
    with raises(r"s.jsonl line 1 sub_steps\[1\]: test_cases\[1\] must be a string, got a number"):
        read_scicode(write_jsonl(tmp_path / "s.jsonl", [row]))
    with raises(r"line 1: sub_steps is empty"):
        read_scicode(write_jsonl(tmp_path / "s.jsonl", [dict(scicode_row("9"), sub_steps=[])]))
    del row["sub_steps"][0]["function_header"]
    with raises(r"sub_steps\[0\]: missing field 'function_header'"):
        read_scicode(write_jsonl(tmp_path / "s.jsonl", [row]))


def test_terminal_bench_errors(tmp_path):
    folder = tb_task(tmp_path / "tasks", "alpha")
    (folder / "task.toml").write_text("[metadata\n")
    with raises(r"alpha/task.toml: invalid TOML"):
        read_terminal_bench(tmp_path / "tasks")
    (folder / "task.toml").write_text("")
    (folder / "tests" / "test.sh").unlink()
    with raises(r"alpha: missing tests/test.sh \(not a Terminal-Bench 2 task folder\)"):
        read_terminal_bench(tmp_path / "tasks")
    old = tmp_path / "tb1" / "hello"
    old.mkdir(parents=True)
    (old / "task.yaml").write_text("instruction: hi\n")
    with raises(r"hello: holds task.yaml, a Terminal-Bench 1 task"):
        read_terminal_bench(tmp_path / "tb1")
    (folder / "tests" / "test.sh").write_bytes(b"\xff\xfe")
    with raises(r"test.sh: empty or not UTF-8 text"):
        read_terminal_bench(tmp_path / "tasks")


def test_tau_errors(tmp_path):
    folder = tau_domain(tmp_path / "d", tools=True)
    tasks = json.loads((folder / "tasks.json").read_text())
    tasks[1]["evaluation_criteria"]["actions"].append({"name": "burn_book", "arguments": {}})
    (folder / "tasks.json").write_text(json.dumps(tasks))
    with raises(
        r"tasks.json: expected actions use tool\(s\) burn_book that .*tools.py does not declare"
    ):
        read_tau(folder, folder / "tools.py")
    tasks[1]["evaluation_criteria"]["actions"][-1] = {"name": "get_book", "arguments": ["b1"]}
    (folder / "tasks.json").write_text(json.dumps(tasks))
    with raises(
        r"tasks.json task 2 evaluation_criteria.actions\[2\]: arguments must be an object, got a list"
    ):
        read_tau(folder)
    (folder / "tasks.json").write_text(json.dumps([tasks[0], tasks[0]]))
    with raises(r"tasks.json task 2: duplicate task id '0' \(first seen at .*task 1\)"):
        read_tau(folder)
    (folder / "policy.md").unlink()
    with raises(r"library: missing policy.md \(not a tau2-bench domain folder\)"):
        read_tau(folder)
    (folder / "db.json").unlink()
    (folder / "db.toml").write_text("[x]\n")
    with raises(r"library domain cannot be converted for tau3: it needs a TOML database"):
        read_tau(folder)


def test_tau_initial_state_rows_are_dropped(tmp_path):
    folder = tau_domain(tmp_path / "d", n=4)
    tasks = json.loads((folder / "tasks.json").read_text())
    tasks[0]["initial_state"] = {"initialization_actions": [{"env_type": "user", "func_name": "x"}]}
    (folder / "tasks.json").write_text(json.dumps(tasks))
    summary = prepare("tau3", folder, revision="r", profile="smoke", output_root=tmp_path / "o")
    assert summary.dropped == {"initial_state": 1} and summary.source_rows == 3


def test_mmlu_and_humaneval_errors(tmp_path):
    row = {
        "question": "q?",
        "answer_a": "1",
        "answer_b": "2",
        "answer_c": "3",
        "answer_d": "4",
        "correct_answer": "E",
        "topic": "anatomy",
    }
    with raises(r"m.jsonl line 1: correct_answer 'E' is outside the 4 options \(A-D\)"):
        read_mmlu(write_jsonl(tmp_path / "m.jsonl", [row]))
    with raises(r"line 1: choices must hold 4 strings, got 3"):
        read_mmlu(
            write_jsonl(
                tmp_path / "m.jsonl",
                [{"question": "q", "subject": "s", "choices": ["a", "b", "c"], "answer": 0}],
            )
        )
    (tmp_path / "HumanEval.jsonl.gz").write_bytes(b"not gzip")
    with raises(r"HumanEval.jsonl.gz: not a valid gzip file"):
        read_humaneval(tmp_path / "HumanEval.jsonl.gz")
    row = {
        "task_id": "HumanEval/0",
        "prompt": "def f(x):\n",
        "entry_point": "g",
        "test": "def check(candidate): pass",
    }
    with raises(r"h.jsonl line 1: the prompt does not define entry_point 'g'"):
        read_humaneval(write_jsonl(tmp_path / "h.jsonl", [row]))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"benchmark": "nope"}, r"unknown benchmark 'nope' \(known: arc-agi-2, gpqa-diamond"),
        ({"profile": "huge"}, r"unknown profile 'huge' \(known: smoke, quick, standard\)"),
        ({"revision": " "}, r"a source revision is required"),
        ({"limit": 0}, r"--limit must be between 1 and 4 \(the smoke count of gpqa-diamond\), got 0"),
        ({"limit": 5}, r"--limit must be between 1 and 4"),
        ({"split": "eval"}, r"gpqa-diamond: option\(s\) split do not apply"),
        ({"source": "missing.csv"}, r"missing.csv: no such file or directory"),
    ],
)  # fmt: skip
def test_request_errors(tmp_path, kwargs, message):
    source = gpqa_csv(tmp_path / "g.csv", 5)
    args: dict[str, Any] = {
        "benchmark": "gpqa-diamond",
        "revision": "r",
        "profile": "smoke",
        "output_root": tmp_path / "o",
    }
    args.update(kwargs)
    path = tmp_path / args.pop("source") if "source" in args else source
    with raises(message):
        prepare(args.pop("benchmark"), path, **args)
    assert not (tmp_path / "o").exists()


def test_empty_sources(tmp_path):
    (tmp_path / "empty").mkdir()
    with raises(r"empty: holds no .jsonl / .json"):
        read_mmlu_pro(tmp_path / "empty")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    with raises(r"blank.jsonl: holds no records"):
        read_mmlu_pro(tmp_path / "blank.jsonl")
    (tmp_path / "e.csv").write_text("")
    with raises(r"e.csv: empty file \(expected a CSV header line\)"):
        read_gpqa(tmp_path / "e.csv")
