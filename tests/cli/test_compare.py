"""`srbench compare` over real runs in a real store and over JSON report files."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import subprocess
from pathlib import Path

import pytest

from tests.cli.helpers import srbench
from tests.zygote_server import new_session_command


def pytest_run(cwd: Path, *args: str) -> None:
    done = subprocess.run(
        [*new_session_command(), "-p", "no:cacheprovider", "-q",
         "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
         "--srbench-benchmark=gpqa-diamond", *args],
        cwd=cwd, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


# one worker makes the module's runs once
pytestmark = pytest.mark.xdist_group("cli-compare-runs")


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("compare")
    for name in ("a", "b", "c"):
        pytest_run(root, f"--srbench-json={name}.json")
    runs = [json.loads((root / f"{n}.json").read_text())["run_id"] for n in ("a", "b", "c")]
    return root, runs


def digest_tree(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_compare_runs_in_the_store_is_read_only(three_runs):
    root, (a, b, c) = three_runs
    before = digest_tree(root / ".srbench")
    done = srbench(root, "compare", a, c, b, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert digest_tree(root / ".srbench") == before  # byte-identical store
    result = json.loads(done.stdout)
    assert result["baseline_run_id"] == a
    # candidates are ordered by creation time, not by the command line
    assert [r["candidate_run_id"] for r in result["candidates"]] == [b, c]
    first = result["candidates"][0]
    assert first["baseline_selected_target_id"] == "sim-large"
    assert first["quality_denominator"].startswith("all_planned_cases")
    for row in first["comparisons"]:
        assert row["quality_delta_ci95_method"] == "weighted-paired-hoeffding"
        assert row["paired_statistics"]["stratified_newcombe_ci95"][0] < 0
        assert row["paired_statistics"]["stratified_wald_ci95"][0] < 0
    same = {r["candidate_target_id"]: r for r in first["comparisons"]}["sim-large"]
    assert same["quality_delta"] == 0 and same["losses"] == 0  # the simulator is deterministic
    assert same["subject_cost_saving_percent"] == pytest.approx(0, abs=1e-9)
    points = result["frontier"]["points"]
    assert {p["run_id"] for p in points} == {a, b, c}
    assert any(p["on_frontier"] for p in points)


def test_compare_text_and_csv_outputs_from_report_files(three_runs, tmp_path):
    root, (a, b, _) = three_runs
    out_csv = tmp_path / "cmp.csv"
    done = srbench(root, "compare", "a.json", "b.json", "--csv", str(out_csv), "--margin", "0.1")
    assert done.returncode == 0, done.stderr
    assert "gate 95%" in done.stdout and "cost–quality frontier" in done.stdout
    assert f"baseline {a}" in done.stdout
    rows = list(csv.DictReader(io.StringIO(out_csv.read_text())))
    assert [r["candidate_target_id"] for r in rows] == ["sim-large", "sim-small"]
    assert {r["margin"] for r in rows} == {"0.1"}
    assert rows[0]["candidate_run_id"] == b


def test_compare_errors_are_specific(three_runs, tmp_path):
    root, (a, _, _) = three_runs
    missing = srbench(root, "compare", a, "run-nope")
    assert missing.returncode == 2
    assert "'run-nope' is neither a report file nor a run" in missing.stderr
    same = srbench(root, "compare", a, a)
    assert same.returncode == 2 and "Choose two distinct runs" in same.stderr
    corrupt = tmp_path / "corrupt.json"
    corrupt.write_text('{"run_id": 1')
    bad = srbench(root, "compare", a, str(corrupt))
    assert bad.returncode == 2 and "not a JSON report" in bad.stderr
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"run_id": "x"}))
    wrong = srbench(root, "compare", a, str(partial))
    assert wrong.returncode == 2 and "not a pytest-srbench report" in wrong.stderr
    margin = srbench(root, "compare", a, a, "--margin", "2")
    assert margin.returncode == 2 and "--margin must be in (0, 1)" in margin.stderr


def test_compare_rejects_another_protocol(three_runs):
    root, (a, _, _) = three_runs
    pytest_run(root, "--srbench-json=other.json", "--srbench-limits", "max_output_chars=4096")
    done = srbench(root, "compare", a, "other.json")
    assert done.returncode == 2
    assert "Cannot compare runs with different limits" in done.stderr
