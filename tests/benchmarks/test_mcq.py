"""MCQ rows rendered as cases: what a large plan shares between its cases."""

import json

from pytest_srbench.benchmarks.mcq import MmluProAdapter


def _row(n: int, options: int) -> dict[str, object]:
    # decoded from text, as suite rows are: equal strings, distinct objects
    return json.loads(json.dumps({"question_id": n, "question": f"Question {n}?",
                                  "options": [f"o{k}" for k in range(options)], "answer": "A",
                                  "category": "physics"}))  # fmt: skip


def test_cases_share_their_letters_and_category_strings():
    """A plan of 10^5 cases holds one letters string per option count and one string per
    category, not one per case (each ~55 bytes)."""
    adapter = MmluProAdapter()
    first, second, shorter = (adapter.render(_row(n, k), 1) for n, k in ((1, 10), (2, 10), (3, 4)))
    assert first.metadata["letters"] == "ABCDEFGHIJ" and shorter.metadata["letters"] == "ABCD"
    assert first.metadata["letters"] is second.metadata["letters"]
    assert first.metadata["category"] == "physics"
    assert first.metadata["category"] is second.metadata["category"]
