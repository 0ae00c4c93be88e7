"""How a documented block runs (``tests/docs/test_docs_run.py`` says what is run): in a fresh
project folder, offline and keyless, with this environment's ``bin`` first on ``PATH``; every
shell command must exit as documented, a Python block with 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DEV_ONLY_PLUGINS
from tests.docs.blocks import Block, Group, shell_commands

BIN = Path(sys.executable).parent  # the virtual environment's bin (pytest runs from it)
TIMEOUT_S = 300


def environment() -> dict[str, str]:
    """Offline and keyless: no API key reaches a documented command, and the dev-only
    plugins a user's install does not have (schemathesis, hypothesis) stay out."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "COV_", "XDIST_"))
        and not key.endswith(("_API_KEY", "_KEY", "_TOKEN"))
    }
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(BIN.parent)
    env["PYTEST_ADDOPTS"] = DEV_ONLY_PLUGINS
    env["NO_COLOR"] = "1"
    # The RAG examples search the simulator's index with the hashing embedder: loading and
    # running all-MiniLM-L6-v2 costs ~10 s of CPU per run and is tested on its own
    # (tests/retrieval, tests/plugin/test_rag_agent_runs.py); the commands are the same.
    env["SRBENCH_SIM_EMBEDDER"] = "hashing"
    env.pop("PYTHONPATH", None)
    return env


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def write_files(group: Group, folder: Path) -> None:
    """The project's configuration and files, in document order (blocks for the same file are
    appended)."""
    for block in group.blocks:
        target = block.options.get("file")
        if target is None and block.kind == "toml":
            target = "pyproject.toml" if "[tool." in block.text else "srbench.toml"
        if target is None:
            continue
        path = folder / target
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(block.text)


def run_shell(block: Block, folder: Path, env: dict[str, str]) -> None:
    expected = int(block.options.get("exit", "0"))
    commands = shell_commands(block)
    assert commands, f"{block.where}: the shell block holds no command"
    for command in commands:
        try:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{block.where}: `{command}` did not finish in {TIMEOUT_S} s")
        output = done.stdout + done.stderr
        assert done.returncode == expected, (
            f"{block.where}: `{command}` exited {done.returncode} (documented: {expected})\n"
            + _tail(output)
        )
        if expected == 0:
            assert "no tests ran" not in output, (
                f"{block.where}: `{command}` ran nothing\n" + _tail(output)
            )


def run_python(block: Block, folder: Path, env: dict[str, str]) -> None:
    script = folder / f"doc_block_{block.line}.py"
    script.write_text(block.text, encoding="utf-8")
    try:
        done = subprocess.run(
            [str(BIN / "python"), script.name],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: the Python block did not finish in {TIMEOUT_S} s")
    assert done.returncode == 0, (
        f"{block.where}: the Python block failed ({done.returncode})\n"
        + _tail(done.stdout + done.stderr)
    )
