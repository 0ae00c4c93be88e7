"""Suite lines that used to end in a traceback (issue 47, point 5): 100,000 nested brackets
(a RecursionError, an INTERNALERROR under pytest) and a lone surrogate escape (an error far
from the file, without its line) are one error naming the file and line."""

from __future__ import annotations

import pytest

from pytest_srbench.core.canonical import StrictJsonError, strict_json_loads
from pytest_srbench.datasets import suites
from pytest_srbench.datasets.formats._common import DatasetError, read_jsonl

DEEP = "[" * 100_000 + "]" * 100_000


def test_deep_nesting_is_a_json_error_not_a_recursion_error():
    with pytest.raises(StrictJsonError, match="nested too deeply"):
        strict_json_loads(DEEP)


def test_a_lone_surrogate_is_refused_and_a_pair_is_kept():
    with pytest.raises(StrictJsonError, match=r"lone surrogate escape \(\\ud800\)"):
        strict_json_loads('{"q": "\\ud800x"}')
    with pytest.raises(StrictJsonError, match="lone surrogate"):
        strict_json_loads('{"\\udfff": 1}')  # in a key too
    assert strict_json_loads('{"q": "\\ud83d\\ude00"}') == {"q": "\U0001f600"}


@pytest.mark.parametrize(
    ("line", "reason"),
    [(DEEP, "nested too deeply"), ('{"question": "\\udc80"}', "a lone surrogate")],
)
def test_a_suite_file_names_the_line(tmp_path, line, reason):
    path = tmp_path / "cases.jsonl"
    path.write_text('{"question": "fine"}\n' + line + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=f"cases.jsonl line 2: invalid JSON \\({reason}"):
        read_jsonl(path)
    row, problem = suites._read_row((line + "\n").encode(), 2)
    assert row is None and problem is not None and problem.startswith("2: invalid JSON (")
    assert reason in problem
