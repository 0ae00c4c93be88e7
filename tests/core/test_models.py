"""Frozen records share the set of field names they were given, without it leaking."""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from pytest_srbench.core.models import Case, Cell, Manifest, Message, Target
from tests.core.helpers import case


def test_records_given_the_same_names_share_one_set() -> None:
    first, second = case("mmlu-pro", "1"), case("mmlu-pro", "2")
    assert first.model_fields_set == {"id", "benchmark", "messages", "answer", "metadata"}
    assert first.model_fields_set is second.model_fields_set
    assert first.messages[0].model_fields_set is second.messages[0].model_fields_set
    bare = Case(id="mmlu-pro/3", benchmark="mmlu-pro")
    assert bare.model_fields_set == {"id", "benchmark"}  # a different set for different names
    assert bare.model_dump(exclude_unset=True) == {"id": "mmlu-pro/3", "benchmark": "mmlu-pro"}


def test_a_copy_with_an_update_does_not_change_the_shared_set() -> None:
    bare = Case(id="mmlu-pro/3", benchmark="mmlu-pro")
    other = Case(id="mmlu-pro/4", benchmark="mmlu-pro")
    updated = bare.model_copy(update={"answer": "B"})
    assert updated.model_fields_set == {"id", "benchmark", "answer"}
    assert bare.model_fields_set == other.model_fields_set == {"id", "benchmark"}
    assert pickle.loads(pickle.dumps(bare)).model_fields_set == {"id", "benchmark"}


def test_a_frozen_record_still_refuses_assignment() -> None:
    record = case("mmlu-pro", "1")
    with pytest.raises(ValidationError, match="frozen"):
        record.answer = "B"  # type: ignore[misc]
    with pytest.raises(ValidationError, match="frozen"):
        record.messages[0].content = "changed"  # type: ignore[misc]
    assert case("mmlu-pro", "2").model_fields_set == record.model_fields_set
    assert Message(role="user", content="x", name="extra").model_fields_set == {
        "role",
        "content",
        "name",
    }


def test_the_planned_count_is_the_number_of_planned_pairs():
    """``planned_count`` counts what ``planned_keys`` makes: kinds per benchmark, chat kinds
    by default, explicit execution cells (an empty list of them is none)."""

    def target(name: str, kind: str) -> Target:
        return Target.model_construct(id=name, kind=kind, model="m")

    cases = [
        Case(id=f"{b}/{i}", benchmark=b, messages=[]) for b in ("a", "b", "c") for i in range(3)
    ]
    targets = [target("chat", "single"), target("router", "mom"), target("rag", "retrieval")]
    kinds = {"b": ["retrieval"], "c": ["single", "retrieval"]}
    for target_kinds, cells in (
        (None, None),
        (kinds, None),
        (kinds, []),
        (kinds, [("a/0", "rag")]),
    ):
        manifest = Manifest.model_construct(
            cases=cases, targets=targets, target_kinds=target_kinds,
            execution_cells=None if cells is None else [Cell(case_id=c, target_id=t) for c, t in cells],
        )  # fmt: skip
        assert manifest.planned_count() == len(manifest.planned_keys()), (target_kinds, cells)


def test_the_planned_pairs_one_at_a_time_are_the_planned_pairs():
    def target(name: str, kind: str) -> Target:
        return Target.model_construct(id=name, kind=kind, model="m")

    cases = [Case(id=f"{b}/{i}", benchmark=b, messages=[]) for b in ("a", "b") for i in range(2)]
    targets = [target("chat", "single"), target("rag", "retrieval")]
    for cells in (None, [], [("b/1", "rag"), ("a/0", "chat")]):
        manifest = Manifest.model_construct(
            cases=cases, targets=targets, target_kinds={"b": ["retrieval"]},
            execution_cells=None if cells is None else [Cell(case_id=c, target_id=t) for c, t in cells],
        )  # fmt: skip
        pairs = list(manifest.iter_planned_keys())
        assert (
            pairs
            == manifest.planned_keys()
            == (cells or [("a/0", "chat"), ("a/1", "chat"), ("b/0", "rag"), ("b/1", "rag")])
        )
