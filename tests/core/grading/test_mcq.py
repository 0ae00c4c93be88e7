"""The conservative MCQ grader (acceptance item 16 of reference/run-lifecycle.md §16)."""

import pytest

from pytest_srbench.core.grading.mcq import extract_choice, grade_choice

LETTERS = "ABCDEFGHIJ"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("B", ("B", "answered", True)),
        ("The answer is **C**", ("C", "answered", False)),
        ("Answer: A or B", (None, "ambiguous", False)),
        ("I think D is plausible", (None, "unparsed", False)),
        ("<think>it is B</think>", (None, "unparsed", False)),
        ("reasoning</think> B", (None, "unparsed", False)),
        ("\\boxed{E}", ("E", "answered", False)),
        ("(C)", ("C", "answered", True)),
        ("**J**", ("J", "answered", True)),
        ("`D`", ("D", "answered", True)),
        ("ANSWER: F", ("F", "answered", True)),
        ("B.\nBecause the others are wrong.", ("B", "answered", False)),
        ("The final answer is G, or maybe H.", ("G", "answered", False)),
        ("The correct answer is A, B", (None, "ambiguous", False)),
        ("The answer is A/B", (None, "ambiguous", False)),
        ("The answer is Because of X", (None, "unparsed", False)),
        ("a", (None, "unparsed", False)),
        ("The answer is B. \\boxed{C}", (None, "ambiguous", False)),
        ("", (None, "unparsed", False)),
    ],
)
def test_extraction(text, expected):
    assert extract_choice(text, LETTERS) == expected


def test_letter_outside_the_options_is_not_an_answer():
    assert extract_choice("The answer is E", "ABCD") == (None, "unparsed", False)
    assert extract_choice("The answer is A or E", "ABCD")[1] == "ambiguous"


def test_grade_marks_correctness_and_unparsed_as_incorrect():
    assert grade_choice("C", "C", "ABCD").correct is True
    assert grade_choice("B", "C", "ABCD").correct is False
    unparsed = grade_choice("no idea", "C", "ABCD")
    assert unparsed.correct is False and unparsed.status == "unparsed"
