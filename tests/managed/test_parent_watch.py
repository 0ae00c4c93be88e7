"""A managed llama-server exits when the process that started it is killed with SIGKILL."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.process_helpers import DEADLINE_S, alive, descendants, identities, wait_all_gone
from tests.real_parts import require_llama_parts

pytestmark = [
    pytest.mark.realmodel,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc"),
]

PARENT = """
import sys, time
from pathlib import Path
from pytest_srbench.managed.llama import start_llama_server
server = start_llama_server(log_dir=Path(sys.argv[1]))
print(server.process.pid, flush=True)
time.sleep(600)
"""


def test_sigkill_of_the_starting_process_stops_llama_server(tmp_path):
    require_llama_parts()  # skipped with the reason when absent, failed under CI
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        server = int(parent.stdout.readline())  # printed once /health answered
        tree = identities(descendants(parent.pid))
        assert server in tree and alive(server, tree[server])
        assert any("llama-server" in command for command in descendants(parent.pid).values())
        parent.kill()
        parent.wait(timeout=DEADLINE_S)
        wait_all_gone(tree)
    finally:
        parent.kill()
        parent.wait(timeout=DEADLINE_S)
