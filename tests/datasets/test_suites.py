"""Suite folders: shipped suites verify, corrupt or mismatched files give specific errors."""

import hashlib
import json

import pytest

from pytest_srbench.app.planning import render_suite
from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.datasets.suites import (
    SuiteError,
    discover_suites,
    load_suite,
    shipped_suites_dir,
)

REGISTRY = default_registry(with_entry_points=False)


def write_suite(root, name, lines: bytes, **meta):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "cases.jsonl").write_bytes(lines)
    data = {
        "benchmark": name,
        "version": "1",
        "source": "t",
        "revision": "r",
        "sha256": hashlib.sha256(lines).hexdigest(),
    }
    data.update(meta)
    (folder / "suite.json").write_text(json.dumps(data))
    return folder


def test_shipped_smoke_suites_load_and_render():
    found = discover_suites([shipped_suites_dir()])
    assert {"mmlu-pro", "gpqa-diamond"} <= set(found)
    mmlu = load_suite(found["mmlu-pro"])
    cases = render_suite(mmlu, REGISTRY.get("mmlu-pro"), 20260918)
    assert len(cases) == 14
    assert len({stratum for _, stratum in cases}) == 14  # one per MMLU-Pro category
    gpqa = render_suite(load_suite(found["gpqa-diamond"]), REGISTRY.get("gpqa-diamond"), 20260918)
    assert len(gpqa) == 4 and all(case.metadata["letters"] == "ABCD" for case, _ in gpqa)


def test_gpqa_shuffle_depends_on_seed_but_is_deterministic():
    suite = load_suite(discover_suites([shipped_suites_dir()])["gpqa-diamond"])
    adapter = REGISTRY.get("gpqa-diamond")
    first = [c.answer for c, _ in render_suite(suite, adapter, 1)]
    assert first == [c.answer for c, _ in render_suite(suite, adapter, 1)]
    answers_by_seed = {
        tuple(c.answer for c, _ in render_suite(suite, adapter, seed)) for seed in range(8)
    }
    assert len(answers_by_seed) > 1


def test_sha_mismatch(tmp_path):
    folder = write_suite(tmp_path, "mmlu-pro", b'{"a": 1}\n', sha256="0" * 64)
    with pytest.raises(SuiteError, match="sha256 mismatch"):
        load_suite(folder)


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (b'{"a": 1}\n{broken\n', "line 2: invalid JSON"),
        (b"[1, 2]\n", "line 1: each line must be a JSON object"),
        (b"\xff\xfe\n", "line 1: not valid UTF-8"),
        (b"\n\n", "holds no cases"),
    ],
)
def test_corrupt_lines(tmp_path, lines, message):
    with pytest.raises(SuiteError, match=message):
        load_suite(write_suite(tmp_path, "mmlu-pro", lines))


def test_a_changed_file_is_reported_as_changed_before_any_bad_row(tmp_path):
    """Rows are read as the file is hashed; a file whose hash is wrong is named changed even
    when a row of it is broken too (the frozen file may not be the one being read)."""
    folder = write_suite(tmp_path, "mmlu-pro", b'{"a": 1}\n{broken\n', sha256="0" * 64)
    with pytest.raises(SuiteError, match="sha256 mismatch"):
        load_suite(folder)


def test_rows_keep_their_line_numbers_across_blank_lines_crlf_and_a_last_unended_line(tmp_path):
    lines = b'{"a": 1}\r\n\n  \n{"a": 2}\r\n{"a": 3}'
    suite = load_suite(write_suite(tmp_path, "mmlu-pro", lines))
    assert [(number, row["a"]) for number, row in suite.rows] == [(1, 1), (4, 2), (5, 3)]
    broken = write_suite(tmp_path / "b", "mmlu-pro", b'{"a": 1}\r\n\n{"a": 2}\n{oops')
    with pytest.raises(SuiteError, match="line 4: invalid JSON"):
        load_suite(broken)


def test_bad_metadata(tmp_path):
    folder = tmp_path / "x"
    folder.mkdir()
    with pytest.raises(SuiteError, match=r"suite\.json: missing"):
        load_suite(folder)
    (folder / "suite.json").write_text("{not json")
    with pytest.raises(SuiteError, match="not valid JSON"):
        load_suite(folder)
    (folder / "suite.json").write_text(json.dumps({"benchmark": "x"}))
    with pytest.raises(SuiteError, match="missing field"):
        load_suite(folder)
    (folder / "suite.json").write_text(
        json.dumps(
            {"benchmark": "y", "version": "1", "source": "s", "revision": "r", "sha256": "0"}
        )
    )
    with pytest.raises(SuiteError, match="differs from the folder name"):
        load_suite(folder)


def test_rows_missing_fields_name_the_line(tmp_path):
    row = {
        "question_id": "1",
        "question": "Q",
        "options": ["a", "b"],
        "answer": "C",
        "category": "c",
    }
    suite = load_suite(write_suite(tmp_path, "mmlu-pro", (json.dumps(row) + "\n").encode()))
    with pytest.raises(SuiteError, match=r"line 1: answer 'C' is not one of the option letters AB"):
        render_suite(suite, REGISTRY.get("mmlu-pro"), 1)
    row2 = {"question_id": "1", "options": ["a", "b"], "answer": "A"}
    suite2 = load_suite(write_suite(tmp_path / "b", "mmlu-pro", (json.dumps(row2) + "\n").encode()))
    with pytest.raises(SuiteError, match="line 1: missing field 'question'"):
        render_suite(suite2, REGISTRY.get("mmlu-pro"), 1)


def test_project_suite_replaces_shipped(tmp_path):
    write_suite(tmp_path, "mmlu-pro", b"{}\n")
    found = discover_suites([shipped_suites_dir(), tmp_path])
    assert found["mmlu-pro"] == tmp_path / "mmlu-pro"


def _suite(folder, revision="r1", origin=None):
    folder.mkdir(parents=True)
    body = b'{"question_id": "1"}\n'
    (folder / "cases.jsonl").write_bytes(body)
    meta = {"benchmark": folder.name.split(".")[0], "version": "1", "source": "s",
            "revision": revision, "sha256": hashlib.sha256(body).hexdigest()}  # fmt: skip
    if origin:
        meta["origin"] = origin
    (folder / "suite.json").write_text(json.dumps(meta))
    return folder


def test_a_synthetic_suite_never_replaces_released_data(tmp_path):
    released = _suite(tmp_path / "a" / "mmlu-pro", origin={"kind": "released"})
    _suite(tmp_path / "b" / "mmlu-pro", revision="synthetic-20260918")
    _suite(tmp_path / "b" / "hle", revision="synthetic-1")
    original = _suite(tmp_path / "a" / "hle", origin={"kind": "original"})
    found = discover_suites([tmp_path / "a", tmp_path / "b"], "quick")
    assert found["mmlu-pro"] == released  # kept, although a later folder has a synthetic one
    assert found["hle"] == tmp_path / "b" / "hle" != original  # later folder wins otherwise
    prepared = _suite(tmp_path / "b" / "mmlu-pro.quick", origin={"kind": "synthetic"})
    assert discover_suites([tmp_path / "a", tmp_path / "b"], "quick")["mmlu-pro"] == prepared


def test_an_opened_suite_reads_its_rows_from_the_file_as_they_are_used(tmp_path):
    """``open_suite`` hashes and counts the file; its rows are parsed as they are iterated
    (as ``load_suite`` reads them), a bad row is named then, and a file changed since it was
    opened is named as changed — also before a row's error while rendering."""
    from pytest_srbench.app.planning import render_suite
    from pytest_srbench.benchmarks.registry import default_registry
    from pytest_srbench.datasets.suites import SuiteRows, open_suite

    lines = b"".join(
        json.dumps({"question_id": str(n), "question": f"q{n}?", "options": ["a", "b"],
                    "answer": "A", "category": "c"}).encode() + b"\n"
        for n in range(5)
    )  # fmt: skip
    folder = write_suite(tmp_path, "mmlu-pro", lines)
    opened = open_suite(folder)
    assert isinstance(opened.rows, SuiteRows) and len(opened.rows) == 5
    assert list(opened.rows) == list(load_suite(folder).rows)
    assert (3, json.loads(lines.splitlines()[2])) in opened.rows
    adapter = default_registry(with_entry_points=False).get("mmlu-pro")
    assert [c.id for c, _ in render_suite(opened, adapter, 1)] == [
        f"mmlu-pro/{n}" for n in range(5)
    ]
    (folder / "cases.jsonl").write_bytes(lines.replace(b'"answer": "A"', b'"answer": "Z"'))
    with pytest.raises(SuiteError, match="sha256 mismatch"):
        list(opened.rows)
    with pytest.raises(SuiteError, match="sha256 mismatch"):  # not the row's own error
        render_suite(opened, adapter, 1)
    wrong = lines.replace(b'"answer": "A"', b'"answer": "Z"', 1)
    bad = write_suite(tmp_path / "bad", "mmlu-pro", wrong)
    with pytest.raises(SuiteError, match=r"line 1: answer 'Z' is not one of"):
        render_suite(open_suite(bad), adapter, 1)
    worse = write_suite(tmp_path / "worse", "mmlu-pro", wrong + b"{oops\n")
    with pytest.raises(SuiteError, match="line 6: invalid JSON"):  # as load_suite says it
        render_suite(open_suite(worse), adapter, 1)
    broken = write_suite(tmp_path / "broken", "mmlu-pro", lines + b"{oops\n")
    with pytest.raises(SuiteError, match="line 6: invalid JSON"):
        list(open_suite(broken).rows)
    with pytest.raises(SuiteError, match="holds no cases"):
        open_suite(write_suite(tmp_path / "empty", "mmlu-pro", b"\n \n"))
