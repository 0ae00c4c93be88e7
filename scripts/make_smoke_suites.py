"""Write the shipped smoke suites for the benchmarks whose items are original to pytest-srbench.

Every item here was written for this project (none is copied from a benchmark dataset); each
carries what its grader needs and what the built-in simulator needs to play it.
Run: python scripts/make_smoke_suites.py
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "pytest_srbench" / "suites"
REVISION = "pytest-srbench-smoke-2026-11-30"
# what a report says about these items (docs/suites.md, "Where a report says its cases came from")
ORIGIN = {"kind": "original", "note": "original smoke items written for pytest-srbench"}

SIMPLEQA = [
    {
        "id": "smoke-001",
        "problem": "What is the chemical symbol of the element tungsten?",
        "answer": "W",
        "topic": "science",
    },
    {
        "id": "smoke-002",
        "problem": "In which year did the first crewed Moon landing take place?",
        "answer": "1969",
        "topic": "history",
    },
    {
        "id": "smoke-003",
        "problem": "What is the capital city of Australia?",
        "answer": "Canberra",
        "topic": "geography",
    },
    {
        "id": "smoke-004",
        "problem": "How many sides does a dodecagon have?",
        "answer": "12",
        "topic": "math",
    },
    {
        "id": "smoke-005",
        "problem": "Who wrote the novel Pride and Prejudice?",
        "answer": "Jane Austen",
        "topic": "literature",
    },
]

HLE = [
    {
        "id": "smoke-001",
        "question": "What is the smallest positive integer n such that n! is divisible by 1000?",
        "answer": "15",
        "answer_type": "exactMatch",
        "category": "Math",
    },
    {
        "id": "smoke-002",
        "question": "How many squares of any size are there on a standard 8 by 8 chessboard?",
        "answer": "204",
        "answer_type": "exactMatch",
        "category": "Math",
    },
    {
        "id": "smoke-003",
        "question": "Which enzyme complex uses the proton gradient across the inner mitochondrial membrane to make ATP?",
        "answer": "ATP synthase",
        "answer_type": "exactMatch",
        "category": "Biology/Medicine",
    },
    {
        "id": "smoke-004",
        "question": "How many edges does a four-dimensional hypercube (tesseract) have?",
        "answer": "32",
        "answer_type": "exactMatch",
        "category": "Math",
    },
]

ARC = [
    {
        "id": "smoke-mirror",
        "train": [
            {"input": [[1, 0, 0], [0, 2, 0]], "output": [[0, 0, 1], [0, 2, 0]]},
            {"input": [[3, 3, 0], [0, 0, 4]], "output": [[0, 3, 3], [4, 0, 0]]},
        ],
        "test": [
            {
                "input": [[5, 0, 7], [0, 6, 0], [8, 0, 0]],
                "output": [[7, 0, 5], [0, 6, 0], [0, 0, 8]],
            }
        ],
    },
    {
        "id": "smoke-recolor",
        "train": [
            {"input": [[3, 1], [1, 3]], "output": [[4, 1], [1, 4]]},
            {"input": [[0, 3, 3], [2, 0, 3]], "output": [[0, 4, 4], [2, 0, 4]]},
        ],
        "test": [{"input": [[3, 0], [0, 0], [5, 3]], "output": [[4, 0], [0, 0], [5, 4]]}],
    },
]

LIVECODEBENCH = [
    {
        "question_id": "smoke-triangular",
        "question_title": "Triangular number",
        "question_content": "Read one integer n (1 <= n <= 10^6) and print the sum 1 + 2 + ... + n.",
        "starter_code": "",
        "difficulty": "easy",
        "platform": "original",
        "tests": [
            {"input": "5\n", "output": "15\n", "testtype": "stdin"},
            {"input": "1\n", "output": "1\n", "testtype": "stdin"},
            {"input": "100\n", "output": "5050\n", "testtype": "stdin"},
        ],
        "reference_solution": "n = int(input())\nprint(n * (n + 1) // 2)",
        "wrong_solution": "n = int(input())\nprint(n * (n - 1) // 2)",
    },
    {
        "question_id": "smoke-longest-run",
        "question_title": "Longest increasing run",
        "question_content": "Given a list of integers nums, return the length of the longest strictly increasing run of consecutive elements.",
        "starter_code": "class Solution:\n    def longestRun(self, nums: List[int]) -> int:\n        ",
        "difficulty": "medium",
        "platform": "original",
        "func_name": "longestRun",
        "tests": [
            {"input": "[1, 2, 3, 1, 2]", "output": "3", "testtype": "functional"},
            {"input": "[5]", "output": "1", "testtype": "functional"},
            {"input": "[3, 2, 1]", "output": "1", "testtype": "functional"},
        ],
        "reference_solution": (
            "from typing import List\n\nclass Solution:\n    def longestRun(self, nums: List[int]) -> int:\n"
            "        best = run = 1\n        for a, b in zip(nums, nums[1:]):\n"
            "            run = run + 1 if b > a else 1\n            best = max(best, run)\n        return best"
        ),
        "wrong_solution": (
            "from typing import List\n\nclass Solution:\n    def longestRun(self, nums: List[int]) -> int:\n"
            "        return len(nums)"
        ),
    },
]

SCICODE = [
    {
        "problem_id": "smoke-oscillator",
        "problem_description": "A mass m on a spring of stiffness k moves along a line; x is the displacement from rest and v the velocity. Build the energy bookkeeping of this harmonic oscillator step by step.",
        "required_dependencies": "import numpy as np",
        "sub_steps": [
            {
                "step_number": 1,
                "step_description": "Return the spring force on the mass (Hooke's law).",
                "function_header": "def spring_force(k, x):",
                "return_line": "    return force",
                "tests": [
                    "assert spring_force(2.0, 3.0) == -6.0",
                    "assert spring_force(1.0, -1.0) == 1.0",
                ],
            },
            {
                "step_number": 2,
                "step_description": "Return the potential energy stored in the spring.",
                "function_header": "def potential_energy(k, x):",
                "return_line": "    return energy",
                "tests": ["assert abs(potential_energy(2.0, 3.0) - 9.0) < 1e-9"],
            },
            {
                "step_number": 3,
                "step_description": "Return the total mechanical energy (potential plus kinetic).",
                "function_header": "def total_energy(k, m, x, v):",
                "return_line": "    return energy",
                "tests": [
                    "assert abs(total_energy(2.0, 1.0, 3.0, 2.0) - 11.0) < 1e-9",
                    "assert np.isclose(total_energy(1.0, 2.0, 0.0, 1.0), 1.0)",
                ],
            },
        ],
        "reference_steps": [
            "def spring_force(k, x):\n    force = -k * x\n    return force",
            "def potential_energy(k, x):\n    energy = 0.5 * k * x ** 2\n    return energy",
            "def total_energy(k, m, x, v):\n    energy = potential_energy(k, x) + 0.5 * m * v ** 2\n    return energy",
        ],
    }
]

TERMINAL = [
    {
        "task_id": "smoke-count-rows",
        "instruction": "The task directory holds data.csv (a header line, then one record per line). Write the number of records (not counting the header) to a new file report.txt, as the only line.",
        "files": {"data.csv": "city,population\nLima,10\nOslo,7\nPerth,2\nQuito,3\n"},
        "verifier": 'test -f report.txt && test "$(tr -d " \\n" < report.txt)" = "4"',
        "max_steps": 10,
        "category": "file-operations",
        "reference_commands": [
            "tail -n +2 data.csv | wc -l | tr -d ' ' > report.txt",
            "cat report.txt",
        ],
    }
]

LIBRARY_DB = {
    "members": {
        "M100": {"name": "Ada Park", "fines_cents": 0, "loans": []},
        "M200": {"name": "Ben Ito", "fines_cents": 350, "loans": []},
        "M300": {"name": "Cleo Ruiz", "fines_cents": 0, "loans": ["B3"]},
    },
    "books": {
        "B1": {"title": "The Salt Road", "author": "Ines Marr", "copies_available": 2},
        "B2": {"title": "Quiet Engines", "author": "Tom Ade", "copies_available": 1},
        "B3": {"title": "North of Nowhere", "author": "Lu Chen", "copies_available": 0},
        "B4": {"title": "Paper Harbors", "author": "Ines Marr", "copies_available": 0},
    },
    "holds": [],
}
POLICY = (
    "You are the lending desk assistant of a public library. Verify the member id before any "
    "change. Members with unpaid fines cannot borrow until the fine is paid, and you record a "
    "payment only after the member agrees to it. When no copy of a book is available, offer a "
    "hold. Tell the member the due date of every book you lend (loans last 21 days). Use the "
    "tools; never invent records."
)
TOOLS = ["get_member", "find_books", "checkout_book", "return_book", "pay_fine", "place_hold"]


def call(name: str, **arguments: object) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


TAU3 = [
    {
        "task_id": "smoke-borrow",
        "domain": "library",
        "policy": POLICY,
        "user_scenario": "You are Ada Park, member M100. You want to borrow the book Quiet Engines. Thank the agent when it is done.",
        "tools": TOOLS,
        "initial_db": LIBRARY_DB,
        "expected_actions": [call("checkout_book", member_id="M100", book_id="B2")],
        "required_outputs": ["21 days"],
        "reference_dialogue": {
            "user": [
                "Hi, I'm Ada Park, member M100. I'd like to borrow Quiet Engines.",
                "Great, thank you!",
                "###STOP###",
            ],
            "agent": [
                {"tool_calls": [call("find_books", query="Quiet Engines")]},
                {"tool_calls": [call("checkout_book", member_id="M100", book_id="B2")]},
                {"say": "Done: Quiet Engines is checked out to you and is due back in 21 days."},
                {"say": "You're welcome. Enjoy the book!"},
            ],
        },
    },
    {
        "task_id": "smoke-fine-first",
        "domain": "library",
        "policy": POLICY,
        "user_scenario": "You are Ben Ito, member M200. You want to borrow The Salt Road. If there is a fine, agree to pay it.",
        "tools": TOOLS,
        "initial_db": LIBRARY_DB,
        "expected_actions": [
            call("pay_fine", member_id="M200", amount_cents=350),
            call("checkout_book", member_id="M200", book_id="B1"),
        ],
        "required_outputs": ["fine", "21 days"],
        "reference_dialogue": {
            "user": [
                "Hello, this is Ben Ito, member M200. Can I borrow The Salt Road?",
                "Yes, please record the payment and lend me the book.",
                "###STOP###",
            ],
            "agent": [
                {"tool_calls": [call("get_member", member_id="M200")]},
                {
                    "say": "You have an unpaid fine of 350 cents, which must be paid before you can borrow. Shall I record the payment?"
                },
                {"tool_calls": [call("pay_fine", member_id="M200", amount_cents=350)]},
                {"tool_calls": [call("checkout_book", member_id="M200", book_id="B1")]},
                {"say": "Your fine is paid and The Salt Road is checked out, due back in 21 days."},
            ],
        },
    },
    {
        "task_id": "smoke-return-and-hold",
        "domain": "library",
        "policy": POLICY,
        "user_scenario": "You are Cleo Ruiz, member M300. You are returning North of Nowhere and would like Paper Harbors; a hold is fine if it is not available.",
        "tools": TOOLS,
        "initial_db": LIBRARY_DB,
        "expected_actions": [
            call("return_book", member_id="M300", book_id="B3"),
            call("place_hold", member_id="M300", book_id="B4"),
        ],
        "required_outputs": ["hold"],
        "reference_dialogue": {
            "user": [
                "Hi, Cleo Ruiz here, member M300. I'm returning North of Nowhere, and I'd like Paper Harbors.",
                "Yes, a hold is fine.",
                "###STOP###",
            ],
            "agent": [
                {"tool_calls": [call("return_book", member_id="M300", book_id="B3")]},
                {"tool_calls": [call("find_books", query="Paper Harbors")]},
                {
                    "say": "I've taken back North of Nowhere. Paper Harbors has no copy available right now; shall I place a hold for you?"
                },
                {"tool_calls": [call("place_hold", member_id="M300", book_id="B4")]},
                {
                    "say": "Your hold on Paper Harbors is placed; we will let you know when it is back."
                },
            ],
        },
    },
]

SUITES = {
    "simpleqa-verified": (
        SIMPLEQA,
        "original short factual questions in the SimpleQA Verified row format",
    ),
    "hle": (HLE, "original hard short-answer questions in the HLE row format (text only)"),
    "arc-agi-2": (ARC, "original grid tasks in the ARC task format"),
    "livecodebench": (
        LIVECODEBENCH,
        "original programming problems in the LiveCodeBench row format",
    ),
    "scicode": (
        SCICODE,
        "an original multi-step scientific-computing problem in the SciCode row format",
    ),
    "terminal-bench-2.1": (TERMINAL, "an original shell task with a verifier script"),
    "tau3": (
        TAU3,
        "original tasks in an original lending-library domain (tau-style agent + user simulator)",
    ),
}


def main() -> None:
    for benchmark, (rows, source) in SUITES.items():
        folder = ROOT / benchmark
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(
            json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"
            for r in rows
        )
        data = body.encode("utf-8")
        (folder / "cases.jsonl").write_bytes(data)
        meta = {
            "benchmark": benchmark, "version": "1", "source": f"{source}; written for pytest-srbench",
            "revision": REVISION, "sha256": hashlib.sha256(data).hexdigest(), "count": len(rows),
            "license": "Apache-2.0", "origin": ORIGIN,
        }  # fmt: skip
        (folder / "suite.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
        print(f"{benchmark}: {len(rows)} rows")


if __name__ == "__main__":
    main()
