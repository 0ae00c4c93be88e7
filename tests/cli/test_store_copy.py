"""``srbench store copy`` over a real run: a plugin run on the built-in simulator copied from
its SQLite folder into PostgreSQL and back into a new folder reports byte-identically from all
three stores, and its rows are identical; copying it again is a no-op."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess

import pytest

from pytest_srbench.cli.main import main as srbench_main
from pytest_srbench.store import open_store
from pytest_srbench.store.copy import export_run
from tests.cli.helpers import srbench
from tests.zygote_server import new_session_command

pytestmark = pytest.mark.slow


def test_a_run_copied_to_postgres_and_back_reports_identically(tmp_path, postgres_url):
    done = subprocess.run(
        [*new_session_command(), "-p", "no:cacheprovider", "-q",
         "--srbench-profile=smoke", "--srbench-limit=2", "--srbench-benchmark=mmlu-pro",
         "--srbench-json=r.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    run_id = json.loads((tmp_path / "r.json").read_text())["run_id"]

    there = srbench(tmp_path, "store", "copy", ".srbench", postgres_url)
    assert there.returncode == 0, there.stderr
    assert there.stdout.startswith(f"copied {run_id} to postgresql:///")
    back = srbench(tmp_path, "store", "copy", postgres_url, "back", "--run", run_id)
    assert back.returncode == 0, back.stderr
    again = srbench(tmp_path, "store", "copy", postgres_url, "back")
    assert again.returncode == 0 and "(identical): left as it is" in again.stdout

    reports = []
    for store in (".srbench", postgres_url, "back"):  # in this process: srbench's own main
        out = io.StringIO()
        with contextlib.chdir(tmp_path), contextlib.redirect_stdout(out):
            assert srbench_main(["--store", store, "report", run_id, "--format", "json"]) == 0
        reports.append(out.getvalue())
    assert reports[0] == reports[1] == reports[2]
    assert json.loads(reports[0])["run_id"] == run_id
    original = export_run(open_store(tmp_path / ".srbench"), run_id)
    assert export_run(open_store(tmp_path / "back"), run_id) == original
    assert len(original.calls) == 4 and len(original.evidence) == 4


def test_copying_from_a_missing_store_is_one_line(tmp_path):
    done = srbench(tmp_path, "store", "copy", "nowhere", "there")
    assert done.returncode == 2
    assert done.stderr.strip() == "srbench store: no store at nowhere"
    assert not (tmp_path / "there").exists()
