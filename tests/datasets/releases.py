"""Small files written in each benchmark's real release format (real column names and types,
parquet where the release is parquet), with original generated content: never real items.

``publish(hub)`` puts them where ``datasets.sources`` says the releases live, at one commit
each (``main`` points at it), and returns {part key: commit}.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import pickle
import zlib

from tests.datasets.fakehub import FakeHub, Repo
from tests.optional import import_extra

# the modules that import these files skip (or fail under CI) without the extras
pa = import_extra("pyarrow", "fetch")
pq = import_extra("pyarrow.parquet", "fetch")
h5py = import_extra("h5py", "scicode")  # SciCode's test_data.h5

CATEGORIES = ["math", "physics", "law", "history", "biology", "economics", "chemistry",
              "psychology", "engineering", "business", "philosophy", "health", "computer science",
              "other"]  # fmt: skip


def _parquet(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


def _csv(header: list[str], rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode()


def mmlu_pro(rows: int = 16) -> bytes:
    letters = "ABCDEFGHIJ"
    data: dict[str, list[object]] = {k: [] for k in ("question_id", "question", "options",
                                                     "answer", "answer_index", "cot_content",
                                                     "category", "src")}  # fmt: skip
    for n in range(rows):
        right = n % 10
        data["question_id"].append(7000 + n)
        data["question"].append(f"What is {n} + {n + 3}?")
        data["options"].append([str(2 * n + 3 + (i - right)) for i in range(10)])
        data["answer"].append(letters[right])
        data["answer_index"].append(right)
        data["cot_content"].append("")
        data["category"].append(CATEGORIES[n % len(CATEGORIES)])
        data["src"].append(f"generated-{n}")
    schema = pa.schema([("question_id", pa.int64()), ("question", pa.string()),
                        ("options", pa.list_(pa.string())), ("answer", pa.string()),
                        ("answer_index", pa.int64()), ("cot_content", pa.string()),
                        ("category", pa.string()), ("src", pa.string())])  # fmt: skip
    return _parquet(pa.table(data, schema=schema))


def hle(text_rows: int = 5) -> bytes:
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema([("id", pa.string()), ("question", pa.string()), ("image", pa.string()),
                        ("image_preview", image), ("answer", pa.string()),
                        ("answer_type", pa.string()), ("author_name", pa.string()),
                        ("rationale", pa.string()), ("rationale_image", image),
                        ("raw_subject", pa.string()), ("category", pa.string()),
                        ("canary", pa.string())])  # fmt: skip
    rows = []
    for n in range(text_rows):
        rows.append({"id": f"hle{n:04d}", "question": f"Name the prime after {10 * n + 1}.",
                     "image": "", "image_preview": None, "answer": str(10 * n + 3),
                     "answer_type": "exactMatch" if n % 2 else "multipleChoice",
                     "author_name": "fixture", "rationale": "", "rationale_image": None,
                     "raw_subject": "Number theory", "category": ["Math", "Other"][n % 2],
                     "canary": "fixture canary"})  # fmt: skip
    rows.append({"id": "hle-img", "question": "What does the picture show?",
                 "image": "data:image/png;base64,iVBORw0KGgo=",
                 "image_preview": {"bytes": b"\x89PNG\r\n", "path": "p.png"}, "answer": "a cat",
                 "answer_type": "exactMatch", "author_name": "fixture", "rationale": "",
                 "rationale_image": None, "raw_subject": "Vision", "category": "Other",
                 "canary": "fixture canary"})  # fmt: skip
    return _parquet(pa.Table.from_pylist(rows, schema=schema))


def gpqa(rows: int = 5) -> bytes:
    header = ["Pre-Revision Question", "Question", "Correct Answer", "Incorrect Answer 1",
              "Incorrect Answer 2", "Incorrect Answer 3", "Explanation", "Subdomain",
              "Record ID", "High-level domain", "Writer's Difficulty Estimate"]  # fmt: skip
    body = [[f"q{n}", f"Which number is {n} squared?", str(n * n), str(n * n + 1),
             str(n * n + 2), str(n * n + 3), "arithmetic", "Arithmetic", f"rec{n:03d}",
             ["Physics", "Chemistry", "Biology"][n % 3], "Easy"] for n in range(rows)]  # fmt: skip
    return _csv(header, body)


def simpleqa(rows: int = 6) -> bytes:
    header = ["original_index", "problem", "answer", "topic", "answer_type", "multi_step",
              "requires_reasoning", "urls"]  # fmt: skip
    body = [[str(100 + n), f"In which year did fixture event {n} happen?", str(1900 + n),
             ["History", "Science and technology", "Art"][n % 3], "Date", "False", "False",
             "['https://example.org/']"] for n in range(rows)]  # fmt: skip
    return _csv(header, body)


def arc_task(seed: int) -> bytes:
    def grid(value: int) -> list[list[int]]:
        return [[value, (value + seed) % 10], [(value + 1) % 10, value]]

    task = {"train": [{"input": grid(1), "output": grid(2)}, {"input": grid(3), "output": grid(4)}],
            "test": [{"input": grid(5), "output": grid(6)}]}  # fmt: skip
    return json.dumps(task).encode()


def _private(tests: list[dict[str, str]]) -> str:
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


def livecodebench_line(n: int, functional: bool = False) -> dict[str, object]:
    if functional:
        public = [{"input": "3\n4", "output": "7", "testtype": "functional"}]
        private = [{"input": "10\n5", "output": "15", "testtype": "functional"}]
        metadata = json.dumps({"func_name": "add"})
        starter = "class Solution:\n    def add(self, a: int, b: int) -> int:\n        "
    else:
        public = [{"input": f"{n}\n", "output": f"{2 * n}\n", "testtype": "stdin"}]
        private = [{"input": f"{n + 1}\n", "output": f"{2 * n + 2}\n", "testtype": "stdin"}]
        metadata = "{}"
        starter = ""
    return {"question_title": f"Double {n}", "question_content": "Read n and print 2n.",
            "platform": "atcoder", "question_id": f"abc{300 + n}_a", "contest_id": f"abc{300 + n}",
            "contest_date": "2024-05-04T00:00:00", "starter_code": starter,
            "difficulty": ["easy", "medium"][n % 2], "public_test_cases": json.dumps(public),
            "private_test_cases": _private(private), "metadata": metadata}  # fmt: skip


def _jsonl(rows: list[dict[str, object]]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def scicode_problem(n: int) -> dict[str, object]:
    steps = [{"step_number": f"{n}.{k}", "step_description_prompt": f"Write f{k}(x) = x + {k}.",
              "step_background": "", "ground_truth_code": None,
              "function_header": f"def f{k}(x):\n    '''Add {k}.'''",
              "test_cases": [f"assert f{k}(1) == {1 + k}", f"assert f{k}(0) == target"],
              "return_line": "    return y"} for k in (1, 2)]  # fmt: skip
    return {"problem_name": f"fixture_problem_{n}", "problem_id": str(n),
            "problem_description_main": "Add small constants.", "problem_background_main": "",
            "problem_io": "", "required_dependencies": "import numpy as np",
            "sub_steps": steps, "general_solution": None, "general_tests": []}  # fmt: skip


def scicode_targets() -> bytes:
    """An HDF5 file in SciCode's layout: ``<step>/test<n>/var1`` holds the n-th test's target."""
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as handle:
        for problem in (11, 12):
            for step in (1, 2):
                handle.create_dataset(f"{problem}.{step}/test1/var1", data=1 + step)
                handle.create_dataset(f"{problem}.{step}/test2/var1", data=step)
    return buffer.getvalue()


TEST_DATA_H5 = scicode_targets()


def terminal_task(name: str) -> dict[str, bytes]:
    return {
        f"{name}/instruction.md": f"Create /app/{name}.txt containing the word done.\n".encode(),
        f"{name}/task.toml": b'version = "1.0"\n[metadata]\ndifficulty = "easy"\n'
        b'category = "file-operations"\ntags = ["fixture"]\n',
        f"{name}/environment/Dockerfile": b"FROM ubuntu:24.04\nWORKDIR /app\n",
        f"{name}/environment/notes.txt": b"seed file\n",
        f"{name}/solution/solve.sh": f"echo done > /app/{name}.txt\n".encode(),
        f"{name}/tests/test.sh": f'#!/bin/sh\ngrep -q done "{name}.txt"\n'.encode(),
        f"{name}/tests/test_outputs.py": b"def test_done():\n    assert True\n",
    }


AIRLINE_DB = {
    "flights": {},
    "users": {
        f"fixture_user_{n}": {
            "user_id": f"fixture_user_{n}",
            "name": {"first_name": "Ada", "last_name": f"Fixture{n}"},
            "address": {
                "address1": "1 Test St",
                "address2": None,
                "city": "Testville",
                "country": "USA",
                "state": "CA",
                "zip": "90000",
            },
            "email": f"user{n}@example.org",
            "dob": "1990-01-01",
            "payment_methods": {},
            "saved_passengers": [],
            "membership": "regular",
            "reservations": [],
        }
        for n in range(4)
    },
    "reservations": {},
}

AIRLINE_TOOLS = b"""class ToolType:
    READ = "read"
    WRITE = "write"
    GENERIC = "generic"


def is_tool(kind):
    return lambda f: f


class AirlineTools:
    @is_tool(ToolType.READ)
    def get_user_details(self, user_id: str):
        ...

    @is_tool(ToolType.GENERIC)
    def calculate(self, expression: str):
        ...

    @is_tool(ToolType.WRITE)
    def send_certificate(self, user_id: str, amount: int):
        ...
"""


def airline_tasks(count: int = 4) -> bytes:
    tasks = []
    for n in range(count):
        tasks.append({
            "id": str(n),
            "user_scenario": {"persona": None, "instructions": {
                "domain": "airline", "reason_for_call": f"Check the profile of user {n}.",
                "known_info": f"You are fixture_user_{n}.", "unknown_info": None,
                "task_instructions": "Ask for your membership level."}},
            "evaluation_criteria": {
                "actions": [{"action_id": f"{n}_0", "requestor": "assistant",
                             "name": "get_user_details",
                             "arguments": {"user_id": f"fixture_user_{n}"}}],
                "communicate_info": ["regular"], "nl_assertions": None},
        })  # fmt: skip
    return json.dumps(tasks).encode()


def release_files() -> dict[str, tuple[str, str, dict[str, bytes]]]:
    """{part key: (host, repo, {path: bytes})} for the nine releases and SciCode's targets."""
    domain = "data/tau2/domains/airline"
    return {
        "mmlu-pro": ("huggingface", "TIGER-Lab/MMLU-Pro", {
            "data/test-00000-of-00001.parquet": mmlu_pro(),
            "data/validation-00000-of-00001.parquet": mmlu_pro(3),
            "README.md": b"---\nlicense: mit\n---\n"}),
        "gpqa-diamond": ("huggingface", "Idavidrein/gpqa", {
            "gpqa_diamond.csv": gpqa(), "gpqa_main.csv": gpqa(2), "license.txt": b"CC-BY-4.0"}),
        "simpleqa-verified": ("huggingface", "google/simpleqa-verified", {
            "simpleqa_verified.csv": simpleqa(), "README.md": b"# card\n"}),
        "hle": ("huggingface", "cais/hle", {"data/test-00000-of-00001.parquet": hle()}),
        "livecodebench": ("huggingface", "livecodebench/code_generation_lite", {
            "test.jsonl": _jsonl([livecodebench_line(1), livecodebench_line(2)]),
            "test6.jsonl": _jsonl([livecodebench_line(3, functional=True)]),
            "README.md": b"# card\n"}),
        "scicode": ("huggingface", "SciCode1/SciCode", {
            "problems_test.jsonl": _jsonl([scicode_problem(11), scicode_problem(12)]),
            "problems_dev.jsonl": _jsonl([scicode_problem(1)])}),
        "scicode-targets": ("huggingface", "Srimadh/Scicode-test-data-h5", {
            "test_data.h5": TEST_DATA_H5, "README.md": b"# mirror\n"}),
        "arc-agi-2": ("github", "arcprize/ARC-AGI-2", {
            **{f"data/evaluation/{n:08x}.json": arc_task(n) for n in (0xA1, 0xB2, 0xC3)},
            "data/training/00000001.json": arc_task(1), "README.md": b"# ARC\n"}),
        "terminal-bench-2.1": ("github", "harbor-framework/terminal-bench-2", {
            **terminal_task("make-file"), **terminal_task("write-word"),
            "README.md": b"# Terminal-Bench 2\n"}),
        "tau3": ("github", "sierra-research/tau2-bench", {
            f"{domain}/db.json": json.dumps(AIRLINE_DB).encode(),
            f"{domain}/policy.md": b"# Airline policy\nBe helpful and check the user id.\n",
            f"{domain}/tasks.json": airline_tasks(),
            f"{domain}/split_tasks.json": json.dumps({"base": ["0", "1", "2", "3"],
                                                      "test": ["2", "3"]}).encode(),
            "src/tau2/domains/airline/tools.py": AIRLINE_TOOLS,
            "data/tau2/user_simulator/simulation_guidelines.md": b"# Fixture guidelines\n"
            b"Play the customer; say ###STOP### when done.\n",
            "data/tau2/domains/retail/tasks.json": b"[]", "README.md": b"# tau2\n"}),
    }  # fmt: skip


def publish(hub: FakeHub, label: str = "v1") -> dict[str, str]:
    """Every release at one commit (``main``); returns {part key: commit}."""
    commits = {}
    for key, (host, repo_id, files) in release_files().items():
        table = hub.datasets if host == "huggingface" else hub.github
        repo = table.setdefault(repo_id, Repo(gated=key in ("gpqa-diamond", "hle")))
        commits[key] = repo.add_commit(f"{key}:{label}", files)
    return commits
