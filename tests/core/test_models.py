"""Frozen records share the set of field names they were given, without it leaking."""

from __future__ import annotations

import pickle

import pytest
from pydantic import ValidationError

from pytest_srbench.core.models import Case, Message
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
