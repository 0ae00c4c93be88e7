"""What the service says in public: no server path in a message, loopback hosts recognised,
and a failed worker's reason read from its log."""

from __future__ import annotations

import pytest

from pytest_srbench.core.benchmark_errors import without_paths
from pytest_srbench.service.guard import error_body, is_loopback_host
from pytest_srbench.service.worker import read_log, worker_failure


@pytest.mark.parametrize(
    ("text", "public"),
    [
        ("no suite (searched: /srv/a/pytest_srbench/suites, /tmp/x/suites)",
         "no suite (searched: …/suites, …/suites)"),
        ("/home/me/proj/pyproject.toml: invalid [tool.srbench]",
         "…/pyproject.toml: invalid [tool.srbench]"),
        ('File "/usr/lib/x.py", line 3', 'File "…/x.py", line 3'),
        ("http://127.0.0.1:8765/v1/chat/completions failed", "http://127.0.0.1:8765/v1/chat/completions failed"),
        ("ratio 1/2, a/b/c and ~/notes", "ratio 1/2, a/b/c and ~/notes"),
    ],
)  # fmt: skip
def test_absolute_paths_are_cut_to_their_last_part(text, public):
    assert without_paths(text) == public


def test_every_error_body_leaves_paths_out():
    body = error_body("BENCHMARK_PLAN_INVALID", "no suite in /opt/app/suites\nsecond line")
    assert body["error"]["message"] == "no suite in …/suites second line"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1:8765", True), ("localhost", True), ("LOCALHOST:80", True), ("[::1]:8765", True),
     ("127.9.9.9", True), ("::1", True), ("evil.example", False), ("evil.example:8765", False),
     ("localhost.evil.example", False), ("10.0.0.1:80", False), ("", False), ("[::1", False)],
)  # fmt: skip
def test_loopback_hosts(host, loopback):
    assert is_loopback_host(host) is loopback


def test_a_worker_failure_is_its_last_told_error_without_paths(tmp_path):
    log = tmp_path / "worker.log"
    log.write_text(
        "ERROR: usage: python -m pytest [options]\n"
        "python -m pytest: error: argument --srbench-limits: expected KEY=VALUE, got 'x'\n"
        "  rootdir: /srv/project\n"
    )
    reason = worker_failure(log, 4)
    assert reason == (
        "the run's worker ended (exit code 4) before it started the run: python -m pytest: "
        "error: argument --srbench-limits: expected KEY=VALUE, got 'x'"
    )
    log.write_text("ERROR: pytest-srbench: /srv/project/pyproject.toml: invalid\n")
    assert worker_failure(log, 4).endswith("ERROR: pytest-srbench: …/pyproject.toml: invalid")
    assert worker_failure(tmp_path / "missing.log", -9) == (
        "the run's worker ended (exit code -9) before it started the run"
    )


def test_a_worker_log_is_read_in_whole_lines_without_paths_or_keys(tmp_path):
    log = tmp_path / "worker.log"
    lines = ["rootdir: /srv/project/deep\n", "key sk-live-0123456789 echoed\n", "x" * 30 + "\n",
             "unfinished"]  # fmt: skip
    log.write_text("".join(lines))
    size = log.stat().st_size
    whole = read_log(log, 0, 1000, ["sk-live-0123456789"])
    assert whole["text"] == ("rootdir: …/deep\nkey [REDACTED] echoed\n" + "x" * 30 + "\n"
                             "unfinished")  # fmt: skip
    assert (whole["offset"], whole["next_offset"], whole["size"]) == (0, size, size)
    first = read_log(log, 0, 40, [])  # ends after its last whole line
    assert first["text"] == "rootdir: …/deep\n" and first["next_offset"] == len(lines[0])
    inside = read_log(log, 5, 1000, [])  # an offset inside a line starts at the line's start
    assert inside["offset"] == 0 and inside["text"].startswith("rootdir: …/deep")
    tail = read_log(log, None, 45, [])  # the tail drops its partial first line
    assert tail["text"] == "x" * 30 + "\nunfinished" and tail["next_offset"] == size
    assert read_log(tmp_path / "none.log", None, 10, []) == {
        "text": "", "offset": 0, "next_offset": 0, "size": 0}  # fmt: skip
