"""Nothing hangs: a plain ``def`` body still blocked after its cell's deadline is abandoned
(the cell fails with the deadline's reason) and the session's process exits."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.slow

BLOCKED = """
import socket
import time

import pytest


@pytest.mark.srbench("mmlu-pro")
def test_sleeps(srbench_case, srbench_target):
    time.sleep(3600)


@pytest.mark.srbench("gpqa-diamond")
def test_reads_a_silent_socket(srbench_case, srbench_target):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    client = socket.create_connection(server.getsockname())
    client.recv(1)  # nobody ever writes
"""


def test_a_body_blocked_past_its_deadline_is_abandoned_and_the_process_exits(pytester):
    pytester.makepyfile(test_blocked=BLOCKED)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:randomly", "--srbench-profile=smoke",
        "--srbench-limit=1", "--srbench-target=sim-large", "--srbench-limits",
        "case_timeout_s=2", "test_blocked.py", timeout=180,
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()[-3000:]
    result.assert_outcomes(failed=2)
    output = result.stdout.str()
    # One failure section per cell (its one line); the short summary may repeat the reason,
    # cut to the terminal's width.
    reasons = re.findall(
        r"^test_blocked\.py::.* — cancelled: case deadline exceeded \(case_timeout_s\)$",
        output,
        re.M,
    )
    assert len(reasons) == 2, output[-3000:]
