"""Benchmarks and targets defined in the user's Python code: what a definition accepts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pytest_srbench.core import user_benchmarks, user_targets
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.user_benchmarks import benchmark
from pytest_srbench.core.user_targets import declared_targets, target


@pytest.fixture(autouse=True)
def fresh_registries() -> Iterator[None]:
    saved = (dict(user_benchmarks._DEFINED), dict(user_targets._DECLARED))
    user_benchmarks._DEFINED.clear()
    user_targets._DECLARED.clear()
    yield
    user_benchmarks._DEFINED.clear()
    user_benchmarks._DEFINED.update(saved[0])
    user_targets._DECLARED.clear()
    user_targets._DECLARED.update(saved[1])


def test_cases_from_a_generator_and_ids_made_strings():
    defined = benchmark("gen", cases=lambda: ({"id": i, "question": f"q{i}"} for i in range(3)),
                        grade=lambda a, c: True)  # fmt: skip
    assert [row["id"] for row in defined.rows] == ["0", "1", "2"]


def test_the_same_definition_twice_is_fine_a_different_one_is_not():
    rows = [{"id": "a", "question": "q", "answer": "x"}]
    benchmark("twice", cases=rows, grade=lambda a, c: True)
    benchmark("twice", cases=rows, grade=lambda a, c: True)  # a module imported again
    with pytest.raises(InputError, match="defined twice"):
        benchmark("twice", cases=[{"id": "a", "question": "q", "answer": "y"}],
                  grade=lambda a, c: True)  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "Bad Name"}, "must match"),
        ({"cases": [{"id": "a", "question": "q", "when": object()}]}, "not JSON data"),
        ({"cases": [{"id": "a b", "question": "q"}]}, "id 'a b' must match"),
        ({"cases": ["a"]}, "not a mapping"),
        ({"grade": "yes"}, "grade must be a function"),
    ],
)
def test_bad_definitions_name_the_problem(kwargs, message):
    arguments = {"name": "ok", "cases": [{"id": "a", "question": "q"}], "grade": lambda a, c: 1}
    with pytest.raises(InputError, match=message):
        benchmark(**{**arguments, **kwargs})


def test_a_target_declaration_records_the_fixture_name():
    def my_app():
        return None

    assert target("my-app", model="v1")(my_app) is my_app
    (declared,) = declared_targets()
    assert (declared.id, declared.fixture, declared.model) == ("my-app", "my_app", "v1")
    with pytest.raises(InputError, match="declared twice"):
        target("my-app")(lambda: None)
    with pytest.raises(InputError, match="must match"):
        target("no spaces allowed")
