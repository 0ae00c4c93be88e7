"""Evidence packs: several calls' bytes in one write, each locator exact, offsets known without
asking the file (this process is the pack's only writer), across batches and reopenings."""

from __future__ import annotations

import pytest

from pytest_srbench.store.base import StoreError
from pytest_srbench.store.evidence import EvidencePacks


def test_a_batch_of_evidence_is_one_append_with_exact_locators(tmp_path):
    packs = EvidencePacks(tmp_path)
    run_dir = tmp_path / "runs" / "r1"
    blobs = [b"data: one\n\n", b"", b"data: three \xe2\x9c\x93\n\n"]
    first = packs.append_many(run_dir, blobs)
    second = packs.append(run_dir, b"data: four\n\n")
    packs.close()
    reopened = EvidencePacks(tmp_path)  # the same process: the same pack, appended to
    third = reopened.append(run_dir, b"data: five\n\n")
    for locator, data in zip(
        [*first, second, third],
        [*blobs, b"data: four\n\n", b"data: five\n\n"],
        strict=True,
    ):
        assert reopened.read(locator) == data
    assert [locator["offset"] for locator in first] == [0, 11, 11]
    assert third["offset"] == sum(map(len, blobs)) + len(b"data: four\n\n")
    assert len({locator["pack"] for locator in [*first, second, third]}) == 1
    reopened.close()


def test_reads_keep_one_descriptor_per_pack_and_see_bytes_appended_since(tmp_path):
    """A pack is opened once for reading (a cached run reads a slice per cell) and still
    serves a slice appended after it was opened; past ``READERS`` packs the oldest closes."""
    packs = EvidencePacks(tmp_path)
    packs.READERS = 2
    first = packs.append(tmp_path / "runs" / "a", b"data: a1\n\n")
    assert packs.read(first) == b"data: a1\n\n"
    later = packs.append(tmp_path / "runs" / "a", b"data: a2\n\n")
    assert packs.read(later) == b"data: a2\n\n"
    others = [packs.append(tmp_path / "runs" / name, name.encode()) for name in ("b", "c")]
    assert [packs.read(locator) for locator in others] == [b"b", b"c"]
    assert len(packs._readers) == 2 and first["pack"] not in packs._readers
    assert packs.read(first) == b"data: a1\n\n"  # opened again
    short = {**first, "length": 999}
    with pytest.raises(StoreError, match="shorter than its locator"):
        packs.read(short)
    packs.close()
    assert packs._readers == {}


def test_descriptors_of_a_dropped_reader_are_closed(tmp_path):
    import gc
    import os

    writer = EvidencePacks(tmp_path)
    locator = writer.append(tmp_path / "runs" / "a", b"data\n\n")
    reader = EvidencePacks(tmp_path)
    assert reader.read(locator) == b"data\n\n"
    (fd,) = reader._readers.values()
    del reader
    gc.collect()
    with pytest.raises(OSError):
        os.fstat(fd)
    writer.close()
