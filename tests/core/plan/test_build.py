"""Freezing: stable hashes (acceptance item 1), validation errors, execution cells."""

import hashlib
import math
from collections import OrderedDict

import pytest

from pytest_srbench.core.canonical import (
    canonical_json,
    canonical_list_pieces,
    canonical_spliced_pieces,
    cell_digest,
    digest,
    digest_pieces,
    integralize,
    pair_digest,
)
from pytest_srbench.core.models import Case, Cell, Limits, Message, Target, outline_document
from pytest_srbench.core.plan.build import PlanError, manifest_json, outline_json, verify_plan
from tests.core.helpers import case, manifest, target


def test_canonical_json_rules():
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})
    assert integralize({"a": [1.0, -0.0, 1.5, True]}) == {"a": [1, 0, 1.5, True]}


def test_pair_digest_is_the_digest_of_the_pair():
    texts = ["", "q1", 'a "quoted" \\ back\\slash', "tab\tnl\n", "é 中文 🙂", "\u2028\x00\x7f"]
    for first in [0, 7, -3, 20260918, *texts]:
        for second in texts:
            assert pair_digest(first, second) == digest([first, second])
    assert pair_digest(True, "x") == digest([True, "x"])  # not an int here: the general path
    assert cell_digest("mmlu-pro/1", "t") == digest(["mmlu-pro/1", "t"])


def test_the_digest_of_a_string_is_the_digest_of_its_canonical_json():
    import hashlib

    for text in ["", "q1", 'a "quoted" \\ back\\slash', "tab\tnl\n", "é 中文 🙂", "\u2028\x00\x7f"]:
        expected = hashlib.sha256(canonical_json(text).encode("utf-8")).hexdigest()
        assert digest(text) == expected


def reference_integralize(value):
    """The rule, written plainly (isinstance first, every node visited)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if isinstance(value, dict):
        return {key: reference_integralize(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [reference_integralize(item) for item in value]
    return value


class Ratio(float):
    pass


class Mapping(OrderedDict):
    pass


def test_integralize_follows_the_plain_rule_for_every_kind_of_value():
    value = {
        "floats": [1.0, -0.0, 2.5, 1e300, 1e16, Ratio(3.0), Ratio(0.5)],
        "nested": Mapping(a=(1.0, [True, False, None, "x", 7]), b={"c": [[4.0], ()]}),
        "leaves": ["s", 3, True, None],
        "tuple": (1.0, {"d": 2.0}),
    }
    got = integralize(value)
    assert got == reference_integralize(value)
    assert canonical_json(got) == canonical_json(reference_integralize(value))
    assert type(got["nested"]) is dict and type(got["tuple"]) is list
    assert type(got["floats"][5]) is int and type(got["floats"][6]) is Ratio
    assert integralize([float("inf"), float("nan")])[0] == float("inf")


def test_same_manifest_same_hash_and_changes_change_it():
    cases = [case("mmlu-pro", "1")]
    first = manifest(cases, [target("t")])
    assert manifest(cases, [target("t")]).plan_sha256 == first.plan_sha256
    assert (
        manifest(cases, [target("t")], sampling={"temperature": 0.5}).plan_sha256
        != first.plan_sha256
    )
    changed = Target(
        id="t",
        model="t",
        base_url="http://127.0.0.1:9/v1",
        prices=target("t").prices,
        request_params={"top_p": 0.5},
    )
    assert manifest(cases, [changed]).plan_sha256 != first.plan_sha256


def test_float_one_and_int_one_hash_alike():
    cases = [case("mmlu-pro", "1")]
    a = manifest(cases, [target("t")], limits=Limits(total_timeout_s=100.0))
    b = manifest(cases, [target("t")], limits=Limits.model_validate({"total_timeout_s": 100}))
    assert a.plan_sha256 == b.plan_sha256
    verify_plan(a)
    tampered = a.model_copy(update={"name": "other"})
    with pytest.raises(PlanError, match="reviewed_plan_changed"):
        verify_plan(tampered)


def test_case_hash_is_the_digest_of_the_cases():
    cases = [case("mmlu-pro", "1")]
    plan = manifest(cases, [target("t")])
    assert plan.case_sha256 == digest([c.model_dump(mode="json") for c in cases])


def _varied_cases() -> list[Case]:
    """Cases whose canonical text exercises the writer: floats (integral or not), unicode,
    quotes and control characters, nested metadata, a case with no messages."""
    return [
        case("mmlu-pro", "1"),
        Case(
            id='gpqa-diamond/é"\n\u0000',
            benchmark="gpqa-diamond",
            messages=[Message(role="user", content=[{"type": "text", "text": "ünï 𝄞"}])],
            answer=2.0,
            metadata={"z": [1.5, 2.0, {"b": -0.0, "a": None}], "letters": "ABCD"},
        ),
        Case(id="mmlu-pro/2", benchmark="mmlu-pro", answer=None),
    ]


def test_streamed_plan_texts_equal_the_plain_formulas():
    """The plan's hash, its case hash and its stored text are written case by case; each
    equals the one-shot formula over the whole dump."""
    plan = manifest(_varied_cases(), [target("t")], sampling={"temperature": 1.0})
    body = plan.model_dump(mode="json", exclude={"plan_sha256"})
    if body["benchmark_targets"] is None:  # a plan without variants hashes as before them
        del body["benchmark_targets"]
    if body["replay_sources"] is None:  # only a replay run's plan hashes its sources
        del body["replay_sources"]
    assert plan.plan_sha256 == digest(integralize(body))
    assert manifest_json(plan) == canonical_json(plan.model_dump(mode="json"))
    dumps = [c.model_dump(mode="json") for c in _varied_cases()]
    assert plan.case_sha256 == digest(dumps)


def test_a_plan_with_variants_hashes_which_targets_answer_which_benchmark():
    """Variants (issue 43) name the targets of each benchmark: the field is in the hash of
    such a plan (two plans that differ only there differ), and out of every other plan's."""
    cases = _varied_cases()
    targets = [target("t"), target("t~a"), target("t~b")]
    plain = manifest(cases, targets)
    answered = manifest(
        cases, targets, benchmark_targets={"mmlu-pro": ["t~a"], "gpqa-diamond": ["t", "t~b"]}
    )
    other = manifest(
        cases, targets, benchmark_targets={"mmlu-pro": ["t~b"], "gpqa-diamond": ["t", "t~a"]}
    )
    assert len({plain.plan_sha256, answered.plan_sha256, other.plan_sha256}) == 3
    body = answered.model_dump(mode="json", exclude={"plan_sha256", "replay_sources"})
    assert body["benchmark_targets"] == {"gpqa-diamond": ["t", "t~b"], "mmlu-pro": ["t~a"]}
    assert answered.plan_sha256 == digest(integralize(body))


@pytest.mark.parametrize("count", [0, 1, 1000, 2345])
def test_the_outline_written_in_batches_is_the_outline_document(count):
    """The store's outline text, its case list written a batch at a time, is byte for byte
    the plain dump (across the batch boundaries); a plan that spells the splice marker is
    written the plain way."""
    import orjson

    cases = (_varied_cases() * (count // 3 + 1))[:count]
    cases = [c.model_copy(update={"id": f"{c.id}#{n}"}) for n, c in enumerate(cases)]
    plan = (
        manifest(cases, [target("t")])
        if cases
        else manifest([case("mmlu-pro", "1")], [target("t")]).model_copy(update={"cases": []})
    )
    assert outline_json(plan) == orjson.dumps(outline_document(plan)).decode()
    odd = plan.model_copy(update={"profile": "\x00srbench outline cases\x00"})
    assert outline_json(odd) == orjson.dumps(outline_document(odd)).decode()


@pytest.mark.parametrize("items", [[], [1], [{"b": 1, "a": [2.5, "x"]}, None, "é"]])
def test_canonical_pieces_join_to_the_canonical_text(items):
    assert "".join(canonical_list_pieces(items)) == canonical_json(items)
    head = {"z": 1, "a": {"cases": []}, "m": "\x00"}
    spliced = "".join(canonical_spliced_pieces(head, "cases", iter(items)))
    assert spliced == canonical_json({**head, "cases": items})
    assert digest_pieces(canonical_list_pieces(items)) == digest(items)


def test_digest_pieces_over_many_pieces_is_the_digest_of_their_text():
    pieces = [f"piece {n}," for n in range(5000)]  # more than one batch
    assert digest_pieces(pieces) == hashlib.sha256("".join(pieces).encode()).hexdigest()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"targets": []}, "at least one target"),
        ({"targets": [Target(id="t", model="m", base_url="http://h/v1")]}, "has no prices"),
        ({"sampling": {"max_tokens": 10_000}}, "max_tokens exceeds"),
        ({"sampling": {"n": 2}}, "n must be exactly 1"),
        ({"sampling": {"frobnicate": 1}}, "unsupported generation parameter"),
        (
            {"benchmark_options": {"mmlu-pro": {"judge": "nobody"}}},
            "judge target 'nobody' is not defined",
        ),
    ],
)
def test_invalid_plans_are_rejected_with_a_reason(kwargs, message):
    targets = kwargs.pop("targets", [target("t")])
    with pytest.raises(PlanError, match=message):
        manifest([case("mmlu-pro", "1")], targets, **kwargs)


def test_execution_cells_are_normalised_and_full_product_becomes_none():
    cases = [case("mmlu-pro", "1"), case("mmlu-pro", "2")]
    targets = [target("a"), target("b")]
    subset = manifest(
        cases,
        targets,
        execution_cells=[
            Cell(case_id="mmlu-pro/2", target_id="b"),
            Cell(case_id="mmlu-pro/1", target_id="a"),
        ],
    )
    assert [(c.case_id, c.target_id) for c in subset.planned_cells()] == [
        ("mmlu-pro/1", "a"),
        ("mmlu-pro/2", "b"),
    ]
    full = [Cell(case_id=c.id, target_id=t.id) for c in cases for t in targets]
    assert manifest(cases, targets, execution_cells=full).execution_cells is None
    with pytest.raises(PlanError, match="without a cell"):
        manifest(cases, targets, execution_cells=[Cell(case_id="mmlu-pro/1", target_id="a")])


def test_target_validation():
    with pytest.raises(ValueError, match="credentials come only from the environment"):
        Target.model_validate(
            {"id": "t", "model": "m", "base_url": "http://h/v1", "api_key": "sk-secret"}
        )
    with pytest.raises(ValueError, match="must not contain credentials"):
        Target(id="t", model="m", base_url="http://user:pw@h/v1")
    with pytest.raises(ValueError, match="needs a base_url"):
        Target(id="t", model="m")
    with pytest.raises(ValueError):
        Limits(idle_timeout_s=500)
    with pytest.raises(ValueError, match="finite and > 0"):
        Limits.model_validate({"max_cost_usd": 0})


@pytest.mark.parametrize("count", [0, 1, 3, 4, 10])
def test_compact_spliced_pieces_are_the_plain_dump(count):
    import orjson

    from pytest_srbench.core.canonical import SPLICED_LIST, compact_spliced_pieces

    items = [{"id": f"c{n}", "é": [n, None]} for n in range(count)]
    document = {"a": 1, "plan": {"cases": SPLICED_LIST, "z": "x"}, "b": [2.5]}
    joined = b"".join(compact_spliced_pieces(document, iter(items), batch=3))
    assert joined == orjson.dumps({**document, "plan": {"cases": items, "z": "x"}})
    with pytest.raises(ValueError, match="exactly once"):
        compact_spliced_pieces({"x": SPLICED_LIST, "y": SPLICED_LIST}, items)
