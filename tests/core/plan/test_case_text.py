"""The cases' canonical text made once at freeze time: every digest and the stored text it
feeds equal the one-shot formulas, with the text held, released, or not the plan's own."""

import pytest

from pytest_srbench.core.canonical import canonical_json, digest, integralize
from pytest_srbench.core.models import Case, Message
from pytest_srbench.core.plan import case_text
from pytest_srbench.core.plan.build import (
    base_case,
    case_sha256,
    expand_repeats,
    held_case_text,
    manifest_json,
    plan_digest,
    release_case_text,
)
from pytest_srbench.core.plan.case_text import CaseListText, has_integral_float, text_chunks
from pytest_srbench.store import open_store
from tests.core.helpers import case, manifest, target


def _plain(count: int) -> list[Case]:
    return [
        Case(
            id=f"mmlu-pro/{i}",
            benchmark="mmlu-pro",
            messages=[Message(role="user", content=f'question {i}: "é" \\ 中文\n\t\u0001')],
            answer="B",
            metadata={"letters": "ABCD", "weight": 0.5, "nested": [{"b": 1, "a": None}]},
        )
        for i in range(count)
    ]


def _integral() -> list[Case]:
    return [
        *_plain(3),
        Case(id="mmlu-pro/x", benchmark="mmlu-pro", answer=2.0, metadata={"z": [-0.0]}),
    ]


def _expected(plan) -> tuple[str, str, str]:
    """plan digest, case digest, stored text by their one-shot formulas."""
    body = plan.model_dump(mode="json", exclude={"plan_sha256"})
    if body["benchmark_targets"] is None:  # a plan without variants hashes as before them
        del body["benchmark_targets"]
    if body["replay_sources"] is None:  # only a replay run's plan hashes its sources
        del body["replay_sources"]
    distinct: dict[str, Case] = {}
    for each in plan.cases:
        distinct.setdefault(base_case(each).id, base_case(each))
    return (
        digest(integralize(body)),
        digest([each.model_dump(mode="json") for each in distinct.values()]),
        canonical_json(plan.model_dump(mode="json")),
    )


CASE_SETS = {
    "plain": lambda: _plain(5),
    "integral floats": _integral,
    "repeats": lambda: expand_repeats(_plain(3), 3),
    "one case": lambda: _plain(1),
}


@pytest.mark.parametrize("name", sorted(CASE_SETS))
@pytest.mark.parametrize("chunk", [1 << 20, 64])
def test_every_text_equals_the_one_shot_formula(name, chunk, monkeypatch):
    monkeypatch.setattr(case_text, "CHUNK_BYTES", chunk)  # many chunks, or one
    plan = manifest(CASE_SETS[name](), [target("t")])
    held = held_case_text(plan)
    assert held is not None
    assert b"".join(held.chunks).decode() == canonical_json(
        [each.model_dump(mode="json") for each in plan.cases]
    )
    plan_sha, case_sha, stored = _expected(plan)
    assert (plan.plan_sha256, plan.case_sha256, plan_digest(plan)) == (plan_sha, case_sha, plan_sha)
    assert manifest_json(plan) == stored
    assert held_case_text(plan) is None
    assert (plan_digest(plan), case_sha256(plan.cases), manifest_json(plan)) == (
        plan_sha,
        case_sha,
        stored,
    )


def test_the_flags_say_which_readers_may_use_the_text():
    assert not CaseListText.of(_plain(2)).has_repeats
    assert not CaseListText.of(_plain(2)).has_integral_floats
    assert CaseListText.of(_integral()).has_integral_floats
    assert CaseListText.of(expand_repeats(_plain(2), 2)).has_repeats
    assert has_integral_float({"a": [1.5, {"b": (3.0,)}]})
    assert not has_integral_float({"a": [1.5, True, 1, float("inf"), "2.0"]})

    class Number(float):
        pass

    class Mapping(dict):
        pass

    assert has_integral_float(Number(2.0)) and has_integral_float(Mapping(a=[3.0]))
    assert not has_integral_float([Number(0.5), Mapping(b=True)])


def test_a_text_made_from_other_cases_is_not_used():
    plan = manifest(_plain(4), [target("t")])
    other = plan.model_copy(update={"cases": _plain(4)})  # equal, but not the same objects
    assert held_case_text(other) is None
    fewer = plan.model_copy(update={"cases": plan.cases[:3]})
    assert held_case_text(fewer) is None
    assert plan_digest(fewer) == digest(
        integralize(
            fewer.model_dump(
                mode="json", exclude={"plan_sha256", "benchmark_targets", "replay_sources"}
            )
        )
    )
    assert case_sha256(plan.cases[:3], held_case_text(plan)) == digest(
        [each.model_dump(mode="json") for each in plan.cases[:3]]
    )


def test_the_store_keeps_the_same_text_with_or_without_it(tmp_path):
    held = manifest([*_plain(30), case("mmlu-pro", "last")], [target("t")])
    released = held.model_copy()
    release_case_text(released)
    assert held_case_text(held) is not None and held_case_text(released) is None
    store = open_store(tmp_path / "store")
    store.create_run("run-held", held)
    store.create_run("run-released", released)
    texts = [
        row[0]
        for row in store.db.execute(
            "SELECT CAST(manifest AS TEXT) FROM run_plans ORDER BY run_id", ()
        )
    ]
    assert texts == [canonical_json(held.model_dump(mode="json"))] * 2
    assert store.get_manifest("run-held") == held
    assert held_case_text(held) is None  # handed over to the store: not kept with the plan


def test_holding_the_text_changes_nothing_a_reader_of_the_plan_sees():
    held = manifest(_plain(3), [target("t")])
    released = held.model_copy()
    release_case_text(released)
    assert held == released and released == held
    assert held.model_dump() == released.model_dump()
    assert repr(held) == repr(released)
    assert held.model_dump_json() == released.model_dump_json()


def test_text_chunks_hold_every_piece_in_order():
    pieces = [chr(65 + n % 26) * (n % 7) + ("é" if n % 5 == 0 else "") for n in range(500)]
    chunks = list(text_chunks(iter(pieces), size=100))
    assert b"".join(chunks) == "".join(pieces).encode("utf-8")
    assert all(len(chunk) >= 100 for chunk in chunks[:-1]) and len(chunks) > 10
    assert list(text_chunks(iter([]))) == []


@pytest.mark.parametrize(
    "value",
    [2.0, -0.0, 1e16, 1.5e20, 123456789.0, 1e300, 0.5, 1e-05, 2.5e-300, 3.25, 7],
)
def test_the_texts_pre_check_never_misses_an_integral_float(value):
    for holder in ({"answer": value}, {"a": [value]}, {"a": [1, value, "x"]}, {"z": {"y": value}}):
        text = canonical_json(holder)
        if has_integral_float(holder):
            assert case_text._MAYBE_INTEGRAL.search(text), text
    made = CaseListText.of([Case(id="b/1", benchmark="b", answer=value)])
    assert made.has_integral_floats == (type(value) is float and value.is_integer())


def test_a_string_that_looks_like_an_integral_float_is_not_one():
    made = CaseListText.of([Case(id="b/1", benchmark="b", answer="version 2.0, then 1e+16")])
    assert not made.has_integral_floats
