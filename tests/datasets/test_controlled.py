"""Controlled dataset directories: load by id only, corruption isolated to the requested file."""

from __future__ import annotations

import builtins
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_srbench.core.benchmark_errors import BenchmarkError
from pytest_srbench.core.plan.datasets import (
    DATASET_ID_PATTERN,
    AgentCase,
    BenchmarkDataset,
    RagCase,
    parse_dataset,
)
from pytest_srbench.datasets.controlled import DATASET_ID, DatasetDirectory


def rag(dataset_id: str = "rag-smoke", **change: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "dataset_id": dataset_id,
        "kind": "rag",
        "version": "1",
        "corpus": "notes-v1",
        "cases": [
            {"case_id": "q1", "query": "budget deadline", "expected_note_ids": ["n1"]},
            {
                "case_id": "q2",
                "query": "who owns billing",
                "expected_note_ids": ["n2", "n3"],
                "expected_block_ids": ["n2#b1"],
                "citation_required": True,
                "tags": ["people"],
            },
        ],
    }
    return {**data, **change}


def agent(dataset_id: str = "agent-smoke") -> dict[str, Any]:
    return {
        "dataset_id": dataset_id,
        "kind": "agent",
        "version": "2",
        "cases": [
            {
                "case_id": "t1",
                "prompt": "Make a task to call Bob",
                "expected_tool_calls": [
                    {"name": "create_task", "arguments": {"title": "Call Bob"}}
                ],
                "required_substrings": ["Bob"],
                "expected_task_count": 1,
                "approved_tools": ["create_task"],
            }
        ],
    }


def write(folder: Path, name: str, content: bytes | dict[str, Any] | builtins.list[Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    raw = content if isinstance(content, bytes) else json.dumps(content).encode()
    path = folder / name
    path.write_bytes(raw)
    return path


def citation_without_blocks() -> dict[str, Any]:
    data = rag()
    data["cases"][1] = {**data["cases"][1], "expected_block_ids": []}
    return data


def schema_error() -> dict[str, Any]:
    data = rag()
    data["cases"][0] = {**data["cases"][0], "expected_note_ids": []}
    return data


CORRUPTIONS = {
    "bad-json": (b'{"dataset_id": "rag-smoke",', "not valid JSON"),
    "bad-utf8": (b'{"dataset_id": "rag-smoke\xff"}', r"not valid UTF-8 \(byte 25\)"),
    "top-level-array": (b"[1, 2]", "top level must be a JSON object, got an array"),
    "schema": (
        json.dumps(schema_error()).encode(),
        r"case #0 \('q1'\): expected_note_ids: List should have at least 1 item",
    ),
    "citation": (
        json.dumps(citation_without_blocks()).encode(),
        r"case 'q2': citation_required is true but expected_block_ids is empty",
    ),
    "id-mismatch": (
        json.dumps(rag("other")).encode(),
        "dataset_id 'other' inside the file differs from the file name",
    ),
    "duplicate-key": (b'{"kind": "rag", "kind": "agent"}', "duplicate key 'kind'"),
    "nan": (b'{"x": NaN}', "NaN is not a JSON number"),
}


def test_load_returns_dataset_path_and_sha256(tmp_path: Path):
    path = write(tmp_path, "rag-smoke.json", rag())
    loaded = DatasetDirectory([tmp_path]).load("rag-smoke")
    assert loaded.path == path
    assert loaded.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    dataset = loaded.dataset
    assert (dataset.kind, dataset.version, dataset.corpus) == ("rag", "1", "notes-v1")
    assert all(isinstance(case, RagCase) for case in dataset.cases)
    write(tmp_path, "agent-smoke.json", agent())
    (case,) = DatasetDirectory([tmp_path]).load("agent-smoke").dataset.cases
    assert isinstance(case, AgentCase) and case.approved_tools == ["create_task"]
    spec = case.spec()
    assert spec.expected_tool_calls == [{"name": "create_task", "arguments": {"title": "Call Bob"}}]
    assert spec.expected_task_count == 1


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupt_requested_file_is_invalid(tmp_path: Path, corruption: str):
    raw, message = CORRUPTIONS[corruption]
    write(tmp_path, "rag-smoke.json", raw)
    with pytest.raises(BenchmarkError, match=message) as caught:
        DatasetDirectory([tmp_path]).load("rag-smoke")
    assert caught.value.code == "BENCHMARK_DATASET_INVALID"
    assert str(caught.value).startswith("BENCHMARK_DATASET_INVALID: dataset 'rag-smoke': ")


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_corrupt_unrelated_file_blocks_nothing(tmp_path: Path, corruption: str):
    raw, message = CORRUPTIONS[corruption]
    write(tmp_path, "rag-smoke.json", rag())
    # the unrelated file's own id is "broken"; the id-mismatch body names "other"
    write(tmp_path, "broken.json", raw.replace(b'"rag-smoke', b'"broken'))
    directory = DatasetDirectory([tmp_path])
    assert directory.load("rag-smoke").dataset.dataset_id == "rag-smoke"
    assert [item["dataset_id"] for item in directory.list()] == ["rag-smoke"]
    (problem,) = directory.problems()
    assert problem["dataset_id"] == "broken"
    assert problem["code"] == "BENCHMARK_DATASET_INVALID"
    assert problem["location"] == str(tmp_path / "broken.json")


def test_load_never_reads_other_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    write(tmp_path, "rag-smoke.json", rag())
    write(tmp_path, "broken.json", b"{")
    read: list[str] = []
    original = Path.read_bytes

    def spy(self: Path) -> bytes:
        read.append(self.name)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    DatasetDirectory([tmp_path]).load("rag-smoke")
    assert read == ["rag-smoke.json"]


def test_unknown_id_is_not_found_and_lists_the_directories(tmp_path: Path):
    write(tmp_path / "a", "rag-smoke.json", rag())
    with pytest.raises(BenchmarkError, match="no dataset 'missing'") as caught:
        DatasetDirectory([tmp_path / "a", tmp_path / "absent"]).load("missing")
    assert caught.value.code == "BENCHMARK_DATASET_NOT_FOUND"
    assert str(tmp_path / "a") in caught.value.message
    assert str(tmp_path / "absent") in caught.value.message


@pytest.mark.parametrize(
    "dataset_id",
    ["../x", "a/b", "/etc/passwd", "..", "a\\b", "", ".hidden", "x" * 129, "rag smoke"],
)
def test_path_like_ids_are_refused_before_the_file_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dataset_id: str
):
    write(tmp_path / "inner", "x.json", rag("x"))
    touched: list[Any] = []
    monkeypatch.setattr("os.scandir", lambda *a: touched.append(a))
    monkeypatch.setattr(Path, "read_bytes", touched.append)
    with pytest.raises(BenchmarkError, match="paths are not accepted") as caught:
        DatasetDirectory([tmp_path / "inner"]).load(dataset_id)
    assert caught.value.code == "BENCHMARK_DATASET_NOT_FOUND"
    assert touched == []


def test_exact_stem_match_only(tmp_path: Path):
    write(tmp_path, "rag-smoke.json", rag())
    write(tmp_path, "rag-smoke.v2.json", rag("rag-smoke.v2"))
    directory = DatasetDirectory([tmp_path])
    for near in ("RAG-smoke", "rag-smoke.v", "rag-smok", "rag-smoke.json"):
        with pytest.raises(BenchmarkError) as caught:
            directory.load(near)
        assert caught.value.code == "BENCHMARK_DATASET_NOT_FOUND"
    assert directory.load("rag-smoke.v2").dataset.dataset_id == "rag-smoke.v2"
    assert directory.load("rag-smoke").path.name == "rag-smoke.json"


def test_later_root_overrides_earlier(tmp_path: Path):
    write(tmp_path / "shipped", "rag-smoke.json", rag(version="1"))
    write(tmp_path / "shipped", "only-shipped.json", rag("only-shipped"))
    write(tmp_path / "project", "rag-smoke.json", rag(version="2"))
    directory = DatasetDirectory([tmp_path / "shipped", tmp_path / "project"])
    loaded = directory.load("rag-smoke")
    assert loaded.dataset.version == "2" and loaded.path.parent.name == "project"
    assert directory.load("only-shipped").dataset.version == "1"
    listed = {item["dataset_id"]: item for item in directory.list()}
    assert listed["rag-smoke"]["version"] == "2"
    # a corrupt override is not silently replaced by the earlier root's file
    write(tmp_path / "project", "rag-smoke.json", b"{")
    with pytest.raises(BenchmarkError, match="not valid JSON"):
        directory.load("rag-smoke")


def test_list_metadata_kind_filter_and_problems(tmp_path: Path):
    rag_path = write(tmp_path, "rag-smoke.json", rag())
    write(tmp_path, "agent-smoke.json", agent())
    write(tmp_path, "bad name.json", rag())  # stem is not an id
    write(tmp_path, "notes.txt", b"not json, not listed")
    (tmp_path / "folder.json").mkdir()  # not a regular file
    directory = DatasetDirectory([tmp_path, tmp_path / "absent"])
    assert directory.list(kind="rag") == [
        {
            "dataset_id": "rag-smoke",
            "kind": "rag",
            "version": "1",
            "description": "",
            "cases": 2,
            "sha256": hashlib.sha256(rag_path.read_bytes()).hexdigest(),
            "location": str(rag_path),
        }
    ]
    assert [item["dataset_id"] for item in directory.list()] == ["agent-smoke", "rag-smoke"]
    assert directory.list(kind="other") == []
    (problem,) = directory.problems()
    assert problem["dataset_id"] == "bad name"
    assert "not a valid dataset id" in problem["message"]


def test_dataset_id_pattern_is_shared():
    assert DATASET_ID.pattern == DATASET_ID_PATTERN


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"kind": "vision"}, "kind: Input should be 'rag' or 'agent'"),
        ({"cases": []}, "a dataset needs at least one case"),
        ({"cases": [1]}, r"case #0: must be an object"),
        ({"extra": 1}, "extra: Extra inputs are not permitted"),
        ({"version": " "}, "version: must not be empty or blank"),
        (
            {"cases": [{"case_id": "q1", "query": "a", "expected_note_ids": ["n"]}] * 2},
            "duplicate case_id 'q1'",
        ),
        (
            {"cases": [{"case_id": "q/1", "query": "a", "expected_note_ids": ["n"]}]},
            r"case #0 \('q/1'\): case_id: String should match pattern",
        ),
        (
            {
                "cases": [
                    {
                        "case_id": "q1",
                        "query": "a",
                        "expected_note_ids": ["n"],
                        "citation_required": "true",
                    }
                ]
            },
            "citation_required: Input should be a valid boolean",
        ),
        (
            {"cases": [{"case_id": "q1", "prompt": "hi"}]},
            r"case #0 \('q1'\): query: Field required",
        ),
    ],
)
def test_schema_errors_name_the_case_and_field(change: dict[str, Any], message: str):
    with pytest.raises(BenchmarkError, match=message) as caught:
        parse_dataset(json.dumps(rag(**change)).encode(), "rag-smoke")
    assert caught.value.code == "BENCHMARK_DATASET_INVALID"


def test_agent_cases_are_validated_as_agent_cases():
    data = agent()
    data["cases"][0]["expected_task_count"] = -1
    with pytest.raises(BenchmarkError, match="expected_task_count: Input should be greater"):
        parse_dataset(json.dumps(data).encode(), "agent-smoke")
    bom = b"\xef\xbb\xbf" + json.dumps(agent()).encode()
    assert isinstance(parse_dataset(bom, "agent-smoke"), BenchmarkDataset)


def test_error_messages_are_single_line_and_bounded():
    error = BenchmarkError("BENCHMARK_DATASET_NOT_FOUND", "a\nb\x00" + "x" * 5000)
    assert "\n" not in str(error) and "\x00" not in str(error)
    assert len(error.message) <= 600
    with pytest.raises(ValueError, match="unknown benchmark error code"):
        BenchmarkError("NOPE", "x")  # type: ignore[arg-type]
