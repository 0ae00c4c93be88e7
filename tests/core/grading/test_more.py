"""Grids, judge verdicts and code-answer helpers (pure graders)."""

import pytest

from pytest_srbench.core.grading.code import (
    extract_python,
    functional_passed,
    functional_program,
    outputs_match,
)
from pytest_srbench.core.grading.grids import grade_grids, is_grid, parse_grids
from pytest_srbench.core.grading.judge import JudgeError, judge_messages, parse_verdict

EXPECTED = [[[1, 2], [3, 4]]]


@pytest.mark.parametrize(
    ("text", "correct", "valid"),
    [
        ("[[[1,2],[3,4]]]", True, True),
        ("[[1,2],[3,4]]", True, True),  # a single grid is a one-grid answer
        ("```json\n[[[1,2],[3,4]]]\n```", True, True),
        ("[[[1,2],[3,5]]]", False, True),
        ("[[[1,2],[3]]]", False, False),  # not rectangular
        ("[[[1,2],[3,10]]]", False, False),  # value outside 0-9
        ("[[[true,2],[3,4]]]", False, False),
        ("the answer is a grid", False, False),
        ("[]", False, False),
    ],
)
def test_grids(text, correct, valid):
    got_correct, got_valid, _ = grade_grids(text, EXPECTED)
    assert (got_correct, got_valid) == (correct, valid)


def test_is_grid_and_parse():
    assert is_grid([[0]]) and not is_grid([[]]) and not is_grid([1, 2])
    assert parse_grids("[[[0]],[[1]]]") == [[[0]], [[1]]]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('{"verdict": "correct"}', "correct"),
        ('```json\n{"verdict": "not_attempted"}\n```', "not_attempted"),
        ('  {"verdict":"incorrect","why":"x"}  ', "incorrect"),
    ],
)
def test_verdicts(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(
    "text",
    ["The answer is correct.", '{"verdict": "mostly right"}', '{"grade": "correct"}', "[]", ""],
)
def test_malformed_verdicts_are_errors_never_guesses(text):
    with pytest.raises(JudgeError):
        parse_verdict(text)


def test_judge_messages_carry_the_three_fields():
    system, user = judge_messages("Q?", "Paris", "paris")
    assert "sr-bench-reference-judge-v1" in system["content"]
    assert (
        '"candidate_answer": "paris"' in user["content"]
        and '"reference_answer": "Paris"' in user["content"]
    )


def test_extract_python_joins_python_blocks_only():
    text = "intro\n```python\na = 1\n```\n```bash\nls\n```\n```py\nb = 2\n```"
    assert extract_python(text) == "a = 1\n\nb = 2"
    assert extract_python("no code here") is None
    assert extract_python("```python\n\n```") is None


@pytest.mark.parametrize(
    ("actual", "expected", "same"),
    [
        ("15\n", "15", True),
        ("15  \n\n", "15\n", True),
        ("1.0000000001", "1", True),
        ("16", "15", False),
        ("1 2", "1 2 3", False),
    ],
)
def test_output_comparison(actual, expected, same):
    assert outputs_match(actual, expected) is same


def test_functional_program_reports_a_match_marker():
    program = functional_program("def f(a, b):\n    return a + b", "f", "1\n2", "3")
    namespace: dict = {}
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(program, "<test>", "exec"), namespace)
    assert functional_passed(out.getvalue()) is True
    assert functional_passed("no marker") is False
