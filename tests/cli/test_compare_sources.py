"""`srbench compare` across data sources over real runs: the same items once as the shipped
originals and once as the project's own suite are refused (both sources named), compared and
flagged in text, JSON, CSV and HTML with --allow-mixed-sources; a report written before data
origins still compares."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_srbench.datasets.suites import shipped_suites_dir
from tests.cli.helpers import srbench
from tests.zygote_server import new_session_command

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cli-compare-sources")]


def pytest_run(cwd: Path, name: str) -> None:
    done = subprocess.run(
        [*new_session_command(), "-p", "no:cacheprovider", "-q",
         "--srbench-profile=smoke", "--srbench-benchmark=gpqa-diamond",
         "--srbench-target=sim-large", f"--srbench-json={name}"],
        cwd=cwd, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def two_sources(tmp_path_factory) -> Path:
    """original.json over the shipped gpqa-diamond items; user.json over the same items copied
    into the project's suites/ (a suite that says no origin: the user's)."""
    root = tmp_path_factory.mktemp("sources")
    pytest_run(root, "original.json")
    folder = root / "suites" / "gpqa-diamond"
    shutil.copytree(shipped_suites_dir() / "gpqa-diamond", folder)
    meta = json.loads((folder / "suite.json").read_text())
    del meta["origin"]
    meta["source"] = "our gpqa copy"
    (folder / "suite.json").write_text(json.dumps(meta))
    pytest_run(root, "user.json")
    return root


def test_compare_across_sources_is_refused_naming_both(two_sources):
    done = srbench(two_sources, "compare", "original.json", "user.json")
    assert done.returncode == 2
    assert (
        "srbench compare: Cannot compare runs whose cases come from different data sources: "
        "gpqa-diamond is original: original smoke items written for pytest-srbench in the "
        "baseline run-"
    ) in done.stderr
    assert "but user: our gpqa copy in the candidate run-" in done.stderr
    assert "(different kinds of data); allow mixed sources explicitly" in done.stderr
    assert done.stdout == ""


def test_allowed_mixed_sources_are_flagged_in_every_format(two_sources, tmp_path):
    page, table = tmp_path / "cmp.html", tmp_path / "cmp.csv"
    done = srbench(two_sources, "compare", "original.json", "user.json", "--allow-mixed-sources",
                   "--html", str(page), "--csv", str(table))  # fmt: skip
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("!!! run-") and "MIXED DATA SOURCES" in first
    assert "gpqa-diamond: baseline original: original smoke items" in first
    assert "candidate user: our gpqa copy (different kinds of data)" in first
    as_json = srbench(two_sources, "compare", "original.json", "user.json",
                      "--allow-mixed-sources", "--format", "json")  # fmt: skip
    result = json.loads(as_json.stdout)
    assert result["mixed_sources"] is True
    assert result["candidates"][0]["data_sources"]["differences"][0]["benchmark"] == (
        "gpqa-diamond"
    )
    assert {
        row["mixed_data_sources"] for row in csv.DictReader(io.StringIO(table.read_text()))
    } == {"True"}
    html = page.read_text()
    assert 'id="mixed-sources"' in html and "MIXED DATA SOURCES" in html


def test_a_report_without_data_sources_still_compares(two_sources, tmp_path):
    report = json.loads((two_sources / "original.json").read_text())
    del report["data_sources"]
    del report["plan"]["data_sources"]
    for row in report["benchmarks"]:
        del row["data_source"]
    for target in report["summary"]["targets"]:
        del target["score_comparable"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(report))
    done = srbench(two_sources, "compare", str(old), "user.json", "--format", "json")
    assert done.returncode == 0, done.stderr
    sources = json.loads(done.stdout)["candidates"][0]["data_sources"]
    assert (sources["baseline_kind"], sources["candidate_kind"], sources["mixed"]) == (
        "unknown", "user", False
    )  # fmt: skip
