"""A suite line that is too deeply nested or holds a lone surrogate (issue 47, point 5): the
pytest session stops with one line naming the file and the line, not an INTERNALERROR (a
real pytest session on an extension benchmark's suite, as docs/suites.md writes it)."""

from __future__ import annotations

import hashlib
import json

import pytest

pytestmark = pytest.mark.slow

CONFTEST = """
from pytest_srbench.benchmarks.mcq import MmluProAdapter

class MyQuiz(MmluProAdapter):
    benchmark = "my-quiz"

def pytest_srbench_adapters(registry, config):
    registry.register(MyQuiz())
"""
GOOD = json.dumps(
    {"question_id": "q1", "question": "Legs of a spider?", "options": ["6", "8", "10", "12"],
     "answer": "B", "category": "animals"}
)  # fmt: skip
SURROGATE = GOOD.replace("Legs of a spider?", "bad \\ud800 here").replace('"q1"', '"q2"')


@pytest.mark.parametrize(
    ("line", "reason"),
    [("[" * 100_000 + "]" * 100_000, "nested too deeply"), (SURROGATE, "a lone surrogate")],
    ids=["deep-nesting", "lone-surrogate"],  # a 200,000-character id overflows argv on pytest 8
)
def test_a_bad_suite_line_is_one_error_with_file_and_line(pytester, line, reason):
    pytester.makeconftest(CONFTEST)
    folder = pytester.path / "suites" / "my-quiz"
    folder.mkdir(parents=True)
    data = (GOOD + "\n" + line + "\n").encode()
    (folder / "cases.jsonl").write_bytes(data)
    meta = {"benchmark": "my-quiz", "version": "1", "source": "original items", "revision": "1",
            "sha256": hashlib.sha256(data).hexdigest(), "profiles": {"smoke": 2, "quick": 2}}  # fmt: skip
    (folder / "suite.json").write_text(json.dumps(meta))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-benchmark=my-quiz")
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert "INTERNALERROR" not in output and "Traceback" not in output, output[-3000:]
    lines = [text for text in output.splitlines() if "pytest-srbench:" in text]
    assert len(lines) == 1, output[-3000:]
    assert f"cases.jsonl line 2: invalid JSON ({reason}" in lines[0]
