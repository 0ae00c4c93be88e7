"""The srbench command line over a real store produced by a real run."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

from tests.cli.helpers import srbench
from tests.permissions import make_read_only, make_writable, unprivileged

# one worker makes the module's runs once
pytestmark = pytest.mark.xdist_group("cli-finished-run")


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


def run_id_of(root):
    return srbench(root, "runs").stdout.splitlines()[2].split()[0]


def one_line(stderr: str, prefix: str = "srbench") -> str:
    """A mistake is one line on stderr, never a traceback."""
    lines = [line for line in stderr.splitlines() if line.startswith(prefix)]
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("report", "{run}", "--json", "/"), "srbench report: cannot write /: it is a directory"),
        (("report", "{run}", "--html", "afile/r.html"), "afile/r.html: afile is a file, not"),
        (("recover-plan", "{run}", "--output", "afile/p.json"), "afile is a file, not a folder"),
        (("export", "{run}", "--output", "{tmp}/afile/x.json"), "afile is a file, not a folder"),
    ],
    ids=["report-json-dir", "report-html", "recover-plan", "export"],
)
def test_an_unwritable_output_path_is_one_line(finished_run, tmp_path, args, message):
    (finished_run / "afile").write_text("a file")
    (tmp_path / "afile").write_text("a file")
    run = run_id_of(finished_run)
    done = srbench(finished_run, *[a.format(run=run, tmp=tmp_path) for a in args])
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in one_line(done.stderr)
    assert (finished_run / "afile").read_text() == "a file"


@pytest.fixture
def store_copy(finished_run, tmp_path):
    """A copy of the finished run's project (a test may lock it or make it read-only)."""
    root = tmp_path / "copy"
    shutil.copytree(finished_run / ".srbench", root / ".srbench")
    return root


def test_a_read_only_store_lists_and_reads_and_refuses_writes_in_one_line(store_copy):
    run = run_id_of(store_copy)
    store = store_copy / ".srbench"
    make_read_only(store)
    try:

        def as_reader(*args):
            command = unprivileged([sys.executable, "-m", "pytest_srbench", *args])
            return subprocess.run(command, cwd=store_copy, capture_output=True, text=True)

        listing, shown, report = as_reader("runs"), as_reader("show", run), as_reader("report", run)
        written = as_reader("reconcile-usage", run)
    finally:
        make_writable(store)
    for done in (listing, shown, report):
        assert done.returncode == 0, done.stderr
        assert one_line(done.stderr) == (
            "srbench: note: the store .srbench is read-only; opened for reading (runs left "
            "running by a stopped process are not marked interrupted)"
        )
    assert run in listing.stdout and json.loads(shown.stdout)["run"]["status"] == "completed"
    assert "sim-large (sim)" in report.stdout
    assert written.returncode == 2
    assert "srbench reconcile-usage: the store .srbench is read-only: listing and reading runs work, but this " \
        "needs to write to it" in written.stderr and "Traceback" not in written.stderr  # fmt: skip


def test_a_store_locked_longer_than_the_busy_timeout_is_one_line(store_copy):
    run = run_id_of(store_copy)
    holder = sqlite3.connect(store_copy / ".srbench" / "journal.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's write transaction, held throughout
    env = {**os.environ, "SRBENCH_BUSY_TIMEOUT_S": "0.2"}
    try:
        listing = subprocess.run(
            [sys.executable, "-m", "pytest_srbench", "runs"],
            cwd=store_copy, capture_output=True, text=True, env=env,
        )  # fmt: skip
        written = subprocess.run(
            [sys.executable, "-m", "pytest_srbench", "reconcile-usage", run],
            cwd=store_copy, capture_output=True, text=True, env=env,
        )  # fmt: skip
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert listing.returncode == 0 and run in listing.stdout, listing.stderr  # reading works
    assert written.returncode == 2
    assert one_line(written.stderr).startswith(
        "srbench reconcile-usage: the store .srbench is locked by another process (waited 0.2 s for it)"
    )


def test_a_store_url_is_refused_without_printing_its_password(tmp_path):
    done = srbench(tmp_path, "--store", "postgresql://me:hunter2@db.example/x", "runs")
    assert done.returncode == 2 and "hunter2" not in done.stdout + done.stderr
    assert one_line(done.stderr) == (
        "srbench runs: the store location postgresql://… holds a password: give it in the "
        "environment (PGPASSWORD), in ~/.pgpass, or in a libpq service file "
        "(postgresql:///?service=NAME), never in the location"
    )
    other = srbench(tmp_path, "--store", "mysql://me:hunter2@db.example/x", "runs")
    assert other.returncode == 2 and "hunter2" not in other.stdout + other.stderr
    assert one_line(other.stderr) == (
        "srbench runs: store URL mysql://…: a store is a local folder or a postgresql:// database"
    )


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback(finished_run):
    """`srbench runs | head`: the reader is gone before the first line is written."""
    for args in (["runs"], ["show", run_id_of(finished_run), "--calls"]):
        read_end, write_end = os.pipe()
        os.close(read_end)  # the reader closed early
        try:
            done = subprocess.run(
                [sys.executable, "-m", "pytest_srbench", *args],
                cwd=finished_run, stdout=write_end, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        finally:
            os.close(write_end)
        assert done.returncode == 141 and done.stderr == "", done.stderr  # 128 + SIGPIPE


def test_runs_lists_a_failed_runs_error_code_and_its_text(tmp_path, finished_run):
    """The code alone (``BENCHMARK_RUN_FAILED``) tells a reader nothing: the text is listed
    beside it."""
    root = tmp_path / "copy"
    shutil.copytree(finished_run, root)
    run_id = srbench(root, "runs").stdout.splitlines()[2].split()[0]
    from pytest_srbench.store import open_store

    store = open_store(str(root / ".srbench"))
    try:
        store.set_run_status(run_id, "interrupted", "Runner process stopped (pid 4242)")
    finally:
        store.close()
    listing = srbench(root, "runs")
    assert listing.returncode == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if line.startswith(run_id))
    assert "BENCHMARK_RUN_FAILED: Runner process stopped (pid 4242)" in row
