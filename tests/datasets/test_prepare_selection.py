"""Suite files and seeded selection: canonical bytes, determinism, profile blocks, limits, atomicity."""

from __future__ import annotations

import hashlib
import json

import pytest

from pytest_srbench.core.canonical import canonical_json, digest
from pytest_srbench.datasets.prepare import load_prepared, prepare
from tests.datasets.source_builders import SEED, gpqa_csv, run, scicode_row, write_jsonl


def test_suite_json_fields_and_canonical_lines(tmp_path):
    summary, rows = run("gpqa-diamond", gpqa_csv(tmp_path / "g.csv", 10), tmp_path)
    folder = summary.folder
    body = (folder / "cases.jsonl").read_bytes()
    assert body == b"".join(canonical_json(r).encode() + b"\n" for r in rows)
    meta = json.loads((folder / "suite.json").read_text())
    source_sha = hashlib.sha256((tmp_path / "g.csv").read_bytes()).hexdigest()
    assert meta == {
        "benchmark": "gpqa-diamond", "version": "1", "source": "GPQA CSV: g.csv", "revision": "r1",
        "sha256": hashlib.sha256(body).hexdigest(), "count": 4, "license": "CC-BY-4.0",
        "profiles": {"smoke": 4},
        "prepared": {"profile": "smoke", "seed": SEED, "selection": "stratified-hash-v1", "limit": None,
                     "custom_subset": False, "split": "dev", "source_rows": 10, "dropped": {},
                     "source_files": [{"name": "g.csv", "sha256": source_sha}]},
        # files a user supplied: named (never by an absolute path) and hashed, not verifiable
        "origin": {"kind": "user", "source": "g.csv", "files": {"g.csv": source_sha}},
    }  # fmt: skip
    assert not (tmp_path / "suites" / ".staging").exists()


def test_same_seed_gives_identical_bytes_and_other_seed_another_order(tmp_path):
    source = gpqa_csv(tmp_path / "g.csv", 60)
    first = prepare(
        "gpqa-diamond", source, revision="r", profile="quick", seed=SEED, output_root=tmp_path / "a"
    )
    second = prepare(
        "gpqa-diamond", source, revision="r", profile="quick", seed=SEED, output_root=tmp_path / "b"
    )
    for name in ("cases.jsonl", "suite.json"):
        assert (first.folder / name).read_bytes() == (second.folder / name).read_bytes()
    third = prepare(
        "gpqa-diamond",
        source,
        revision="r",
        profile="quick",
        seed=SEED + 1,
        output_root=tmp_path / "c",
    )
    assert third.sha256 != first.sha256


def test_order_is_the_plan_order_of_case_ids(tmp_path):
    source = write_jsonl(tmp_path / "s.jsonl", [scicode_row(str(n)) for n in range(10, 40)])
    _, rows = run("scicode", source, tmp_path, profile="standard")
    expected = sorted((str(n) for n in range(10, 40)), key=lambda i: digest([SEED, f"scicode/{i}"]))
    assert [r["problem_id"] for r in rows] == expected[3:23]  # the block after the 3 quick cases


def test_smoke_in_quick_and_standard_disjoint(tmp_path):
    source = gpqa_csv(tmp_path / "g.csv", 200)
    ids = {}
    for profile in ("smoke", "quick", "standard"):
        _, rows = run("gpqa-diamond", source, tmp_path, profile=profile)
        ids[profile] = [r["record_id"] for r in rows]
    assert [len(ids[p]) for p in ("smoke", "quick", "standard")] == [4, 40, 158]
    assert ids["quick"][:4] == ids["smoke"]
    assert not set(ids["standard"]) & set(ids["quick"])
    standard = load_prepared(tmp_path / "suites" / "gpqa-diamond.standard").meta["prepared"]
    assert standard["split"] == "holdout" and standard["profile"] == "standard"


def test_shortfall_says_needed_and_available(tmp_path):
    source = gpqa_csv(tmp_path / "g.csv", 50)
    with pytest.raises(
        ValueError, match=r"needs 198 rows .* has 50 usable; pass --limit K with K <= 10"
    ):
        prepare(
            "gpqa-diamond", source, revision="r", profile="standard", output_root=tmp_path / "o"
        )
    assert not (tmp_path / "o" / "gpqa-diamond.standard").exists()


def test_limit_marks_custom_subset_and_keeps_the_prefix(tmp_path):
    source = gpqa_csv(tmp_path / "g.csv", 60)
    _, full = run("gpqa-diamond", source, tmp_path, profile="quick")
    summary, limited = run(
        "gpqa-diamond", source, tmp_path, profile="quick", limit=7, output_root=tmp_path / "l"
    )
    assert limited == full[:7] and summary.custom_subset
    prepared = load_prepared(summary.folder).meta["prepared"]
    assert prepared["limit"] == 7 and prepared["custom_subset"] is True
    assert load_prepared(summary.folder).meta["profiles"] == {"quick": 7}


def test_prepare_again_replaces_atomically(tmp_path, monkeypatch):
    source = gpqa_csv(tmp_path / "g.csv", 60)
    first, _ = run("gpqa-diamond", source, tmp_path)
    second, _ = run("gpqa-diamond", source, tmp_path, seed=SEED + 5)
    assert (
        second.sha256 != first.sha256
        and load_prepared(second.folder).meta["prepared"]["seed"] == SEED + 5
    )

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("pytest_srbench.datasets.prepare.os.fsync", broken_fsync)
    with pytest.raises(OSError, match="No space"):
        run("gpqa-diamond", source, tmp_path, seed=SEED + 9)
    assert load_prepared(second.folder).meta["sha256"] == second.sha256  # the old suite is intact
    assert not (tmp_path / "suites" / ".staging").exists()
    assert sorted(p.name for p in (tmp_path / "suites").iterdir()) == ["gpqa-diamond.smoke"]
