"""Evidence packs: several calls' bytes in one write, each locator exact, offsets known without
asking the file (this process is the pack's only writer), across batches and reopenings."""

from __future__ import annotations

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
