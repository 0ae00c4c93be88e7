"""A managed server's scratch folder: removed when it stops; kept, and named by the error,
when it does not start (a real process that exits at once stands in for the server)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_srbench.managed import llama
from pytest_srbench.managed.common import RealPartError

EXITS = Path(sys.executable)  # `python -m m.gguf ...` fails at once: an exiting server


def test_a_server_that_does_not_start_keeps_the_log_its_error_names():
    server = llama.LlamaServer(binary=EXITS, model=Path("m.gguf"), threads=1)
    with pytest.raises(RealPartError, match=r"its log: .*srbench-llama-.*llama-server\.log"):
        server.start(timeout_s=30)
    assert server.scratch_dir is not None and server.log_path is not None
    assert server.log_path.exists() and server.log_path.read_bytes()  # what the server said
    server.stop()  # the caller is done with it
    assert not server.scratch_dir.exists()


def test_a_server_given_a_log_path_has_no_scratch_and_its_log_stays(tmp_path):
    log = tmp_path / "server.log"
    server = llama.LlamaServer(binary=EXITS, model=Path("m.gguf"), threads=1, log_path=log)
    with pytest.raises(RealPartError, match=r"its log: .*server\.log"):
        server.start(timeout_s=30)
    server.stop()
    assert server.scratch_dir is None and log.exists()
