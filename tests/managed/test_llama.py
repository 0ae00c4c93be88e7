"""llama-server's command line as the plugin builds it (no server started here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_srbench.managed import llama


@pytest.mark.parametrize(("usable", "expected"), [(1, 1), (2, 1), (8, 7)])
def test_threads_default_to_the_usable_cores_less_one(monkeypatch, usable, expected):
    monkeypatch.setattr(llama.os, "sched_getaffinity", lambda _pid: set(range(usable)))
    assert llama.default_threads() == expected
    server = llama.LlamaServer(binary=Path("llama-server"), model=Path("m.gguf"))
    assert server.command()[server.command().index("-t") + 1] == str(expected)


def test_configured_threads_are_passed_as_given():
    server = llama.LlamaServer(binary=Path("llama-server"), model=Path("m.gguf"), threads=3)
    command = server.command()
    assert command[command.index("-t") + 1] == "3"
