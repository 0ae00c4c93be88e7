"""Parquet releases read with pyarrow: real column names and types become record fields; a
file that is not parquet, or a missing pyarrow, is a clear error."""

from __future__ import annotations

import sys

import pytest

from pytest_srbench.datasets.formats import FORMATS
from pytest_srbench.datasets.formats._common import DatasetError, read_records, records_from
from tests.datasets.releases import hle, mmlu_pro
from tests.optional import import_extra

pa = import_extra("pyarrow", "fetch")
pq = import_extra("pyarrow.parquet", "fetch")


def test_parquet_rows_keep_their_names_and_types(tmp_path):
    path = tmp_path / "t.parquet"
    table = pa.table({"id": pa.array([1, 2], pa.int64()),
                      "options": pa.array([["a", "b"], []], pa.list_(pa.string())),
                      "blob": pa.array([b"\x00", None], pa.binary())})  # fmt: skip
    pq.write_table(table, path)
    records = read_records(path)
    assert [r.data for r in records] == [
        {"id": 1, "options": ["a", "b"], "blob": b"\x00"},
        {"id": 2, "options": [], "blob": None},
    ]
    assert records[1].where == f"{path} row 2"


def test_a_folder_of_parquet_shards_is_read_in_name_order(tmp_path):
    (tmp_path / "test-00001-of-00002.parquet").write_bytes(mmlu_pro(2))
    (tmp_path / "test-00000-of-00002.parquet").write_bytes(mmlu_pro(3))
    files, records = records_from(tmp_path)
    assert [f.name for f in files] == ["test-00000-of-00002.parquet", "test-00001-of-00002.parquet"]
    assert len(records) == 5


def test_mmlu_pro_and_hle_convert_from_parquet(tmp_path):
    (tmp_path / "mmlu.parquet").write_bytes(mmlu_pro(3))
    rows = FORMATS["mmlu-pro"].convert(tmp_path / "mmlu.parquet").rows
    assert rows[0]["options"] == [str(3 + i) for i in range(10)] and rows[0]["answer"] == "A"
    assert [r["question_id"] for r in rows] == ["7000", "7001", "7002"]
    (tmp_path / "hle.parquet").write_bytes(hle(2))
    conversion = FORMATS["hle"].convert(tmp_path / "hle.parquet")
    assert [r["id"] for r in conversion.rows] == ["hle0000", "hle0001"]
    assert conversion.dropped == {"image": 1}


def test_a_file_that_is_not_parquet_is_named(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(DatasetError, match=r"broken.parquet: not a readable parquet file"):
        read_records(path)


def test_without_pyarrow_the_error_says_what_to_install(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    path.write_bytes(mmlu_pro(1))
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(DatasetError, match=r"pip install 'pytest-srbench\[fetch\]'"):
        read_records(path)
