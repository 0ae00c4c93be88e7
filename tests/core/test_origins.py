"""Data origins: the recorded shapes, the fallbacks for suites that record none, the phrases
reports print and when two origins of one benchmark are different data."""

import re

import pytest

from pytest_srbench.core.origins import (
    OriginError,
    check_origin,
    data_kind,
    data_origin,
    data_phrase,
    describe_origin,
    source_conflict,
)

SHA = "a" * 64
RELEASED = {
    "kind": "released",
    "source": "https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro",
    "revision": "3373e0b32277875b8db2aa555a333b78a08477ea",
    "files": {"data/test-00000-of-00001.parquet": SHA},
    "license": "MIT",
    "via": "huggingface_hub",
}
SYNTHETIC = {"kind": "synthetic", "generator": "pytest-srbench 0.1.0 datasets synth", "seed": 7}


@pytest.mark.parametrize(
    "origin",
    [
        RELEASED,
        {"kind": "original", "note": "original smoke items written for pytest-srbench"},
        SYNTHETIC,
        {"kind": "user", "source": "our support tickets", "files": {"cases.jsonl": SHA}},
    ],
)
def test_each_recorded_shape_is_kept_as_recorded(origin):
    assert check_origin(origin) == origin
    assert data_origin({"origin": origin, "revision": "synthetic-1"}, "shipped") == origin


@pytest.mark.parametrize(
    ("origin", "problem"),
    [
        ("released", "must be an object"),
        ({"kind": "downloaded"}, "kind 'downloaded' is not one of released"),
        ({**RELEASED, "revision": " "}, "needs revision"),
        ({**RELEASED, "files": {}}, "at least one file"),
        ({**RELEASED, "files": {"x.parquet": "ABC"}}, "x.parquet: 'ABC' is not a lowercase"),
        ({**RELEASED, "files": ["x.parquet"]}, "needs files (dict)"),
        ({"kind": "original", "note": "n", "files": ["x"]}, "files must map"),
        ({**SYNTHETIC, "seed": "7"}, "needs seed (int)"),
        ({**SYNTHETIC, "seed": True}, "needs seed (int)"),
        ({"kind": "user", "source": "mine"}, "needs files (dict)"),
    ],
)
def test_a_malformed_origin_names_the_field(origin, problem):
    with pytest.raises(OriginError, match=re.escape(problem)):
        check_origin(origin)


def test_fallbacks_for_suites_without_an_origin():
    shipped = {"revision": "pytest-srbench-smoke-2026-11-30", "sha256": SHA}
    assert data_origin(shipped, "shipped")["kind"] == "original"
    synthetic = {"revision": "synthetic-42", "synthetic": {"generator": "g-v1", "seed": 42}}
    assert data_origin(synthetic, "project") == {
        "kind": "synthetic",
        "generator": "pytest-srbench datasets synth (g-v1)",
        "seed": 42,
    }
    assert data_origin({"revision": "synthetic-9"}, "project")["seed"] == 9
    assert data_origin({"revision": "synthetic-x"}, "project")["seed"] is None
    project = {"source": "tickets", "revision": "v3", "sha256": SHA}
    assert data_origin(project, "project") == {
        "kind": "user",
        "source": "tickets",
        "files": {"cases.jsonl": SHA},
    }
    assert data_origin(project, "project", "my-rag.json")["files"] == {"my-rag.json": SHA}
    prepared = {
        "source": "MMLU-Pro test split",
        "revision": "r1",
        "sha256": SHA,
        "prepared": {"source_files": [{"name": "test.parquet", "sha256": "b" * 64}]},
    }
    assert data_origin(prepared, "project") == {
        "kind": "user",
        "source": "MMLU-Pro test split",
        "files": {"test.parquet": "b" * 64},
    }
    python = {"benchmark": "faq", "kind": "python", "source": "python", "sha256": SHA}
    assert data_origin(python, "project") == {
        "kind": "user",
        "source": "Python-defined benchmark faq",
        "files": {},
    }


def test_kinds_and_phrases():
    original = {"kind": "original", "note": "n"}
    assert data_kind([original, original]) == "original"
    assert data_kind([original, SYNTHETIC]) == "mixed"
    assert data_kind([]) == "unknown"
    assert data_phrase([SYNTHETIC]) == "synthetic data"
    assert data_phrase([SYNTHETIC, original, None]) == "mixed data (original, synthetic, unknown)"
    assert data_phrase([None]) == "data of unknown origin"
    assert describe_origin(RELEASED) == (
        "released: https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro @ "
        "3373e0b32277875b8db2aa555a333b78a08477ea (1 file pinned by sha256)"
    )
    assert describe_origin(SYNTHETIC) == "synthetic: pytest-srbench 0.1.0 datasets synth, seed 7"
    assert describe_origin(None).startswith("unknown")


def test_source_conflicts():
    assert source_conflict(RELEASED, dict(RELEASED)) is None
    assert source_conflict(RELEASED, {**RELEASED, "revision": "b" * 40}) == (
        "different released revisions"
    )
    assert source_conflict(RELEASED, {**RELEASED, "files": {"x": "c" * 64}}) == (
        "different released file hashes"
    )
    assert source_conflict(SYNTHETIC, {**SYNTHETIC, "seed": 8}) == "different synthetic seeds"
    assert source_conflict(SYNTHETIC, {**SYNTHETIC, "generator": "newer"}) is None
    assert source_conflict(RELEASED, SYNTHETIC) == "different kinds of data"
    assert source_conflict(None, SYNTHETIC) is None  # a report from before origins
