"""A damaged store file is one line naming it and what to do (issue 47, point 5): a corrupt
SQLite header and a truncated file ended in a raw traceback (``srbench``) or an INTERNALERROR
(pytest). Real SQLite files, a real pytest session and the real CLI, in subprocesses."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

RUN = ("-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro")
ROOT = Path(__file__).resolve().parents[2]


def damage(store: Path, how: str) -> Path:
    store.mkdir(parents=True, exist_ok=True)
    path = store / "journal.sqlite3"
    if how == "header":
        path.write_bytes(b"not a database, just bytes" * 400)
    else:  # a real database with several pages, cut after its first kilobyte
        connection = sqlite3.connect(path)
        connection.execute("CREATE TABLE filler (x TEXT)")
        connection.executemany("INSERT INTO filler VALUES (?)", [("x" * 500,)] * 100)
        connection.commit()
        connection.close()
        path.write_bytes(path.read_bytes()[:1000])
    return path


@pytest.mark.parametrize("how", ["header", "truncated"])
def test_the_cli_names_the_damaged_file(tmp_path, how):
    path = damage(tmp_path / "store", how)
    done = subprocess.run(
        [sys.executable, "-m", "pytest_srbench", "--store", str(tmp_path / "store"), "runs"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"the store file {path} is damaged or truncated" in line
    assert "move it aside (or restore it from a copy)" in line


@pytest.mark.slow
@pytest.mark.parametrize("how", ["header", "truncated"])
def test_a_pytest_session_names_the_damaged_file(pytester, how):
    path = damage(pytester.path / ".srbench", how)
    result = pytester.runpytest_subprocess(*RUN, "--srbench-limit=1")
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    lines = [line for line in output.splitlines() if "pytest-srbench:" in line]
    assert len(lines) == 1, output
    assert "is damaged or truncated" in lines[0] and path.name in lines[0]
