"""The srbench command line over a real store produced by a real run."""

import json
import subprocess
import sys

import pytest


def srbench(cwd, *args):
    return subprocess.run(
        [sys.executable, "-m", "pytest_srbench", *args], cwd=cwd, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--srbench-profile=smoke",
            "--srbench-limit=1",
            "--srbench-benchmark=mmlu-pro",
            "--srbench-benchmark=gpqa-diamond",
            "-q",
        ],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def test_runs_show_and_report(finished_run):
    listing = srbench(finished_run, "runs")
    assert listing.returncode == 0
    run_id = listing.stdout.splitlines()[2].split()[0]
    assert run_id.startswith("run-") and "completed" in listing.stdout
    shown = json.loads(srbench(finished_run, "show", run_id).stdout)
    assert shown["run"]["status"] == "completed" and shown["cells"] == 4
    calls = json.loads(srbench(finished_run, "show", run_id, "--calls", "--limit", "2").stdout)
    assert len(calls["calls"]) == 2 and calls["next_cursor"] is not None
    assert "request" not in calls["calls"][0]
    rest = json.loads(
        srbench(
            finished_run, "show", run_id, "--calls", "--after", str(calls["next_cursor"])
        ).stdout
    )
    assert len(rest["calls"]) == 2 and rest["next_cursor"] is None
    text = srbench(finished_run, "report", run_id)
    assert "sim-large (sim)" in text.stdout
    report = json.loads(srbench(finished_run, "report", run_id, "--format", "json").stdout)
    assert report["run_id"] == run_id and report["summary"]["planned_cells"] == 4


def test_errors_are_specific(finished_run, tmp_path):
    missing = srbench(tmp_path, "runs")
    assert missing.returncode == 2 and "no store at" in missing.stderr
    unknown = srbench(finished_run, "show", "run-nope")
    assert unknown.returncode == 2 and "no run 'run-nope'" in unknown.stderr
    bad = srbench(finished_run, "show", "x", "--calls", "--limit", "501")
    assert bad.returncode == 2 and "--limit must be in 1..500" in bad.stderr
    active = srbench(finished_run, "show", "x", "--active")
    assert active.returncode == 2 and "--active requires --calls" in active.stderr


def test_report_writes_a_self_contained_html_page(finished_run, tmp_path):
    run_id = srbench(finished_run, "runs").stdout.splitlines()[2].split()[0]
    out = tmp_path / "page.html"
    done = srbench(finished_run, "report", run_id, "--html", str(out))
    assert done.returncode == 0, done.stderr
    page = out.read_text()
    assert run_id in page and "default-src 'none'" in page
    assert "http://" not in page.replace("http://127.0.0.1", "") and "https://" not in page
    assert 'id="srbench-data"' in page and "mmlu-pro/" in page
